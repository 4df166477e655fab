package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/demo"
	"github.com/tandem-bench/tandem/history"
	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/progress"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/runner"
	"github.com/tandem-bench/tandem/study"
)

// runOptions are the flags of run and demo: the runner's options and what
// the command does around the run.
type runOptions struct {
	runner.Options
	verbose, strict, plan, quick bool
	// progress is text (lines) or json (an event per line on stderr).
	progress string
	// fleet, when it names workers, runs the scenarios' loops on them.
	fleet fleetOptions
	// history names the history the run is added to when it ends: a file
	// or a postgres:// URL, "default" for TANDEM_DB or the default file,
	// empty for none (unless TANDEM_DB is set).
	history string
}

// runFlags defines the flags run and demo share; the results go to out
// unless --out names another directory.
func runFlags(c *cobra.Command, ro *runOptions, out, quick string) {
	f := c.Flags()
	f.StringVar(&ro.Out, "out", out, "directory for results.json and the reports")
	f.BoolVar(&ro.quick, "quick", false, quick)
	f.BoolVar(&ro.plan, "plan", false, "print the plan (each phase and scenario, with an estimate of its time) and start nothing")
	f.BoolVarP(&ro.verbose, "verbose", "v", false, "show every progress line on stderr even when it is not a terminal")
	cli.ChoiceVar(f, &ro.progress, "progress", "text", "text (a line per step, every round with -v or on a terminal) or json (one event per line on stderr: phase, step, steps, elapsed and left in seconds, line)", "text", "json")
	f.BoolVar(&ro.Pin, "pin", true, "pin the generator to the study's generator.cpus (default: the first half of the cores) and the targets to the rest (Linux); --pin=false leaves both to the scheduler, e.g. on a machine shared with other work")
}

// studyRun runs a parsed study (or prints its plan), writes its reports,
// prints the text report to stdout and keeps the run in the history.
func studyRun(ctx context.Context, s *study.Study, ro runOptions, stdout, stderr io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the tandem binary: %w", err)
	}
	o := ro.Options
	o.Self, o.Version, o.CommandLine = self, version, os.Args
	plan := runner.NewPlan(s, o)
	if ro.plan {
		_, err := fmt.Fprintf(stdout, "%s: the plan, estimated from the study (nothing was started)\n\n%s", s.Name, plan)
		return err
	}
	status := progress.Follow(stderr, &o, s.Name, plan, ro.progress == "json", ro.verbose)
	var sf *runner.FleetSession
	if ro.fleet.Active() {
		if sf, err = runner.OpenFleet(ctx, s, o.Only, ro.fleet, version, fleetNote(stderr)); err != nil {
			return cli.BadInput(err)
		}
		defer sf.Close()
		o.Fleet = sf
	}
	res, runErr := runner.Run(ctx, s, o)
	status.Close()
	if sf != nil && sf.Lost != nil {
		runErr = cli.Failed(fmt.Errorf("the run stopped: %w", sf.Lost))
	}
	if res == nil {
		return runErr
	}
	if err := report.WriteFiles(o.Out, res); err != nil && runErr == nil {
		runErr = err
	}
	progress.TextReport(stdout)(stdout, res)
	path := filepath.Join(o.Out, runner.ResultsFile)
	fmt.Fprintf(stdout, "\nresults: %s\nreports: %s, %s, %s\n", path,
		filepath.Join(o.Out, "report.html"), filepath.Join(o.Out, "report.md"), filepath.Join(o.Out, "report.txt"))
	if ro.history != "" || os.Getenv("TANDEM_DB") != "" {
		if err := keepRun(ctx, ro.history, path, stdout); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr == nil && ro.strict && res.Compat != nil && res.Compat.Failed > 0 {
		return cli.Failed(fmt.Errorf("compat: %d of %d cases disagree (--strict)", res.Compat.Failed, len(res.Compat.Cases)))
	}
	return runErr
}

func demoCmd(stdout, stderr io.Writer) *cobra.Command {
	var ro runOptions
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run the embedded demo study against the two builds of the sample service",
		Long: `demo starts the sample service's two builds as child processes from empty,
runs the embedded demo study and writes results.json, report.html,
report.md and report.txt. --quick finishes in well under 90 seconds on two
cores.`,
		Example: "  tandem demo\n  tandem demo --quick --out /tmp/demo",
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := demo.Study(ro.quick)
			if err != nil {
				return err
			}
			return studyRun(cmd.Context(), s, ro, stdout, stderr)
		},
	}
	runFlags(c, &ro, "tandem-demo", "short runs: finishes in under 90 s")
	return c
}

func runCmd(stdout, stderr io.Writer) *cobra.Command {
	var ro runOptions
	c := &cobra.Command{
		Use:     "run STUDY.yaml",
		Short:   "Run a study: start the targets, measure them side by side, write results.json",
		Example: "  tandem run study.yaml --out out/\n  tandem run study.yaml --plan\n  tandem run study.yaml --only getblock-latency --rounds 5\n  tandem run study.yaml --only compat --strict",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ro.Rounds < 0 {
				return cli.BadInput(fmt.Errorf("--rounds %d: want a positive count (or 0 for the study's)", ro.Rounds))
			}
			s, err := study.ReadEnv(args[0], os.LookupEnv) // an unset ${env.*} among the study's other errors
			if err != nil {
				return cli.BadInput(err)
			}
			if ro.quick {
				s.Quick()
			}
			return studyRun(cmd.Context(), s, ro, stdout, stderr)
		},
	}
	runFlags(c, &ro, "tandem-out", "short runs: one start per target, short rounds, each sweep's quick grid")
	f := c.Flags()
	fleetFlags(f, &ro.fleet)
	f.StringSliceVar(&ro.Only, "only", nil, "run only these parts: scenario names, compat, startup (comma-separated)")
	f.BoolVar(&ro.strict, "strict", false, "exit 1 when a compat case in equal mode disagrees")
	f.StringVar(&ro.history, "history", "", "add the run to the history when it ends: --history alone for $TANDEM_DB or "+history.DefaultPath+", --history=DB for another (a file or a postgres:// URL); with TANDEM_DB set, always (see tandem history)")
	f.Lookup("history").NoOptDefVal = "default"
	f.BoolVar(&ro.KeepData, "keep-data", false, "keep the targets' data_dir after the run (default: removed)")
	f.IntVar(&ro.Rounds, "rounds", 0, "override every scenario's rounds (0: the study's)")
	return c
}
