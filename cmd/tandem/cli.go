package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/progress"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner"
	"github.com/tandem-bench/tandem/study"
)

// version is tandem's version; release builds set it with -ldflags.
var version = "0.1.0-dev"

// run executes the command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return cli.ExitOK
	}
	fmt.Fprintf(stderr, "tandem: %s\n", human.Printable(err.Error()))
	var ee *cli.ExitError
	var sl study.ErrorList
	var te *runner.TargetError
	switch {
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &sl):
		return cli.ExitBadInput
	case errors.As(err, &te):
		return cli.ExitTarget
	case errors.Is(err, context.Canceled):
		return cli.InterruptedCode(ctx) // 130 after SIGINT, 143 after SIGTERM
	}
	return cli.ExitBadInput // usage errors among them
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "tandem",
		Short: "Side-by-side benchmark and QA harness for network services",
		Long: `tandem starts two or more builds of a service from empty, checks that they
answer the same, measures them on identical inputs in interleaved rounds, and
writes one results.json with honest verdicts.

Exit codes: 0 ok, 1 a check failed, 2 bad input or usage, 3 a target failed
to start or died, 130 interrupted (partial results are kept).`,
		Example:       "  tandem demo --quick\n  tandem run study.yaml --out out/\n  tandem report out/results.json --format md",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(cli.FlagError)
	root.AddCommand(demoCmd(stdout, stderr), runCmd(stdout, stderr), validateCmd(stdout), loadCmd(stdout, stderr),
		reportCmd(stdout), compareCmd(stdout), costCmd(stdout), versionCmd(stdout), sampleCmd(stderr), consumeCmd(), ciCmd(stdout, stderr), historyCmd(stdout, stderr), serveCmd(stdout, stderr),
		workerCmd(stderr), k8sCmd(stdout), recordCmd(stdout, stderr))
	cli.ArgsAreInput(root.Commands())
	return root
}

func validateCmd(stdout io.Writer) *cobra.Command {
	var schema bool
	c := &cobra.Command{
		Use:   "validate STUDY.yaml",
		Short: "Check a study file and report every error with its file:line:col",
		Example: "  tandem validate study.yaml\n" +
			"  tandem validate --schema > study.schema.json   # the JSON Schema, for editors",
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if schema {
				_, err := stdout.Write(study.Schema())
				return err
			}
			if len(args) != 1 {
				return cli.BadInput(errors.New("validate: want one study file (or --schema)"))
			}
			s, err := study.ReadEnv(args[0], os.LookupEnv) // an unset ${env.*} among the study's other errors
			if err != nil {
				return cli.BadInput(err)
			}
			msg := fmt.Sprintf("%s: ok: %d targets, %d calls, %d scenarios", args[0], len(s.Targets), len(s.Calls), len(s.Scenarios))
			if s.Compat != nil {
				msg += fmt.Sprintf(", %d compat cases", s.CompatCases())
			}
			fmt.Fprintln(stdout, msg)
			return nil
		},
	}
	c.Flags().BoolVar(&schema, "schema", false, "print the JSON Schema of the study format")
	return c
}

func reportCmd(stdout io.Writer) *cobra.Command {
	var format, out string
	c := &cobra.Command{
		Use:   "report RESULTS.json",
		Short: "Render results.json as HTML, Markdown or a terminal table, or export its rounds",
		Long: `report renders a results file: text (terminal tables), md (GitHub-flavoured
Markdown, for CI summaries), html (one self-contained page with charts). It
also exports the measured rounds: csv (one row per round), bench (the Go
benchmark format, so benchstat compares two runs) and hdr (every round's
latency histogram as an HdrHistogram interval log).`,
		Example: "  tandem report out/results.json\n  tandem report out/results.json --format html -o report.html\n" +
			"  tandem report base.json --format bench > base.txt; tandem report head.json --format bench > head.txt; benchstat base.txt head.txt",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := results.Read(args[0])
			if err != nil {
				return cli.BadInput(err)
			}
			f, _ := report.LookupFormat(format, report.ForResults) // --format checked it
			render := f.Results
			if out == "" || out == "-" {
				if format == "text" {
					render = progress.TextReport(stdout)
				}
				return render(stdout, res)
			}
			var b strings.Builder
			if err := render(&b, res); err != nil {
				return err
			}
			return results.WriteFileAtomic(out, []byte(b.String()))
		},
	}
	formatVar(c.Flags(), &format, report.ForResults)
	c.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of stdout")
	return c
}

func versionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print tandem's version and the results schema it writes",
		Example: "  tandem version",
		RunE: func(*cobra.Command, []string) error {
			t := runner.Tool(version)
			fmt.Fprintf(stdout, "tandem %s (%s)", t.Version, results.Schema)
			if rev := t.Settings["vcs.revision"]; rev != "" {
				fmt.Fprintf(stdout, " %s", rev)
			}
			fmt.Fprintln(stdout)
			return nil
		},
	}
}
