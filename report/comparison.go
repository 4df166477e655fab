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
// or better the head is and its interval, an indistinguishable pair with
// its floor and no number, any other verdict with its reason.
func changeText(ch verdict.Change) string {
	switch ch.Verdict {
	case stats.Faster, stats.Slower:
		word := "worse"
		if ch.Change < 0 {
			word = "better"
		}
		s := fmt.Sprintf("%s (head/base %s: %s %s", ch.Verdict, stats.Ratio(ch.Ratio), stats.Percent(math.Abs(ch.Change)), word)
		if e := ch.Estimate; e != nil && e.Bounded() {
			s += fmt.Sprintf(", [%s … %s] at %s", stats.Ratio(e.Lo), stats.Ratio(e.Hi), stats.Percent(e.Confidence))
		}
		return s + ")"
	case stats.Indistinguishable:
		if e := ch.Estimate; e != nil {
			return fmt.Sprintf("indistinguishable (within ±%s)", stats.Percent(e.Floor))
		}
		return string(ch.Verdict)
	}
	if strings.HasPrefix(ch.Reason, string(ch.Verdict)) {
		return ch.Reason // "failing: …", "inconclusive: …"
	}
	return string(ch.Verdict) + ": " + ch.Reason
}

// errorShares gives a change's shares of failed requests, base → head.
func errorShares(ch verdict.Change) string {
	if ch.Verdict == verdict.Missing || ch.Verdict == verdict.New || ch.Kind == verdict.KindKnee || ch.Kind == verdict.KindCost {
		return "–"
	}
	return fmt.Sprintf("%s → %s", stats.Percent(ch.BaseErrorShare), stats.Percent(ch.HeadErrorShare))
}

// outcome is the comparison's outcome in a few words: no regression, a
// regression and why, or (a gate that fails only on inconclusive rows)
// undecided, never called a regression.
func outcome(c verdict.Comparison) string {
	if !c.Regressed() {
		return "no regression"
	}
	return outcomeWord(c) + ": " + c.Gate().Error()
}

// outcomeWord is "no regression", "regression" or "undecided".
func outcomeWord(c verdict.Comparison) string {
	switch {
	case !c.Regressed():
		return "no regression"
	case c.OnlyUndecided():
		return "undecided"
	}
	return "regression"
}

// gateMark says why a row fails the gate, "" when it does not: a
// regression, or undecided (inconclusive, failing by OnInconclusive).
func gateMark(ch verdict.Change) string {
	switch {
	case !ch.Regression:
		return ""
	case ch.Verdict == stats.Inconclusive:
		return "undecided: fails the gate"
	}
	return "regression"
}

// ComparisonRows writes only the rows of a comparison (for a gate that
// writes its own heading): text lines, or a Markdown table.
func ComparisonRows(w io.Writer, format string, c verdict.Comparison) error {
	var b strings.Builder
	if format == "md" {
		rowsMarkdown(&b, c)
	} else {
		rowsText(&b, c)
	}
	_, err := io.WriteString(w, human.Printable(b.String()))
	return err
}

func rowsText(b *strings.Builder, c verdict.Comparison) {
	for _, ch := range c.Changes {
		line := fmt.Sprintf("%s (errors %s): %s", ch.Label(), errorShares(ch), changeText(ch))
		switch mark := gateMark(ch); {
		case ch.Verdict == stats.Inconclusive && mark != "":
			line += "  UNDECIDED (fails the gate)"
		case mark != "":
			line += "  REGRESSION"
		}
		fmt.Fprintln(b, line)
	}
}

func rowsMarkdown(b *strings.Builder, c verdict.Comparison) {
	fmt.Fprintln(b, "| scenario | target | level | verdict | head/base | errors (base → head) |")
	fmt.Fprintln(b, "|---|---|---|---|---|---|")
	for _, ch := range c.Changes {
		ratio := "–"
		if ch.Verdict.Speed() {
			ratio = stats.Ratio(ch.Ratio)
		}
		text := mdEscape(changeText(ch))
		if mark := gateMark(ch); mark != "" {
			text = "**" + text + ", " + mark + "**"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", mdEscape(ch.Scenario), mdEscape(ch.Target),
			ch.Where(), text, ratio, errorShares(ch))
	}
}

// comparisonText writes the outcome, the warnings, then one line per
// change.
func comparisonText(w io.Writer, c verdict.Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "tandem compare: %s\n", outcome(c))
	if line := familyLine(&c.Family); line != "" {
		fmt.Fprintln(&b, line)
	}
	for _, wn := range c.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wn)
	}
	rowsText(&b, c)
	_, err := io.WriteString(w, human.Printable(b.String()))
	return err
}

// comparisonMarkdown writes the comparison as a GitHub-flavoured table,
// under a heading with the outcome.
func comparisonMarkdown(w io.Writer, c verdict.Comparison) error {
	var b strings.Builder
	if c.Regressed() {
		fmt.Fprintf(&b, "## tandem compare: **%s**: %s\n\n", outcomeWord(c), mdEscape(c.Gate().Error()))
	} else {
		fmt.Fprintf(&b, "## tandem compare: no regression\n\n")
	}
	if line := familyLine(&c.Family); line != "" {
		fmt.Fprintf(&b, "%s\n\n", mdEscape(line))
	}
	for _, wn := range c.Warnings {
		fmt.Fprintf(&b, "> warning: %s\n\n", mdEscape(wn))
	}
	rowsMarkdown(&b, c)
	_, err := io.WriteString(w, human.Printable(b.String()))
	return err
}

// comparisonJSON writes the changes, the warnings, whether the gate
// fails and why, the policy they were judged by and the family.
func comparisonJSON(w io.Writer, c verdict.Comparison) error {
	return encodeJSON(w, map[string]any{"changes": c.Changes, "warnings": c.Warnings, "failures": c.Failures, "regression": c.Regressed(),
		"policy": c.Policy, "family": c.Family})
}
