package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/verdict"
)

func compareCmd(stdout io.Writer) *cobra.Command {
	var maxRegression float64
	var format string
	c := &cobra.Command{
		Use:   "compare BASE.json HEAD.json",
		Short: "Hold two results against each other; exit 1 on a regression",
		Long: `compare matches scenarios, targets and concurrency levels of two results
files and judges each pair by the verdict policy HEAD's run recorded (the
same rules as a run: docs/methods.md). A pair is a regression when HEAD is
slower, beyond the spread and the noise floor, by more than --max-regression
percent (latency grew, or throughput fell, by that share of BASE), when HEAD
is failing (a worse error share, or no successful round) or could not keep up
(dropped arrivals, a short rate) where BASE could, or when HEAD lost a row
BASE had. Any other pair the policy cannot judge (a busy generator, one
round) is withheld and listed, not passed as equal. Exit 0 without a
regression, 1 with one, 2 for bad input.`,
		Example: "  tandem compare main/results.json pr/results.json --max-regression 5\n" +
			"  tandem compare main/results.json pr/results.json --format md >> \"$GITHUB_STEP_SUMMARY\"",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" && format != "md" {
				return badInput(fmt.Errorf("--format %q: want text, md or json", format))
			}
			if math.IsNaN(maxRegression) || math.IsInf(maxRegression, 0) || maxRegression < 0 {
				return badInput(fmt.Errorf("--max-regression %v: want a percentage of 0 or more", maxRegression))
			}
			base, err := results.Read(args[0])
			if err != nil {
				return badInput(err)
			}
			head, err := results.Read(args[1])
			if err != nil {
				return badInput(err)
			}
			changes, warnings, err := verdict.Compare(base, head, maxRegression/100)
			if err != nil {
				return badInput(err)
			}
			regressed, withheld := 0, 0
			for _, ch := range changes {
				if ch.Regression {
					regressed++
				}
				if ch.Verdict == stats.Withheld {
					withheld++
				}
			}
			if withheld > 0 {
				warnings = append(warnings, fmt.Sprintf("%d of %d pairs could not be judged (withheld): see their reasons", withheld, len(changes)))
			}
			switch format {
			case "json":
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(map[string]any{"changes": changes, "warnings": warnings, "regression": regressed > 0,
					"policy": verdict.ComparePolicy(base, head)}); err != nil {
					return err
				}
			case "md":
				compareMarkdown(stdout, changes, warnings, regressed > 0, maxRegression)
			default:
				compareText(stdout, changes, warnings)
			}
			if regressed > 0 {
				return &exitError{exitCheckFailed, fmt.Errorf("%d regressions (beyond %.3g %%, failing, or missing)", regressed, maxRegression)}
			}
			return nil
		},
	}
	c.Flags().Float64Var(&maxRegression, "max-regression", 0, "tolerated worsening in percent of the base (latency grown, throughput fallen)")
	c.Flags().StringVar(&format, "format", "text", "text, md (for a pull request or a CI job summary) or json")
	return c
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

func errorShares(ch verdict.Change) string {
	if ch.Verdict == verdict.Missing || ch.Verdict == verdict.New {
		return "–"
	}
	return fmt.Sprintf("%s → %s", stats.Percent(ch.BaseErrorShare), stats.Percent(ch.HeadErrorShare))
}

func compareText(w io.Writer, changes []verdict.Change, warnings []string) {
	for _, wn := range warnings {
		fmt.Fprintf(w, "warning: %s\n", human.Printable(wn))
	}
	for _, ch := range changes {
		line := fmt.Sprintf("%s %s c=%d (errors %s): %s", ch.Scenario, ch.Target, ch.Concurrency, errorShares(ch), changeText(ch))
		if ch.Regression {
			line += "  REGRESSION"
		}
		fmt.Fprintln(w, human.Printable(line))
	}
}

// compareMarkdown writes the comparison as a GitHub-flavoured table.
func compareMarkdown(w io.Writer, changes []verdict.Change, warnings []string, regressed bool, maxRegression float64) {
	v := "no regression"
	if regressed {
		v = fmt.Sprintf("**regression** beyond %.3g %%, failing or missing", maxRegression)
	}
	var b strings.Builder
	out := w
	defer func() { io.WriteString(out, human.Printable(b.String())) }()
	w = &b
	fmt.Fprintf(w, "## tandem compare: %s\n\n", v)
	for _, wn := range warnings {
		fmt.Fprintf(w, "> warning: %s\n\n", report.MarkdownEscape(wn))
	}
	fmt.Fprintln(w, "| scenario | target | level | verdict | head/base | errors (base → head) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, ch := range changes {
		ratio := "–"
		if ch.Verdict == stats.Faster || ch.Verdict == stats.Slower {
			ratio = fmt.Sprintf("%.3g", ch.Ratio)
		}
		text := report.MarkdownEscape(changeText(ch))
		if ch.Verdict == stats.Faster || ch.Verdict == stats.Slower {
			text = ch.Verdict
		}
		if ch.Regression {
			text = "**" + text + ", regression**"
		}
		fmt.Fprintf(w, "| %s | %s | c=%d | %s | %s | %s |\n", report.MarkdownEscape(ch.Scenario), report.MarkdownEscape(ch.Target),
			ch.Concurrency, text, ratio, errorShares(ch))
	}
}
