package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/study"
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
			root, err := repoRoot(dir)
			if err != nil {
				return badInput(err)
			}
			studyPath, err := findStudy(root, args)
			if err != nil {
				return badInput(err)
			}
			s, err := study.Read(studyPath)
			if err != nil {
				return badInput(err)
			}
			if cfg.Study, err = filepath.Rel(root, studyPath); err != nil || strings.HasPrefix(cfg.Study, "..") {
				return badInput(fmt.Errorf("ci init: the study %s is outside the repository %s", studyPath, root))
			}
			cfg.Study = filepath.ToSlash(cfg.Study)
			if cfg.TandemVersion == "" {
				if cfg.TandemVersion, err = pinnedVersion(stderr); err != nil {
					return badInput(err)
				}
			}
			if err := studyEnv(s, cfg.Build != "", stderr); err != nil {
				return badInput(err)
			}
			render, name := workflow.GitHub, filepath.Join(".github", "workflows", "tandem.yml")
			if gitlab {
				render, name = workflow.GitLab, ".gitlab-ci.yml"
			}
			text, err := render(cfg)
			if err != nil {
				return badInput(err)
			}
			if gitlab {
				for _, w := range cfg.Warnings() {
					fmt.Fprintf(stderr, "warning: %s\n", w)
				}
			}
			path := filepath.Join(root, name)
			if _, err := os.Stat(path); err == nil && !force {
				return badInput(fmt.Errorf("ci init: %s exists; --force replaces it", path))
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(path, text, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s: %s at tandem %s, gated against %s (--max-regression %g)\n", path, cfg.Study, cfg.TandemVersion, cfg.Branch, cfg.MaxRegression)
			fmt.Fprintf(stdout, "next: commit it and push to %s once; that run's results are the first baseline\n", cfg.Branch)
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

// repoRoot is dir, or the root of the git work tree of the current
// directory (the current directory outside one).
func repoRoot(dir string) (string, error) {
	if dir == "" {
		out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
		if dir = strings.TrimSpace(string(out)); err != nil || dir == "" {
			dir = "."
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("ci init: --dir %s: not a directory", dir)
	}
	return filepath.EvalSymlinks(abs)
}

// findStudy is the study named in args, else tandem.yaml or study.yaml at
// the repository's root.
func findStudy(root string, args []string) (string, error) {
	if len(args) == 1 {
		abs, err := filepath.Abs(args[0])
		if err != nil {
			return "", err
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		return abs, nil
	}
	for _, name := range []string{"tandem.yaml", "study.yaml"} {
		p := filepath.Join(root, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("ci init: no study named and no tandem.yaml or study.yaml in %s", root)
}

// pinnedVersion is the version of this binary to pin in a pipeline: its
// module version, else its commit.
func pinnedVersion(stderr io.Writer) (string, error) {
	bi, ok := debug.ReadBuildInfo()
	if ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version, nil
	}
	var rev string
	var modified bool
	if ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if rev == "" {
		return "", errors.New("ci init: this tandem does not know its version (built without version control information): name one with --tandem-version")
	}
	if modified {
		fmt.Fprintf(stderr, "tandem: note: this tandem has local changes; the pipeline pins commit %s without them\n", rev)
	}
	return rev, nil
}

// studyEnv checks the environment the study needs in CI: with builds, it
// must run them (${env.TANDEM_BASE} and ${env.TANDEM_HEAD}), and without
// builds nothing sets those; any other ${env.*} it reads is the pipeline's
// to provide, which init says.
func studyEnv(s *study.Study, builds bool, stderr io.Writer) error {
	asked := map[string]bool{}
	err := s.MissingEnv(func(name string) (string, bool) {
		asked[name] = true
		return "", builds && (name == "TANDEM_BASE" || name == "TANDEM_HEAD")
	})
	switch {
	case builds && (!asked["TANDEM_BASE"] || !asked["TANDEM_HEAD"]):
		return fmt.Errorf("ci init: with --build the study runs the two builds as ${env.TANDEM_BASE} and ${env.TANDEM_HEAD}; %s uses %s", s.File, usedEnv(asked))
	case !builds && (asked["TANDEM_BASE"] || asked["TANDEM_HEAD"]):
		return fmt.Errorf("ci init: %s runs ${env.TANDEM_BASE} and ${env.TANDEM_HEAD}, which only the pipeline's build step sets: say how to build them with --build", s.File)
	}
	if err != nil {
		var el study.ErrorList
		if !errors.As(err, &el) {
			return err
		}
		fmt.Fprintf(stderr, "tandem: note: the study reads variables the pipeline must set (in the workflow's env, from secrets):\n%v\n", err)
	}
	return nil
}

func usedEnv(asked map[string]bool) string {
	var names []string
	for n := range asked {
		names = append(names, "${env."+n+"}")
	}
	if len(names) == 0 {
		return "no ${env.*}"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
