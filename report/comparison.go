package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/verdict"
)

// Comparison writes a comparison of two runs (tandem compare) in format,
// one of the formats that render ForComparison.
func Comparison(w io.Writer, format string, c verdict.Comparison) error {
	f, ok := LookupFormat(format, ForComparison)
	if !ok {
		return fmt.Errorf("format %q: want %s", format, FormatList(ForComparison))
	}
	return f.Comparison(w, c)
}

// changeText says a change in words: a speed verdict with how much worse
// or better the head is, any other verdict with its reason. An
// indistinguishable pair shows no number, as everywhere.
func changeText(ch verdict.Change) string {
	switch ch.Verdict {
	case stats.Faster, stats.Slower:
		word := "worse"
		if ch.Change < 0 {
			word = "better"
		}
		return fmt.Sprintf("%s (head/base %.3g: %s %s)", ch.Verdict, ch.Ratio, stats.Percent(math.Abs(ch.Change)), word)
	case stats.Indistinguishable:
		return ch.Verdict
	}
	if strings.HasPrefix(ch.Reason, ch.Verdict) {
		return ch.Reason // "failing: …"
	}
	return ch.Verdict + ": " + ch.Reason
}

// errorShares gives a change's shares of failed requests, base → head.
func errorShares(ch verdict.Change) string {
	if ch.Verdict == verdict.Missing || ch.Verdict == verdict.New {
		return "–"
	}
	return fmt.Sprintf("%s → %s", stats.Percent(ch.BaseErrorShare), stats.Percent(ch.HeadErrorShare))
}

// comparisonText writes the warnings, then one line per change.
func comparisonText(w io.Writer, c verdict.Comparison) error {
	var b strings.Builder
	for _, wn := range c.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", human.Printable(wn))
	}
	for _, ch := range c.Changes {
		line := fmt.Sprintf("%s %s %s (errors %s): %s", ch.Scenario, ch.Target, ch.Where(), errorShares(ch), changeText(ch))
		if ch.Regression {
			line += "  REGRESSION"
		}
		fmt.Fprintln(&b, human.Printable(line))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// comparisonMarkdown writes the comparison as a GitHub-flavoured table,
// under a heading with the outcome.
func comparisonMarkdown(w io.Writer, c verdict.Comparison) error {
	v := "no regression"
	if c.Regressed() {
		v = fmt.Sprintf("**regression** beyond %.3g %%, failing or missing", c.MaxRegression)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## tandem compare: %s\n\n", v)
	for _, wn := range c.Warnings {
		fmt.Fprintf(&b, "> warning: %s\n\n", mdEscape(wn))
	}
	fmt.Fprintln(&b, "| scenario | target | level | verdict | head/base | errors (base → head) |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|")
	for _, ch := range c.Changes {
		ratio := "–"
		if ch.Verdict == stats.Faster || ch.Verdict == stats.Slower {
			ratio = fmt.Sprintf("%.3g", ch.Ratio)
		}
		text := mdEscape(changeText(ch))
		if ch.Verdict == stats.Faster || ch.Verdict == stats.Slower {
			text = ch.Verdict
		}
		if ch.Regression {
			text = "**" + text + ", regression**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdEscape(ch.Scenario), mdEscape(ch.Target),
			ch.Where(), text, ratio, errorShares(ch))
	}
	_, err := io.WriteString(w, human.Printable(b.String()))
	return err
}

// comparisonJSON writes the changes, the warnings, whether any change is a
// regression, and the policy they were judged by.
func comparisonJSON(w io.Writer, c verdict.Comparison) error {
	return encodeJSON(w, map[string]any{"changes": c.Changes, "warnings": c.Warnings, "regression": c.Regressed(), "policy": c.Policy})
}
