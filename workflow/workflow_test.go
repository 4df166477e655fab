package workflow

import (
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/internal/golden"
	"go.yaml.in/yaml/v3"
)

func TestGolden(t *testing.T) {
	for _, c := range []struct {
		file   string
		render func(Config) ([]byte, error)
		cfg    Config
	}{
		{"github.yml", GitHub, Config{Study: "bench/study.yaml", TandemVersion: "v0.2.0", MaxRegression: 5}},
		{"github-build.yml", GitHub, Config{Study: "study.yaml", TandemVersion: "v0.2.0", Branch: "develop", MaxRegression: 2.5,
			Build: `go build -o "$OUT" ./cmd/server`}},
		{"gitlab-build.yml", GitLab, Config{Study: "study.yaml", TandemVersion: "v0.2.0", MaxRegression: 5, Build: "make\nmv server \"$OUT\""}},
	} {
		t.Run(c.file, func(t *testing.T) {
			out, err := c.render(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(out, &doc); err != nil {
				t.Fatalf("not YAML: %v", err)
			}
			golden.Check(t, "testdata/"+c.file, out)
		})
	}
}

// Values are YAML scalars whatever they hold: a build command with quotes,
// colons, a line break or a '#' stays one value.
func TestValuesStayScalars(t *testing.T) {
	build := "echo 'a: b' # not a comment\nprintf \"%s\" \"$OUT\""
	out, err := GitHub(Config{Study: "s: x.yaml", TandemVersion: "v1", Build: build})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Env map[string]string }
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Env["TANDEM_BUILD"] != build || doc.Env["TANDEM_STUDY"] != "s: x.yaml" {
		t.Errorf("env: %q", doc.Env)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{TandemVersion: "v1"}, "no study file"},
		{Config{Study: "s.yaml"}, "no tandem version"},
		{Config{Study: "s.yaml", TandemVersion: "v1", MaxRegression: -1}, "max regression"},
		{Config{Study: "s.yaml", TandemVersion: "v1", Branch: "a\nb"}, "line break"},
		{Config{Study: "s.yaml", TandemVersion: "v1", Build: "echo ${{ secrets.X }}"}, "evaluated by the CI"},
	} {
		for _, render := range []func(Config) ([]byte, error){GitHub, GitLab} {
			if _, err := render(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%+v: %v; want %q", c.cfg, err, c.want)
			}
		}
	}
}

// Everything the pipelines fetch is pinned: GitLab's image by digest (a
// warning when the user's Go version has no pinned image), GitHub's
// actions by commit; the checkout keeps no token for later steps.
func TestPinned(t *testing.T) {
	base := Config{Study: "s.yaml", TandemVersion: "v1"}
	for _, c := range []struct {
		name, goVersion, image, want string
		warn                         bool
	}{
		{"default", "", "", DefaultImage, false},
		{"default version", DefaultGoVersion, "", DefaultImage, false},
		{"other version", "1.27", "", "golang:1.27", true},
		{"given", "1.27", "golang:1.27.1@sha256:00", "golang:1.27.1@sha256:00", false},
		{"given by tag", "", "golang:1.26-bookworm", "golang:1.26-bookworm", true},
	} {
		cfg := base
		cfg.GoVersion, cfg.Image = c.goVersion, c.image
		out, err := GitLab(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Tandem struct{ Image string } }
		if err := yaml.Unmarshal(out, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Tandem.Image != c.want || (len(cfg.Warnings()) > 0) != c.warn {
			t.Errorf("%s: image %q, warnings %q; want %q, a warning: %v", c.name, doc.Tandem.Image, cfg.Warnings(), c.want, c.warn)
		}
	}
	if !strings.Contains(DefaultImage, "@sha256:") || len(DefaultImage) != len("golang:1.26.8@sha256:")+64 {
		t.Errorf("DefaultImage %q: want NAME:TAG@sha256: and 64 hex digits", DefaultImage)
	}
	for _, build := range []string{"", "make"} {
		cfg := base
		cfg.Build = build
		out, err := GitHub(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Jobs map[string]struct {
				Steps []struct {
					Uses string
					With map[string]any
				}
			}
		}
		if err := yaml.Unmarshal(out, &doc); err != nil {
			t.Fatal(err)
		}
		uses := 0
		for job, j := range doc.Jobs {
			for _, st := range j.Steps {
				if st.Uses == "" {
					continue
				}
				uses++
				at := strings.LastIndexByte(st.Uses, '@')
				if sha := st.Uses[at+1:]; at < 0 || len(sha) != 40 || strings.Trim(sha, "0123456789abcdef") != "" {
					t.Errorf("build %q, job %s: %s is not pinned to a full commit", build, job, st.Uses)
				}
				if strings.HasPrefix(st.Uses, "actions/checkout@") && st.With["persist-credentials"] != false {
					t.Errorf("build %q, job %s: checkout with %v; want persist-credentials: false", build, job, st.With)
				}
			}
		}
		if uses == 0 {
			t.Errorf("build %q: no step uses an action", build)
		}
	}
}
