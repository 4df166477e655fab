package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/history"
	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/progress"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/verdict"
)

// withHistory opens the history for f and closes it after: --db, else
// TANDEM_DB, else .tandem/history.db.
func withHistory(ctx context.Context, db string, f func(*history.Store) error) error {
	s, err := history.OpenEnv(ctx, db)
	if err != nil {
		return cli.BadInput(err)
	}
	defer s.Close()
	return f(s)
}

// findRun finds a stored run by its id or a prefix; not finding it is bad
// input.
func findRun(ctx context.Context, s *history.Store, id string) (history.Run, error) {
	run, err := s.Run(ctx, id)
	if err != nil {
		return run, cli.BadInput(err)
	}
	return run, nil
}

func historyCmd(stdout, stderr io.Writer) *cobra.Command {
	var db string
	c := &cobra.Command{
		Use:   "history",
		Short: "Keep every run and hold a run against its branch's history",
		Long: `history keeps runs in a database: SQLite at .tandem/history.db by default
(a pure-Go driver: no cgo), PostgreSQL when --db or TANDEM_DB is a
postgres:// URL. The gzipped results.json of each run is kept whole; the
tables index it (one value per run and series, the rounds behind it,
verdicts, compat differences) and are rebuilt from it by reindex.

gate holds a run against its base branch exactly as tandem compare holds two
runs (the same engine, rows and rules: docs/methods.md), against the newest
run there (--baseline last or pinned) or the newest N runs' rounds pooled
(median:N). A verdict newly failing and a compat difference not seen on the
base branch fail the gate too. With no baseline the gate passes with a
warning, or fails with --on-missing-baseline fail.`,
		Example: "  tandem history add out/results.json\n" +
			"  tandem history list --branch main\n" +
			"  tandem history gate out/results.json --base-branch main --format md >> \"$GITHUB_STEP_SUMMARY\"\n" +
			"  tandem history compare 3f2a91c0 8bd04e11 --format html > compare.html",
	}
	c.PersistentFlags().StringVar(&db, "db", "", "the history: a SQLite file or a postgres:// URL (default: $TANDEM_DB, else "+history.DefaultPath+")")
	c.AddCommand(historyAddCmd(stdout, &db), historyListCmd(stdout, &db), historyShowCmd(stdout, &db), historyCompareCmd(stdout, &db),
		historyGateCmd(stdout, stderr, &db), historyPinCmd(stdout, &db), historyArchiveCmd(stdout, &db), historyPruneCmd(stdout, &db), historyReindexCmd(stdout, &db), historyTokenCmd(stdout),
		historyChangesCmd(stdout, &db), historyAckCmd(stdout, &db))
	cli.ArgsAreInput(c.Commands())
	return c
}

// metaFlags are the flags that file a run.
type metaFlags struct {
	branch, commit, testbed, ciURL string
	tags                           []string
}

func (f *metaFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.branch, "branch", "", "the branch the run is of (default: from CI or git)")
	c.Flags().StringVar(&f.commit, "commit", "", "the commit the run is of (default: from CI or git)")
	c.Flags().StringVar(&f.testbed, "testbed", "", "where it ran (default: $TANDEM_TESTBED, else the host's name)")
	c.Flags().StringVar(&f.ciURL, "ci-url", "", "the CI job that made it (default: from CI)")
	c.Flags().StringArrayVar(&f.tags, "tag", nil, "a label, key=value (repeatable)")
}

func (f *metaFlags) meta(ctx context.Context) (history.Meta, error) {
	tags, err := history.ParseTags(f.tags)
	if err != nil {
		return history.Meta{}, cli.BadInput(err)
	}
	return history.Detect(ctx, history.Meta{Branch: f.branch, Commit: f.commit, Testbed: f.testbed, CIURL: f.ciURL, Tags: tags}, nil), nil
}

// keepRun adds a finished run to the history db ("default" or empty:
// TANDEM_DB or the default), filed from CI or git.
func keepRun(ctx context.Context, db, path string, w io.Writer) error {
	if db == "default" {
		db = ""
	}
	return withHistory(ctx, db, func(s *history.Store) error {
		return s.AddFile(ctx, path, history.Detect(ctx, history.Meta{}, nil), w)
	})
}

func historyChangesCmd(stdout io.Writer, db *string) *cobra.Command {
	var o history.ChangesOptions
	var since, format string
	c := &cobra.Command{
		Use:   "changes",
		Short: "List the change points of every stored series (docs/history.md)",
		Long: `changes finds where each series of the stored runs shifted for good: per study,
branch and series (scenario, target, level, metric), over the runs that measured the
same thing, with the shift, its 95 % interval, p, and the runs and commits either
side (the cause lies between them). The method and its measured false-alarm rate
are in docs/history.md.`,
		Example: "  tandem history changes\n  tandem history changes --study demo --branch main --since 720h --format md\n  tandem history changes --open --format json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.Since, err = history.ParseSince(since, time.Now()); err != nil {
				return cli.BadInput(err)
			}
			if _, err := history.ParseSeries(o.Series); o.Series != "" && err != nil {
				return cli.BadInput(fmt.Errorf("--series: %w (tandem history show lists a run's series keys)", err))
			}
			return withHistory(cmd.Context(), *db, func(s *history.Store) error {
				cps, err := s.Changes(cmd.Context(), o)
				if err != nil {
					return err
				}
				return history.WriteChanges(stdout, format, cps)
			})
		},
	}
	c.Flags().StringVar(&o.Study, "study", "", "only this study")
	c.Flags().StringVar(&o.Branch, "branch", "", "only this branch")
	c.Flags().StringVar(&o.Series, "series", "", `only this series, by its key (["scenario","target",level,"metric"])`)
	c.Flags().StringVar(&since, "since", "", "only change points of runs made within this long (720h: 30 days)")
	c.Flags().BoolVar(&o.Open, "open", false, "only regressions nobody acknowledged")
	textMdOrJSON(c.Flags(), &format)
	return c
}

func historyAckCmd(stdout io.Writer, db *string) *cobra.Command {
	var study, branch, series, as, note string
	c := &cobra.Command{
		Use:   "ack RUN",
		Short: "Triage a change point: expected, a regression or an improvement",
		Long: `ack records what a change point is: the one of --series on --branch of --study that
starts at RUN (a stored run's id or a unique prefix, as tandem history changes
shows it). An expected change or an improvement no longer fails
tandem history gate --on-change-point, and changes --open leaves it out.`,
		Example: "  tandem history ack 3f2a91c0 --study demo --series '[\"getblock-latency\",\"b\",1,\"headline\"]' --as expected --note 'bigger blocks'",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			status, err := history.ParseAck(as)
			if err != nil {
				return cli.BadInput(err)
			}
			sr, err := history.ParseSeries(series)
			if err != nil {
				return cli.BadInput(fmt.Errorf("--series: %w", err))
			}
			return withHistory(cmd.Context(), *db, func(s *history.Store) error {
				c, err := s.Ack(cmd.Context(), study, branch, sr, args[0], status, note)
				if err != nil {
					return cli.BadInput(err)
				}
				_, err = fmt.Fprintf(stdout, "%s\n", human.Printable(c.Text()))
				return err
			})
		},
	}
	c.Flags().StringVar(&study, "study", "", "the study (required)")
	c.Flags().StringVar(&branch, "branch", "main", "the branch")
	c.Flags().StringVar(&series, "series", "", "the series' key (required)")
	c.Flags().StringVar(&as, "as", "", "expected, regression or improvement (required)")
	c.Flags().StringVar(&note, "note", "", "why, for the next reader")
	for _, f := range []string{"study", "series", "as"} {
		c.MarkFlagRequired(f)
	}
	return c
}

func historyAddCmd(stdout io.Writer, db *string) *cobra.Command {
	var mf metaFlags
	c := &cobra.Command{
		Use:     "add RESULTS.json",
		Short:   "Store a run (the same file twice is stored once)",
		Example: "  tandem history add out/results.json --branch main --tag runner=ci-2core",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := mf.meta(cmd.Context())
			if err != nil {
				return err
			}
			return withHistory(cmd.Context(), *db, func(s *history.Store) error {
				return s.AddFile(cmd.Context(), args[0], m, stdout)
			})
		},
	}
	mf.add(c)
	return c
}

func historyListCmd(stdout io.Writer, db *string) *cobra.Command {
	var f history.Filter
	var before string
	c := &cobra.Command{
		Use:     "list",
		Short:   "List stored runs, newest first",
		Example: "  tandem history list --branch main --limit 20\n  tandem history list --before 3f2a91c0   # the next page",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.Limit < 1 {
				return cli.BadInput(fmt.Errorf("--limit %d: want 1 or more", f.Limit))
			}
			return withHistory(cmd.Context(), *db, func(s *history.Store) error {
				if before != "" {
					b, err := findRun(cmd.Context(), s, before)
					if err != nil {
						return err
					}
					f.Before = &b
				}
				return s.List(cmd.Context(), stdout, f)
			})
		},
	}
	c.Flags().StringVar(&f.Study, "study", "", "only runs of this study")
	c.Flags().StringVar(&f.Branch, "branch", "", "only runs of this branch")
	c.Flags().BoolVar(&f.Pinned, "pinned", false, "only pinned runs")
	c.Flags().BoolVar(&f.WithArchived, "archived", false, "archived runs too")
	c.Flags().IntVar(&f.Limit, "limit", 50, "at most this many runs")
	c.Flags().StringVar(&before, "before", "", "runs older than this one (the next page)")
	return c
}

func historyShowCmd(stdout io.Writer, db *string) *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:     "show RUN",
		Short:   "Show a stored run as tandem report does",
		Example: "  tandem history show 3f2a91c0\n  tandem history show 3f2a91c0 --format html > run.html",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHistory(cmd.Context(), *db, func(s *history.Store) error {
				run, err := findRun(cmd.Context(), s, args[0])
				if err != nil {
					return err
				}
				res, err := s.Results(cmd.Context(), run.ID)
				if err != nil {
					return err
				}
				f, _ := report.LookupFormat(format, report.ForResults) // --format checked it
				render := f.Results
				if format == "text" {
					render = progress.TextReport(stdout)
					io.WriteString(stdout, run.Heading())
				}
				return render(stdout, res)
			})
		},
	}
	formatVar(c.Flags(), &format, report.ForResults)
	return c
}

func historyCompareCmd(stdout io.Writer, db *string) *cobra.Command {
	var format string
	var o verdict.Options
	c := &cobra.Command{
		Use:   "compare BASE HEAD",
		Short: "Hold two stored runs against each other as tandem compare does; exit 1 on a regression",
		Example: "  tandem history compare 3f2a91c0 8bd04e11\n" +
			"  tandem history compare 3f2a91c0 8bd04e11 --format html > compare.html",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHistory(cmd.Context(), *db, func(s *history.Store) error {
				var runs [2]*results.Results
				for i, id := range args {
					run, err := findRun(cmd.Context(), s, id)
					if err != nil {
						return err
					}
					if runs[i], err = s.Results(cmd.Context(), run.ID); err != nil {
						return err
					}
				}
				return compareRuns(stdout, format, runs[0], runs[1], o)
			})
		},
	}
	formatVar(c.Flags(), &format, report.ForComparison)
	gateFlags(c.Flags(), &o.MaxRegression, &o.OnInconclusive, &o.AllowChanged, 0)
	return c
}

func historyGateCmd(stdout, stderr io.Writer, db *string) *cobra.Command {
	o := history.GateOptions{}
	var format, onMissing string
	c := &cobra.Command{
		Use:   "gate RESULTS.json",
		Short: "Hold a run against its base branch's history; exit 1 on a regression",
		Example: "  tandem history gate out/results.json --base-branch main\n" +
			"  tandem history gate out/results.json --base-branch main --baseline median:5 --format md >> \"$GITHUB_STEP_SUMMARY\"",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.FailOnMissingBaseline = onMissing == "fail"
			if _, _, err := history.ParseBaseline(o.Baseline); err != nil {
				return cli.BadInput(err)
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return cli.BadInput(err)
			}
			return withHistory(cmd.Context(), *db, func(s *history.Store) error {
				g, err := s.GateRun(cmd.Context(), data, o)
				if err != nil {
					return cli.BadInput(fmt.Errorf("%s: %w", args[0], err))
				}
				if err := g.Write(stdout, format); err != nil {
					return err
				}
				if g.Failed {
					return cli.Failed(errors.New("history gate failed: " + strings.Join(g.Reasons, "; ")))
				}
				return nil
			})
		},
	}
	c.Flags().StringVar(&o.BaseBranch, "base-branch", "main", "the branch whose history is the baseline")
	c.Flags().StringVar(&o.Baseline, "baseline", "last", "last (the newest run), pinned (the newest pinned run) or median:N (per series, the median of the newest N)")
	gateFlags(c.Flags(), &o.MaxRegression, &o.OnInconclusive, &o.AllowChanged, 5)
	c.Flags().Float64Var(&o.Alpha, "alpha", 0.05, "the chance of any false alarm over the gate's rows (Holm), if higher than the runs recorded")
	cli.ChoiceVar(c.Flags(), &onMissing, "on-missing-baseline", "warn", "warn (pass, saying so) or fail", "warn", "fail")
	c.Flags().BoolVar(&o.OnChangePoint, "on-change-point", false, "also fail a run that starts a change point of the base branch's history that is a regression nobody acknowledged (docs/history.md)")
	textMdOrJSON(c.Flags(), &format)
	return c
}

func historyPinCmd(stdout io.Writer, db *string) *cobra.Command {
	return historyMarkCmd(stdout, db, "pin", "Pin a run as a baseline (kept by prune, chosen by gate --baseline pinned)", "pinned", "unpinned",
		func(s *history.Store) func(context.Context, string, bool) error { return s.Pin })
}

func historyArchiveCmd(stdout io.Writer, db *string) *cobra.Command {
	return historyMarkCmd(stdout, db, "archive", "Archive a run: kept and shown by id, left out of lists, trends and gates", "archived", "unarchived",
		func(s *history.Store) func(context.Context, string, bool) error { return s.Archive })
}

// historyMarkCmd is a command that sets a run's mark (pin, archive), or
// clears it with --un<verb>.
func historyMarkCmd(stdout io.Writer, db *string, verb, short, done, undone string,
	setter func(*history.Store) func(context.Context, string, bool) error) *cobra.Command {
	var undo bool
	c := &cobra.Command{
		Use:     verb + " RUN",
		Short:   short,
		Example: fmt.Sprintf("  tandem history %s 3f2a91c0\n  tandem history %s 3f2a91c0 --un%s", verb, verb, verb),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHistory(cmd.Context(), *db, func(s *history.Store) error {
				run, err := findRun(cmd.Context(), s, args[0])
				if err != nil {
					return err
				}
				if err := setter(s)(cmd.Context(), run.ID, !undo); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "run %s %s\n", run.Short(), map[bool]string{true: undone, false: done}[undo])
				return nil
			})
		},
	}
	c.Flags().BoolVar(&undo, "un"+verb, false, verb+" no more: clear the mark")
	return c
}

func historyPruneCmd(stdout io.Writer, db *string) *cobra.Command {
	var olderThan, keepBranch string
	c := &cobra.Command{
		Use:     "prune --older-than AGE",
		Short:   "Delete old runs, except pinned ones and those of --keep-branch",
		Example: "  tandem history prune --older-than 180d --keep-branch main",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			age, err := history.ParseAge(olderThan)
			if err != nil {
				return cli.BadInput(err)
			}
			return withHistory(cmd.Context(), *db, func(s *history.Store) error {
				n, err := s.Prune(cmd.Context(), time.Now().Add(-age), keepBranch)
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "deleted %s made before %s\n", human.Plural(int(n), "run"), time.Now().Add(-age).UTC().Format("2006-01-02 15:04 UTC"))
				return nil
			})
		},
	}
	c.Flags().StringVar(&olderThan, "older-than", "", "delete runs made longer ago than this: 180d, 36h")
	c.Flags().StringVar(&keepBranch, "keep-branch", "", "keep every run of this branch")
	c.MarkFlagRequired("older-than")
	return c
}

func historyReindexCmd(stdout io.Writer, db *string) *cobra.Command {
	return &cobra.Command{
		Use:     "reindex",
		Short:   "Rebuild the history's tables from the stored results",
		Example: "  tandem history reindex",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHistory(cmd.Context(), *db, func(s *history.Store) error {
				n, err := s.Reindex(cmd.Context())
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "reindexed %d runs in %s\n", n, s.Where)
				return nil
			})
		},
	}
}
