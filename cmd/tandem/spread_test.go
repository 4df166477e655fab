package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run --plan of a study under rule: spread shows its fixed design (3
// rounds of 5 s) and neither adaptive rounds nor a family held at α; the
// same study under the default rule shows both.
func TestRunPlanSpreadRule(t *testing.T) {
	study := func(defaults string) string {
		path := filepath.Join(t.TempDir(), "study.yaml")
		src := `version: 1
name: spread
defaults: {` + defaults + `}
targets:
  - {name: a, endpoints: {http: "http://127.0.0.1:1/"}}
  - {name: b, endpoints: {http: "http://127.0.0.1:2/"}}
calls:
  ping: {http: {path: /}}
scenarios:
  - {name: lat, call: ping, load: {concurrency: 1}}
`
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, c := range []struct {
		defaults    string
		want, never []string
	}{
		{"rule: spread", []string{"1 level × 2 targets × 3 rounds of ~5s, calibrated      1m2s\n"}, []string{"adaptive", "verdicts:", "Holm"}},
		{"rule: shift", []string{"1 level × 2 targets × adaptive rounds (", "verdicts: 1 comparison, the chance of any false alarm held at 0.0500"}, []string{"3 rounds of ~5s"}},
	} {
		code, out, stderr := tandem(t, "run", "--plan", study(c.defaults))
		if code != 0 {
			t.Fatalf("%s: run --plan: exit %d: %s", c.defaults, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the plan lacks %q:\n%s", c.defaults, w, out)
			}
		}
		for _, n := range c.never {
			if strings.Contains(out, n) {
				t.Errorf("%s: the plan says %q:\n%s", c.defaults, n, out)
			}
		}
	}
}
