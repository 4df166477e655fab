package main

import (
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
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
round) is withheld and listed, not passed as equal. md is for a pull request
or a CI job summary; html is one offline page (the tally and every change at
a glance, each scenario's latency spectra of both runs overlaid) for a CI job
to attach. Exit 0 without a regression, 1 with one, 2 for bad
input.`,
		Example: "  tandem compare main/results.json pr/results.json --max-regression 5\n" +
			"  tandem compare main/results.json pr/results.json --format md >> \"$GITHUB_STEP_SUMMARY\"\n" +
			"  tandem compare main/results.json pr/results.json --format html > compare.html",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := outputFormat(format, report.ForComparison); err != nil {
				return err // before the files are read
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
			return compareRuns(stdout, format, base, head, maxRegression)
		},
	}
	c.Flags().Float64Var(&maxRegression, "max-regression", 0, "tolerated worsening in percent of the base (latency grown, throughput fallen)")
	c.Flags().StringVar(&format, "format", "text", report.FormatList(report.ForComparison))
	return c
}

// compareRuns holds head against base, writes the comparison in format
// and fails (exit 1) on a regression.
func compareRuns(w io.Writer, format string, base, head *results.Results, maxRegression float64) error {
	cmp, err := verdict.CompareRuns(base, head, maxRegression)
	if err != nil {
		return badInput(err)
	}
	if err := report.Comparison(w, format, cmp); err != nil {
		return err
	}
	if err := cmp.Gate(); err != nil {
		return &exitError{exitCheckFailed, err}
	}
	return nil
}
