package main

import (
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/verdict"
)

func compareCmd(stdout io.Writer) *cobra.Command {
	var o verdict.Options
	var format string
	c := &cobra.Command{
		Use:   "compare BASE.json HEAD.json | compare RUN.json",
		Short: "Hold two results against each other, or gate one run on its own comparisons; exit 1 on a regression",
		Long: `compare holds every row of HEAD against BASE: each scenario's targets at each
level (matched by name and by a fingerprint of what they measured: call,
load, engine), each target's startup, each grid cell, each search's knee and
each counted cost. Rows are judged by the same engine as a run (the shift
rule, docs/methods.md) on the two runs' rounds, which are independent, under
the stricter of the two recorded policies, with the chance of any false alarm
over all rows held at α (Holm). A row fails the gate when HEAD is slower by
more than --max-regression percent (latency grew, or throughput fell, by that
share of BASE); when either side is failing, dropped arrivals or has no
successful round; when HEAD lost a row BASE had; when a row's definition
changed (unless --allow-changed); or when it is inconclusive (unless
--on-inconclusive pass). An interrupted or empty HEAD fails too. Rows the
policy cannot judge (a busy generator, one round) are withheld and listed. md
is for a pull request or a CI job summary; html is one offline page for a CI
job to attach. Exit 0 when the gate passes, 1 when it fails, 2 for bad input.

With one file, compare gates the run on its own comparisons: each candidate
against the baseline, on the paired rounds they ran side by side (the sound
gate for two builds of one service: base and head in one run, on one
machine), by the same rules.`,
		Example: "  tandem compare main/results.json pr/results.json --max-regression 5\n" +
			"  tandem compare out/results.json --max-regression 5   # base and head side by side in one run\n" +
			"  tandem compare main/results.json pr/results.json --format md >> \"$GITHUB_STEP_SUMMARY\"\n" +
			"  tandem compare main/results.json pr/results.json --format html > compare.html",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if math.IsNaN(o.MaxRegression) || math.IsInf(o.MaxRegression, 0) || o.MaxRegression < 0 {
				return cli.BadInput(fmt.Errorf("--max-regression %v: want a percentage of 0 or more", o.MaxRegression))
			}
			base, err := results.Read(args[0])
			if err != nil {
				return cli.BadInput(err)
			}
			if len(args) == 1 {
				cmp, err := verdict.Within(base, o)
				if err != nil {
					return cli.BadInput(err)
				}
				return gateOutput(stdout, format, cmp)
			}
			head, err := results.Read(args[1])
			if err != nil {
				return cli.BadInput(err)
			}
			return compareRuns(stdout, format, base, head, o)
		},
	}
	gateFlags(c.Flags(), &o.MaxRegression, &o.OnInconclusive, &o.AllowChanged, 0)
	formatVar(c.Flags(), &format, report.ForComparison)
	return c
}

// compareRuns holds head against base, writes the comparison in format
// and fails (exit 1) on a regression.
func compareRuns(w io.Writer, format string, base, head *results.Results, o verdict.Options) error {
	cmp, err := verdict.CompareRuns(base, head, o)
	if err != nil {
		return cli.BadInput(err)
	}
	return gateOutput(w, format, cmp)
}

// gateOutput writes a comparison in format and fails (exit 1) when its
// gate does.
func gateOutput(w io.Writer, format string, cmp verdict.Comparison) error {
	if err := report.Comparison(w, format, cmp); err != nil {
		return err
	}
	if err := cmp.Gate(); err != nil {
		return cli.Failed(err)
	}
	return nil
}
