package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// change is one scenario, target and level held between two results.
type change struct {
	Scenario    string  `json:"scenario"`
	Target      string  `json:"target"`
	Concurrency int     `json:"concurrency,omitempty"`
	Base        float64 `json:"base"`
	Head        float64 `json:"head"`
	Ratio       float64 `json:"ratio"`
	Verdict     string  `json:"verdict"`
	Regression  bool    `json:"regression"`
}

func compareCmd(stdout io.Writer) *cobra.Command {
	var maxRegression float64
	var format string
	c := &cobra.Command{
		Use:   "compare BASE.json HEAD.json",
		Short: "Hold two results against each other; exit 1 on a regression",
		Long: `compare matches scenarios, targets and concurrency levels of two results
files and gives each pair a verdict by the rules of a run (docs/methods.md).
A pair is a regression when HEAD is slower, beyond the spread, by more than
--max-regression percent. Exit 0 without a regression, 1 with one, 2 for
bad input.`,
		Example: "  tandem compare main/results.json pr/results.json --max-regression 5\n" +
			"  tandem compare main/results.json pr/results.json --format md >> \"$GITHUB_STEP_SUMMARY\"",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			base, err := results.Read(args[0])
			if err != nil {
				return badInput(err)
			}
			head, err := results.Read(args[1])
			if err != nil {
				return badInput(err)
			}
			if format != "text" && format != "json" && format != "md" {
				return badInput(fmt.Errorf("--format %q: want text, md or json", format))
			}
			changes, warnings := compare(base, head, maxRegression)
			regressed := false
			for _, ch := range changes {
				regressed = regressed || ch.Regression
			}
			if format == "json" {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(map[string]any{"changes": changes, "warnings": warnings, "regression": regressed}); err != nil {
					return err
				}
			} else if format == "md" {
				compareMarkdown(stdout, changes, warnings, regressed, maxRegression)
			} else {
				for _, w := range warnings {
					fmt.Fprintf(stdout, "warning: %s\n", w)
				}
				for _, ch := range changes {
					line := fmt.Sprintf("%s %s c=%d: %s", ch.Scenario, ch.Target, ch.Concurrency, ch.Verdict)
					if ch.Verdict == stats.Faster || ch.Verdict == stats.Slower {
						line += fmt.Sprintf(" (head/base %.3g)", ch.Ratio)
					}
					if ch.Regression {
						line += "  REGRESSION"
					}
					fmt.Fprintln(stdout, line)
				}
			}
			if regressed {
				return &exitError{exitCheckFailed, fmt.Errorf("regression beyond %.3g%%", maxRegression)}
			}
			return nil
		},
	}
	c.Flags().Float64Var(&maxRegression, "max-regression", 0, "tolerated slowdown in percent")
	c.Flags().StringVar(&format, "format", "text", "text, md (for a pull request or a CI job summary) or json")
	return c
}

// compareMarkdown writes the comparison as a GitHub-flavoured table. An
// indistinguishable pair shows no ratio, as everywhere.
func compareMarkdown(w io.Writer, changes []change, warnings []string, regressed bool, maxRegression float64) {
	verdict := "no regression"
	if regressed {
		verdict = fmt.Sprintf("**regression** beyond %.3g %%", maxRegression)
	}
	fmt.Fprintf(w, "## tandem compare: %s\n\n", verdict)
	for _, wn := range warnings {
		fmt.Fprintf(w, "> warning: %s\n\n", report.MarkdownEscape(wn))
	}
	fmt.Fprintln(w, "| scenario | target | level | verdict | head/base |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, ch := range changes {
		ratio := "–"
		if ch.Verdict == stats.Faster || ch.Verdict == stats.Slower {
			ratio = fmt.Sprintf("%.3g", ch.Ratio)
		}
		v := ch.Verdict
		if ch.Regression {
			v = "**" + v + ", regression**"
		}
		fmt.Fprintf(w, "| %s | %s | c=%d | %s | %s |\n", report.MarkdownEscape(ch.Scenario), report.MarkdownEscape(ch.Target), ch.Concurrency, v, ratio)
	}
}

// rounds of one target at one level as headline values.
func headlines(sc *results.Scenario, target string, level int) []float64 {
	var vs []float64
	for _, rd := range sc.Rounds {
		if rd.Target == target && rd.Concurrency == level && !rd.Failed {
			vs = append(vs, rd.Headline)
		}
	}
	return vs
}

func compare(base, head *results.Results, maxRegression float64) ([]change, []string) {
	var warnings []string
	bm, hm := base.Machine, head.Machine
	if bm.CPUModel != hm.CPUModel || bm.Cores != hm.Cores || bm.Kernel != hm.Kernel {
		warnings = append(warnings, fmt.Sprintf("the machines differ (%s, %d cores vs %s, %d cores): differences may be the machine's", bm.CPUModel, bm.Cores, hm.CPUModel, hm.Cores))
	}
	changes := []change{}
	for i := range head.Scenarios {
		hs := &head.Scenarios[i]
		var bs *results.Scenario
		for j := range base.Scenarios {
			if base.Scenarios[j].Name == hs.Name {
				bs = &base.Scenarios[j]
			}
		}
		if bs == nil {
			warnings = append(warnings, fmt.Sprintf("scenario %s is not in the base", hs.Name))
			continue
		}
		higher := hs.Direction == "higher"
		for _, sum := range hs.Summary {
			b := stats.Summarize(headlines(bs, sum.Target, sum.Concurrency), higher)
			h := stats.Summarize(headlines(hs, sum.Target, sum.Concurrency), higher)
			if b.N == 0 {
				continue
			}
			ratio, verdict, _ := stats.Verdict(b, h, higher, stats.DefaultNoiseFloor)
			ch := change{Scenario: hs.Name, Target: sum.Target, Concurrency: sum.Concurrency, Base: b.Best, Head: h.Best, Ratio: ratio, Verdict: verdict}
			if math.IsNaN(ch.Ratio) {
				ch.Ratio = 0
			}
			if verdict == stats.Slower {
				slowdown := ratio - 1 // latency grew
				if higher {
					slowdown = 1/ratio - 1 // throughput fell
				}
				ch.Regression = slowdown*100 > maxRegression
			}
			changes = append(changes, ch)
		}
	}
	return changes, warnings
}
