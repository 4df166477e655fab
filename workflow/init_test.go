package workflow

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// a study whose two targets are the pipeline's builds
const buildsStudy = `version: 1
name: ci pipeline
targets:
  - name: base
    start: {command: ["${env.TANDEM_BASE}"]}
    endpoints: {http: "http://127.0.0.1:${port.http}/"}
  - name: head
    start: {command: ["${env.TANDEM_HEAD}"]}
    endpoints: {http: "http://127.0.0.1:${port.http}/"}
calls:
  balance: {jsonrpc: {method: getbalance, params: [tz1000042]}}
scenarios:
  - {name: balance-latency, call: balance, load: {concurrency: 1}}
`

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestUsedEnv(t *testing.T) {
	for _, c := range []struct {
		asked map[string]bool
		want  string
	}{
		{nil, "no ${env.*}"},
		{map[string]bool{"B": true, "A": true}, "${env.A}, ${env.B}"},
	} {
		if got := usedEnv(c.asked); got != c.want {
			t.Errorf("usedEnv(%v) = %q; want %q", c.asked, got, c.want)
		}
	}
}

// Init finds the study, checks what it needs of the pipeline, and writes
// the file once (again only with Force), saying what it needs on Log.
func TestInit(t *testing.T) {
	repo := t.TempDir()
	if real, err := filepath.EvalSymlinks(repo); err == nil {
		repo = real
	}
	writeFile(t, filepath.Join(repo, "bench", "study.yaml"), buildsStudy)
	plain := strings.NewReplacer("${env.TANDEM_BASE}", "/bin/base", "${env.TANDEM_HEAD}", "/bin/head").Replace(buildsStudy)
	writeFile(t, filepath.Join(repo, "study.yaml"), plain)
	writeFile(t, filepath.Join(repo, "env.yaml"), strings.Replace(plain, "/bin/base", "${env.SECRET_A}", 1))
	outside := filepath.Join(t.TempDir(), "study.yaml")
	writeFile(t, outside, plain)
	base := Config{TandemVersion: "v0.0.0-test", Branch: "main", MaxRegression: 5}
	build := base
	build.Build = "make"
	gh, gl := filepath.Join(repo, ".github", "workflows", "tandem.yml"), filepath.Join(repo, ".gitlab-ci.yml")
	for _, c := range []struct {
		name      string
		cfg       Config
		o         InitOptions
		path, err string
		log       string
	}{
		{"the root's study.yaml", base, InitOptions{}, gh, "", ""},
		{"again", base, InitOptions{}, "", "ci init: " + gh + " exists; --force replaces it", ""},
		{"again, forced", base, InitOptions{Force: true}, gh, "", ""},
		{"builds without --build", base, InitOptions{Study: filepath.Join(repo, "bench", "study.yaml"), Force: true}, "",
			"runs ${env.TANDEM_BASE} and ${env.TANDEM_HEAD}, which only the pipeline's build step sets", ""},
		{"builds", build, InitOptions{Study: filepath.Join(repo, "bench", "study.yaml"), GitLab: true}, gl, "", ""},
		{"--build, a study that runs no builds", build, InitOptions{Study: filepath.Join(repo, "env.yaml"), Force: true}, "",
			"with --build the study runs the two builds as ${env.TANDEM_BASE} and ${env.TANDEM_HEAD}; " + filepath.Join(repo, "env.yaml") + " uses ${env.SECRET_A}", ""},
		{"a variable the pipeline sets", base, InitOptions{Study: filepath.Join(repo, "env.yaml"), Force: true}, gh, "",
			"environment variable SECRET_A is not set"},
		{"an unpinned GitLab image", Config{TandemVersion: "v1", Image: "golang:1.26"}, InitOptions{GitLab: true, Force: true}, gl, "",
			"warning: the GitLab image golang:1.26 is not pinned by digest"},
		{"outside the repository", base, InitOptions{Study: outside}, "", "is outside the repository", ""},
		{"no study", base, InitOptions{Dir: t.TempDir()}, "", "ci init: no study named and no tandem.yaml or study.yaml in", ""},
		{"no directory", base, InitOptions{Dir: filepath.Join(repo, "none")}, "", "--dir " + filepath.Join(repo, "none") + ": not a directory", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.o.Dir == "" {
				c.o.Dir = repo
			}
			var log strings.Builder
			c.o.Log = &log
			path, got, err := Init(context.Background(), c.cfg, c.o)
			switch {
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v; want %q", err, c.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if path != c.path || got.TandemVersion != c.cfg.TandemVersion || !strings.Contains(log.String(), c.log) {
				t.Errorf("wrote %s (%+v), log %q; want %s and %q", path, got, log.String(), c.path, c.log)
			}
			if got.Study == "" || filepath.IsAbs(got.Study) || strings.Contains(got.Study, `\`) {
				t.Errorf("Study %q; want the study's path from the root, slashed", got.Study)
			}
			if _, err := os.Stat(path); err != nil {
				t.Error(err)
			}
		})
	}
}
