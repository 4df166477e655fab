// Package workflow writes the CI pipelines that run a study on every pull
// request: a GitHub Actions workflow and a GitLab CI job that install a
// pinned tandem, optionally build the base and the head, run the study,
// keep results.json and report.html, put the Markdown report in the run's
// summary and gate with tandem compare against the base branch's latest
// results (no gate, said so, when there are none yet).
package workflow

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/template"
)

//go:embed github.yml.tmpl gitlab.yml.tmpl
var files embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{"q": quote}).ParseFS(files, "*.tmpl"))

// Config is what a pipeline is made of.
type Config struct {
	// Study is the study file's path from the repository's root.
	Study string
	// TandemVersion is the module version or commit tandem is installed at.
	TandemVersion string
	// Branch is the base branch: pushes to it make the baseline.
	Branch string
	// Build, if set, is a shell command that builds the service into the
	// file named by $OUT; it runs in a checkout of the base and of the
	// head, and the study finds them as ${env.TANDEM_BASE} and
	// ${env.TANDEM_HEAD}.
	Build string
	// GoVersion is the Go toolchain that installs tandem.
	GoVersion string
	// Image is the GitLab job's container image, pinned by digest
	// (NAME:TAG@sha256:…); default: DefaultImage for the default Go
	// version, else golang:GoVersion unpinned (see Warnings).
	Image string
	// MaxRegression is compare's threshold, in percent.
	MaxRegression float64
	// TimeoutMinutes bounds the job.
	TimeoutMinutes int
}

// DefaultGoVersion is the Go toolchain a pipeline installs tandem with
// unless told otherwise, and DefaultImage the GitLab job's image for it: the
// official golang image of a release at least as new as tandem's go.mod
// asks (the image sets GOTOOLCHAIN=local), pinned by its index digest so
// that every run starts from the same image (a tag can be moved).
const (
	DefaultGoVersion = "1.26"
	DefaultImage     = "golang:1.26.8@sha256:6c2a5538f964f1c82f97ad14988bf05de100d922d159d0e398b54c7b0ca0c6c9"
)

// Warnings says what of the pipeline c writes is not pinned.
func (c Config) Warnings() []string {
	if c.image() != "" && !strings.Contains(c.image(), "@sha256:") {
		return []string{fmt.Sprintf("the GitLab image %s is not pinned by digest: a tag can be moved; --image NAME:TAG@sha256:DIGEST pins it", c.image())}
	}
	return nil
}

// image is the GitLab job's image.
func (c Config) image() string {
	switch {
	case c.Image != "":
		return c.Image
	case c.GoVersion == "" || c.GoVersion == DefaultGoVersion:
		return DefaultImage
	}
	return "golang:" + c.GoVersion
}

func (c *Config) check() error {
	var errs []error
	if c.Study == "" {
		errs = append(errs, errors.New("no study file"))
	}
	if c.TandemVersion == "" {
		errs = append(errs, errors.New("no tandem version to pin"))
	}
	if c.Branch == "" {
		c.Branch = "main"
	}
	if c.GoVersion == "" {
		c.GoVersion = DefaultGoVersion
	}
	c.Image = c.image()
	if c.TimeoutMinutes <= 0 {
		c.TimeoutMinutes = 60
	}
	if c.MaxRegression < 0 {
		errs = append(errs, fmt.Errorf("max regression %v%%: want 0 or more", c.MaxRegression))
	}
	for _, f := range []struct{ name, v string }{{"study", c.Study}, {"tandem version", c.TandemVersion},
		{"branch", c.Branch}, {"Go version", c.GoVersion}, {"image", c.Image}, {"build command", c.Build}} {
		// the pipeline evaluates ${{ … }} anywhere, even in a quoted value
		if strings.Contains(f.v, "${{") {
			errs = append(errs, fmt.Errorf("%s %q: ${{ would be evaluated by the CI", f.name, f.v))
		}
		if f.name != "build command" && strings.ContainsAny(f.v, "\n\r") {
			errs = append(errs, fmt.Errorf("%s %q: a line break", f.name, f.v))
		}
	}
	return errors.Join(errs...)
}

// GitHub returns the GitHub Actions workflow (for .github/workflows/tandem.yml).
func GitHub(c Config) ([]byte, error) { return render("github.yml.tmpl", c) }

// GitLab returns the GitLab CI job (for .gitlab-ci.yml, or to include from it).
func GitLab(c Config) ([]byte, error) { return render("gitlab.yml.tmpl", c) }

func render(name string, c Config) ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, struct {
		Config
		MaxRegression string
	}{c, strconv.FormatFloat(c.MaxRegression, 'g', -1, 64)}); err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return b.Bytes(), nil
}

// quote makes s one YAML scalar: a JSON string is a YAML double-quoted
// one, so no value can end the scalar or add a key.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
