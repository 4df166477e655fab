package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tandem-bench/tandem/demo"
	"github.com/tandem-bench/tandem/history"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/progress"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner"
	"github.com/tandem-bench/tandem/study"
	"golang.org/x/term"
)

// version is tandem's version; release builds set it with -ldflags.
var version = "0.1.0-dev"

// Exit codes (README.md).
const (
	exitOK          = 0
	exitCheckFailed = 1
	exitBadInput    = 2
	exitTarget      = 3
	exitInterrupted = 130
)

// exitError carries an exit code with its error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func badInput(err error) error { return &exitError{exitBadInput, err} }

// outputFormat is the format --format names among those that render kind;
// any other name is bad input.
func outputFormat(name string, kind report.Kind) (report.Format, error) {
	f, ok := report.LookupFormat(name, kind)
	if !ok {
		return f, badInput(fmt.Errorf("--format %q: want %s", name, report.FormatList(kind)))
	}
	return f, nil
}

// run executes the command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "tandem: %s\n", human.Printable(err.Error()))
	var ee *exitError
	var sl study.ErrorList
	var te *runner.TargetError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &sl):
		return exitBadInput
	case errors.As(err, &te):
		return exitTarget
	case errors.Is(err, context.Canceled):
		var in interruption
		if errors.As(context.Cause(ctx), &in) {
			return in.code() // 130 after SIGINT, 143 after SIGTERM
		}
		return exitInterrupted
	}
	if strings.HasPrefix(err.Error(), "unknown command") || strings.Contains(err.Error(), "flag") || strings.Contains(err.Error(), "arg(s)") {
		return exitBadInput
	}
	return exitBadInput
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
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return badInput(fmt.Errorf("%w%s (see %s --help)", err, flagSuggestion(c, err), c.CommandPath()))
	})
	root.AddCommand(demoCmd(stdout, stderr), runCmd(stdout, stderr), validateCmd(stdout), loadCmd(stdout, stderr),
		reportCmd(stdout), compareCmd(stdout), costCmd(stdout), versionCmd(stdout), sampleCmd(stderr), consumeCmd(), ciCmd(stdout, stderr), historyCmd(stdout, stderr), serveCmd(stdout, stderr),
		workerCmd(stderr), k8sCmd(stdout), recordCmd(stdout, stderr))
	argsAreInput(root.Commands())
	return root
}

// argsAreInput makes a wrong count of arguments to each command bad input
// (exit 2) that names the command and its help, at every level; a command
// that only groups others says an unknown subcommand is one, with the
// names it is near, rather than print its help and exit 0.
func argsAreInput(cmds []*cobra.Command) {
	for _, c := range cmds {
		argsAreInput(c.Commands())
		c.SuggestionsMinimumDistance = 2
		if c.HasSubCommands() && !c.Runnable() {
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(cmd *cobra.Command, a []string) error {
				if len(a) == 0 {
					return cmd.Help()
				}
				return badInput(fmt.Errorf("unknown command %q for %q%s (see %s --help)", a[0], cmd.CommandPath(),
					didYouMean(cmd.SuggestionsFor(a[0])), cmd.CommandPath()))
			}
		}
		if c.Args == nil {
			c.Args = cobra.NoArgs
		}
		args := c.Args
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				hint := ""
				if cmd.HasSubCommands() && len(a) > 0 {
					hint = didYouMean(cmd.SuggestionsFor(a[0]))
				}
				return badInput(fmt.Errorf("%s: %w%s (see %s --help)", cmd.CommandPath(), err, hint, cmd.CommandPath()))
			}
			return nil
		}
	}
}

// didYouMean is ": did you mean A or B?" for the names given, or nothing.
func didYouMean(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return "; did you mean " + names[0] + "?"
	}
	return "; did you mean " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1] + "?"
}

// flagSuggestion is didYouMean for an unknown flag: the command's flags
// (its own and inherited) within two edits of it, or that it starts.
func flagSuggestion(c *cobra.Command, err error) string {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return ""
	}
	var near []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && (levenshtein.ComputeDistance(name, f.Name) <= 2 || (len(name) >= 3 && strings.HasPrefix(f.Name, name))) {
			near = append(near, "--"+f.Name)
		}
	})
	return didYouMean(near)
}

// textReport is the terminal report for w: on a terminal fitted to its
// width and in colour, unless NO_COLOR is set (https://no-color.org).
func textReport(w io.Writer) func(io.Writer, *results.Results) error {
	if !isTerminal(w) {
		return report.Text
	}
	_, off := os.LookupEnv("NO_COLOR")
	width := 0
	if f, ok := progress.FileOf(w); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			width = cols
		}
	}
	return func(w io.Writer, r *results.Results) error { return report.TextWidth(w, r, !off, width) }
}

func isTerminal(w io.Writer) bool { return progress.IsTerminal(w) }

// studyRun runs a parsed study and writes its reports; it prints the text
// report to stdout.
// runOptions are the flags of run (and demo) that reach the runner.
type runOptions struct {
	out                       string
	only                      []string
	rounds                    int
	verbose, strict, keepData bool
	noPin                     bool
	// progress is text (lines) or json (an event per line on stderr).
	progress string
	// plan prints the plan and its estimate instead of running.
	plan bool
	// fleet, when it names workers, runs the scenarios' loops on them.
	fleet fleetOptions
	// history names the history the run is added to when it ends: a file
	// or a postgres:// URL, "default" for TANDEM_DB or the default file,
	// empty for none (unless TANDEM_DB is set).
	history string
}

func studyRun(ctx context.Context, s *study.Study, ro runOptions, stdout, stderr io.Writer) error {
	if ro.progress != "" && ro.progress != "text" && ro.progress != "json" {
		return badInput(fmt.Errorf("--progress %q: want text or json", ro.progress))
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the tandem binary: %w", err)
	}
	out, strict := ro.out, ro.strict
	o := runner.Options{Out: out, Only: ro.only, Rounds: ro.rounds, Self: self, Pin: !ro.noPin, Version: version, CommandLine: os.Args, KeepData: ro.keepData}
	plan := runner.NewPlan(s, o)
	if ro.plan {
		_, err := fmt.Fprintf(stdout, "%s: the plan, estimated from the study (nothing was started)\n\n%s", s.Name, plan)
		return err
	}
	status := progress.Follow(stderr, &o, s.Name, plan, ro.progress == "json", ro.verbose)
	var sf *runner.FleetSession
	if ro.fleet.Active() {
		if err := runner.CheckFleet(s, ro.only, ro.fleet.Count()); err != nil {
			return badInput(err)
		}
		var stop func()
		if sf, stop, err = openStudyFleet(ctx, ro.fleet, stderr); err != nil {
			return err
		}
		defer stop()
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		sf.Cancel, o.Fleet = cancel, sf
	}
	res, runErr := runner.Run(ctx, s, o)
	status.Close()
	if sf != nil && sf.Lost != nil {
		runErr = &exitError{exitCheckFailed, fmt.Errorf("the run stopped: %w", sf.Lost)}
	}
	if res == nil {
		return runErr
	}
	if err := report.WriteFiles(out, res); err != nil && runErr == nil {
		runErr = err
	}
	textReport(stdout)(stdout, res)
	fmt.Fprintf(stdout, "\nresults: %s\nreports: %s, %s, %s\n", filepath.Join(out, runner.ResultsFile),
		filepath.Join(out, "report.html"), filepath.Join(out, "report.md"), filepath.Join(out, "report.txt"))
	if ro.history != "" || os.Getenv("TANDEM_DB") != "" {
		db := ro.history
		if db == "default" {
			db = ""
		}
		if err := keepRun(ctx, db, filepath.Join(out, runner.ResultsFile), stdout); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr == nil && strict && res.Compat != nil && res.Compat.Failed > 0 {
		return &exitError{exitCheckFailed, fmt.Errorf("compat: %d of %d cases disagree (--strict)", res.Compat.Failed, len(res.Compat.Cases))}
	}
	return runErr
}

func demoCmd(stdout, stderr io.Writer) *cobra.Command {
	var out string
	var quick, verbose, pin, plan bool
	var progress string
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run the embedded demo study against the two builds of the sample service",
		Long: `demo starts the sample service's two builds as child processes from empty,
runs the embedded demo study and writes results.json, report.html,
report.md and report.txt. --quick finishes in well under 90 seconds on two
cores.`,
		Example: "  tandem demo\n  tandem demo --quick --out /tmp/demo",
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := demo.Study(quick)
			if err != nil {
				return err
			}
			return studyRun(cmd.Context(), s, runOptions{out: out, verbose: verbose, noPin: !pin, plan: plan, progress: progress}, stdout, stderr)
		},
	}
	c.Flags().StringVar(&out, "out", "tandem-demo", "directory for results.json and the reports")
	c.Flags().BoolVar(&quick, "quick", false, "short runs: finishes in under 90 s")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "show progress on stderr even when it is not a terminal")
	c.Flags().BoolVar(&plan, "plan", false, "print the plan (each phase and scenario, with an estimate of its time) and start nothing")
	progressFlag(c, &progress)
	pinFlag(c, &pin)
	return c
}

func runCmd(stdout, stderr io.Writer) *cobra.Command {
	var out string
	var only []string
	var rounds int
	var verbose, strict, quick, keepData, pin, plan bool
	var progress, keep string
	var fo fleetOptions
	c := &cobra.Command{
		Use:     "run STUDY.yaml",
		Short:   "Run a study: start the targets, measure them side by side, write results.json",
		Example: "  tandem run study.yaml --out out/\n  tandem run study.yaml --plan\n  tandem run study.yaml --only getblock-latency --rounds 5\n  tandem run study.yaml --only compat --strict",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rounds < 0 {
				return badInput(fmt.Errorf("--rounds %d: want a positive count (or 0 for the study's)", rounds))
			}
			s, err := study.ReadEnv(args[0], os.LookupEnv) // an unset ${env.*} among the study's other errors
			if err != nil {
				return badInput(err)
			}
			if quick {
				s.Quick()
			}
			return studyRun(cmd.Context(), s, runOptions{out: out, only: only, rounds: rounds, verbose: verbose, strict: strict, keepData: keepData, noPin: !pin, plan: plan, progress: progress, history: keep, fleet: fo}, stdout, stderr)
		},
	}
	c.Flags().StringVar(&out, "out", "tandem-out", "directory for results.json and the reports")
	fleetFlags(c.Flags(), &fo)
	c.Flags().StringSliceVar(&only, "only", nil, "run only these parts: scenario names, compat, startup (comma-separated)")
	c.Flags().BoolVar(&strict, "strict", false, "exit 1 when a compat case in equal mode disagrees")
	c.Flags().StringVar(&keep, "history", "", "add the run to the history when it ends: --history alone for $TANDEM_DB or "+history.DefaultPath+", --history=DB for another (a file or a postgres:// URL); with TANDEM_DB set, always (see tandem history)")
	c.Flags().Lookup("history").NoOptDefVal = "default"
	c.Flags().BoolVar(&quick, "quick", false, "short runs: one start per target, short rounds, each sweep's quick grid")
	c.Flags().BoolVar(&keepData, "keep-data", false, "keep the targets' data_dir after the run (default: removed)")
	c.Flags().IntVar(&rounds, "rounds", 0, "override every scenario's rounds (0: the study's)")
	c.Flags().BoolVar(&plan, "plan", false, "print the plan (each phase and scenario, with an estimate of its time) and start nothing")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "show every progress line on stderr even when it is not a terminal")
	progressFlag(c, &progress)
	pinFlag(c, &pin)
	return c
}

// progressFlag adds --progress.
func progressFlag(c *cobra.Command, progress *string) {
	c.Flags().StringVar(progress, "progress", "text", "text (a line per step, every round with -v or on a terminal) or json (one event per line on stderr: phase, step, steps, elapsed and left in seconds, line)")
}

// pinFlag adds --pin, on by default: the generator and the targets on
// disjoint sets of cores (Linux).
func pinFlag(c *cobra.Command, pin *bool) {
	c.Flags().BoolVar(pin, "pin", true, "pin the generator to the study's generator.cpus (default: the first half of the cores) and the targets to the rest (Linux); --pin=false leaves both to the scheduler, e.g. on a machine shared with other work")
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
				return badInput(errors.New("validate: want one study file (or --schema)"))
			}
			s, err := study.ReadEnv(args[0], os.LookupEnv) // an unset ${env.*} among the study's other errors
			if err != nil {
				return badInput(err)
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
				return badInput(err)
			}
			f, err := outputFormat(format, report.ForResults)
			if err != nil {
				return err
			}
			render := f.Results
			if out == "" || out == "-" {
				if format == "text" {
					render = textReport(stdout)
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
	c.Flags().StringVar(&format, "format", "text", report.FormatList(report.ForResults))
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
