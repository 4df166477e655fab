package workflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/study"
)

// InitOptions say where Init writes a pipeline, and for which study.
type InitOptions struct {
	// Dir is the repository's root (default: the git work tree of the
	// current directory, else the current directory).
	Dir string
	// Study is the study file (default: tandem.yaml or study.yaml at the
	// repository's root).
	Study string
	// GitLab writes .gitlab-ci.yml rather than
	// .github/workflows/tandem.yml; Force replaces an existing file.
	GitLab, Force bool
	// Log hears notes and warnings on what the pipeline needs.
	Log io.Writer
}

// Init writes the pipeline c describes into the repository, for the study
// o names, which it reads and checks; c's Study is filled in, and its
// TandemVersion when empty (this binary's). It returns the file written
// and c as written.
func Init(ctx context.Context, c Config, o InitOptions) (string, Config, error) {
	root, err := repoRoot(ctx, o.Dir)
	if err != nil {
		return "", c, err
	}
	studyPath, err := findStudy(root, o.Study)
	if err != nil {
		return "", c, err
	}
	s, err := study.Read(studyPath)
	if err != nil {
		return "", c, err
	}
	if c.Study, err = filepath.Rel(root, studyPath); err != nil || strings.HasPrefix(c.Study, "..") {
		return "", c, fmt.Errorf("ci init: the study %s is outside the repository %s", studyPath, root)
	}
	c.Study = filepath.ToSlash(c.Study)
	if c.TandemVersion == "" {
		if c.TandemVersion, err = pinnedVersion(o.Log); err != nil {
			return "", c, err
		}
	}
	if err := studyEnv(s, c.Build != "", o.Log); err != nil {
		return "", c, err
	}
	render, name := GitHub, filepath.Join(".github", "workflows", "tandem.yml")
	if o.GitLab {
		render, name = GitLab, ".gitlab-ci.yml"
	}
	text, err := render(c)
	if err != nil {
		return "", c, err
	}
	if o.GitLab {
		for _, w := range c.Warnings() {
			fmt.Fprintf(o.Log, "warning: %s\n", w)
		}
	}
	path := filepath.Join(root, name)
	if _, err := os.Stat(path); err == nil && !o.Force {
		return "", c, fmt.Errorf("ci init: %s exists; --force replaces it", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", c, err
	}
	return path, c, os.WriteFile(path, text, 0o644)
}

// repoRoot is dir, or the root of the git work tree of the current
// directory (the current directory outside one).
func repoRoot(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		out, err := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel").Output()
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

// findStudy is the study file named, else tandem.yaml or study.yaml at the
// repository's root.
func findStudy(root, name string) (string, error) {
	if name != "" {
		abs, err := filepath.Abs(name)
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
func pinnedVersion(log io.Writer) (string, error) {
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
		fmt.Fprintf(log, "tandem: note: this tandem has local changes; the pipeline pins commit %s without them\n", rev)
	}
	return rev, nil
}

// studyEnv checks the environment the study needs in CI: with builds, it
// must run them (${env.TANDEM_BASE} and ${env.TANDEM_HEAD}), and without
// builds nothing sets those; any other ${env.*} it reads is the pipeline's
// to provide, which it notes on log.
func studyEnv(s *study.Study, builds bool, log io.Writer) error {
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
		fmt.Fprintf(log, "tandem: note: the study reads variables the pipeline must set (in the workflow's env, from secrets):\n%v\n", err)
	}
	return nil
}

// usedEnv lists the ${env.*} a study reads, sorted.
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
