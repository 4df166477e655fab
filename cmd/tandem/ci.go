package main

import (
	"cmp"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/workflow"
)

func ciCmd(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "ci",
		Short: "Set up a CI pipeline that runs a study on every pull request",
	}
	c.AddCommand(ciInitCmd(stdout, stderr))
	return c
}

func ciInitCmd(stdout, stderr io.Writer) *cobra.Command {
	var cfg workflow.Config
	var gitlab, force bool
	var dir string
	c := &cobra.Command{
		Use:   "init [STUDY.yaml]",
		Short: "Write a GitHub Actions workflow (or a GitLab CI job) that runs a study and gates pull requests",
		Long: `init writes .github/workflows/tandem.yml (with --gitlab, .gitlab-ci.yml) in the
repository that holds the study (default: tandem.yaml or study.yaml there).
On every pull request the pipeline installs this tandem version, runs the
study, keeps results.json and report.html as artifacts, appends the Markdown
report to the run's summary, and gates with tandem compare against the base
branch's latest results: exit 1 on a regression. A push to the base branch
makes those results; until there are some, the gate says so and passes.

With --build, the pipeline builds the base and the head of a pull request
(the command runs in a checkout of each and writes the binary to $OUT), and
the study runs them side by side as ${env.TANDEM_BASE} and ${env.TANDEM_HEAD}.
See docs/ci.md.`,
		Example: "  tandem ci init bench/study.yaml\n" +
			"  tandem ci init --build 'go build -o \"$OUT\" ./cmd/server'\n" +
			"  tandem ci init --gitlab --branch develop",
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := workflow.InitOptions{Dir: dir, GitLab: gitlab, Force: force, Log: stderr}
			if len(args) == 1 {
				o.Study = cmp.Or(args[0], ".") // "" names the current directory, as "." does
			}
			path, w, err := workflow.Init(cmd.Context(), cfg, o)
			if err != nil {
				return cli.BadInput(err)
			}
			fmt.Fprintf(stdout, "wrote %s: %s at tandem %s, gated against %s (--max-regression %g)\n", path, w.Study, w.TandemVersion, w.Branch, w.MaxRegression)
			fmt.Fprintf(stdout, "next: commit it and push to %s once; that run's results are the first baseline\n", w.Branch)
			return nil
		},
	}
	f := c.Flags()
	f.BoolVar(&gitlab, "gitlab", false, "write a GitLab CI job (.gitlab-ci.yml) instead of a GitHub Actions workflow")
	f.BoolVar(&force, "force", false, "replace an existing file")
	f.StringVar(&dir, "dir", "", "the repository's root (default: the git work tree of the current directory)")
	f.StringVar(&cfg.Build, "build", "", "a shell command that builds the service into $OUT, run for the base and the head")
	f.StringVar(&cfg.Branch, "branch", "main", "the base branch: pushes to it make the baseline")
	f.StringVar(&cfg.TandemVersion, "tandem-version", "", "the tandem version or commit to install (default: this binary's)")
	f.StringVar(&cfg.GoVersion, "go-version", workflow.DefaultGoVersion, "the Go toolchain that installs tandem")
	f.StringVar(&cfg.Image, "image", "", "the GitLab job's image, pinned by digest (NAME:TAG@sha256:DIGEST; default: "+workflow.DefaultImage+" for the default --go-version)")
	f.Float64Var(&cfg.MaxRegression, "max-regression", 5, "compare's threshold in percent")
	f.IntVar(&cfg.TimeoutMinutes, "timeout-minutes", 60, "the job's time limit")
	return c
}
