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
