package study

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBind(t *testing.T) {
	s, err := Parse("bind.yaml", []byte(`
version: 1
name: bind
targets: [{name: a, endpoints: {http: "http://127.0.0.1:1/"}}]
calls:
  g: {grpc: {method: p.S/M, request: {height: "${h}", label: "block ${h} of ${name}", keep: "${env.X}", lit: "$${h}"}}}
  j: {jsonrpc: {method: m, params: ["${addrs}", "${h}"]}}
  h: {http: {path: "/block/${h}?v=${name}", body: {n: "${h}"}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{"h": int64(7), "name": "x", "addrs": []any{"a", "a"}}
	js := func(v Value) string { b, _ := json.Marshal(v.V); return string(b) }
	g, err := s.Calls["g"].Bind(vars)
	if err != nil {
		t.Fatal(err)
	}
	// still a template: ${env.X} and the escaped $${h} are for ResolveEnv
	if got := js(g.GRPC.Request); got != `{"height":7,"keep":"${env.X}","label":"block 7 of x","lit":"$${h}"}` {
		t.Errorf("grpc request: %s", got)
	}
	sent, _, err := g.ResolveEnv(func(string) (string, bool) { return "v", true })
	if got := js(sent.GRPC.Request); err != nil || got != `{"height":7,"keep":"v","label":"block 7 of x","lit":"${h}"}` {
		t.Errorf("grpc request sent: %s, %v", got, err)
	}
	// a case's value is sent as it is, whatever it holds
	odd := map[string]any{"h": "${env.X} $${", "name": []any{"${env.X}"}}
	b, err := s.Calls["g"].Bind(odd)
	if err != nil {
		t.Fatal(err)
	}
	sent, _, err = b.ResolveEnv(func(string) (string, bool) { return "v", true })
	if got := js(sent.GRPC.Request); err != nil ||
		got != `{"height":"${env.X} $${","keep":"v","label":"block ${env.X} $${ of [\"${env.X}\"]","lit":"${h}"}` {
		t.Errorf("odd values sent: %s, %v", got, err)
	}
	if js(s.Calls["g"].GRPC.Request) == js(g.GRPC.Request) {
		t.Error("Bind changed the study's own call")
	}
	j, _ := s.Calls["j"].Bind(vars)
	if got := js(j.JSONRPC.Params); got != `[["a","a"],7]` {
		t.Errorf("jsonrpc params: %s", got)
	}
	h, _ := s.Calls["h"].Bind(vars)
	if h.HTTP.Path != "/block/7?v=x" || js(h.HTTP.Body) != `{"n":7}` {
		t.Errorf("http: %s %s", h.HTTP.Path, js(h.HTTP.Body))
	}
	if _, err := s.Calls["g"].Bind(map[string]any{"h": int64(1)}); err == nil || !strings.Contains(err.Error(), "${name}") {
		t.Errorf("a missing variable: %v", err)
	}
}

func TestValues(t *testing.T) {
	gen := func(yaml string) []any {
		t.Helper()
		s, err := Parse("v.yaml", []byte(`
version: 1
name: v
targets: [{name: a, endpoints: {http: "http://127.0.0.1:1/"}}]
calls: {c: {jsonrpc: {method: m, params: ["${x}"]}}}
compat: {cases: [{call: c, vary: {x: `+yaml+`}}]}
`))
		if err != nil {
			t.Fatal(err)
		}
		vars, err := s.Compat.Cases[0].Expand(s.Seed, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []any
		for _, v := range vars {
			out = append(out, v["x"])
		}
		return out
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	if got := js(gen(`{boundaries: {min: 0, max: 10}}`)); got != `[-1,0,1,9,10,11]` {
		t.Errorf("boundaries: %s", got)
	}
	if got := js(gen(`{boundaries: {min: 5, max: 5}}`)); got != `[4,5,6]` {
		t.Errorf("boundaries of one value: %s", got)
	}
	if got := js(gen(`{duplicates: [a, b]}`)); got != `[["a","b"],["a","a","b"],["a","b","a","b"]]` {
		t.Errorf("duplicates: %s", got)
	}
	sample := gen(`{sample: {min: 10, max: 20, count: 5}}`)
	seen := map[int64]bool{}
	for _, v := range sample {
		n := v.(int64)
		if n < 10 || n > 20 || seen[n] {
			t.Errorf("sample: %v out of range or repeated in %v", n, sample)
		}
		seen[n] = true
	}
	if len(sample) != 5 || js(sample) != js(gen(`{sample: {min: 10, max: 20, count: 5}}`)) {
		t.Errorf("sample is not 5 values, the same each time: %v", sample)
	}
	if got := gen(`{sample: {min: 1, max: 3, count: 10}}`); len(got) != 3 {
		t.Errorf("sample of 10 from 3 values: %v; want each once", got)
	}
	if got := gen(`{invalid: hex}`); len(got) < 4 {
		t.Errorf("invalid hex: %v", got)
	}
}

func TestExpandProduct(t *testing.T) {
	c := &Case{Vary: map[string]Value{"a": {V: []any{int64(1), int64(2)}}, "b": {V: []any{"x", "y", "z"}}}}
	vars, err := c.Expand(1, 0)
	if err != nil || len(vars) != 6 || vars[0]["a"] != int64(1) || vars[0]["b"] != "x" || vars[5]["a"] != int64(2) || vars[5]["b"] != "z" {
		t.Errorf("Expand = %v, %v", vars, err)
	}
	if vars, _ := (&Case{}).Expand(1, 0); len(vars) != 1 || len(vars[0]) != 0 {
		t.Errorf("a case without variables: %v", vars)
	}
}

func TestCaseFile(t *testing.T) {
	dir := t.TempDir()
	main := `
version: 1
name: include
targets: [{name: a, endpoints: {http: "http://127.0.0.1:1/"}}]
calls: {c: {jsonrpc: {method: m, params: ["${x}"]}}}
compat:
  file: cases.yaml
  cases: [{call: c, vary: {x: [1]}}]
`
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	path := write("study.yaml", main)
	write("cases.yaml", "cases:\n  - {call: c, vary: {x: [2, 3]}}\n")
	s, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Compat.Cases) != 2 {
		t.Errorf("%d cases; want the study's and the file's", len(s.Compat.Cases))
	}
	write("cases.yaml", "cases:\n  - {call: c}\n  - {call: nope, mode: loud}\n")
	_, err = Read(path)
	want := filepath.Join(dir, "cases.yaml") + `:3:12: cases[1].call: undefined call "nope" (one of: c)`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "cases.yaml:3:24: cases[1].mode") {
		t.Errorf("error in the case file: %v; want %s and the mode", err, want)
	}
	// nothing in a case file is resolved from the environment
	write("cases.yaml", "cases:\n  - {call: c, vary: {x: [\"${env.HOME}\"]}}\n")
	_, err = Read(path)
	want = filepath.Join(dir, "cases.yaml") + `:2:26: cases[0].vary.x[0]: ${env.HOME} is not resolved here`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("${env.*} in the case file: %v; want %s", err, want)
	}
	write("study.yaml", strings.Replace(main, "cases.yaml", "missing.yaml", 1))
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "compat.file") {
		t.Errorf("a missing case file: %v", err)
	}
}

// Every example study in the repository parses and validates.
func TestExamplesValidate(t *testing.T) {
	files, err := filepath.Glob("../examples/*/study.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example studies found: %v", err)
	}
	for _, f := range files {
		s, err := Read(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if s.Compat != nil {
			for i := range s.Compat.Cases {
				if _, err := s.Compat.Cases[i].Expand(s.Seed, i); err != nil {
					t.Errorf("%s: compat case %d: %v", f, i, err)
				}
			}
		}
	}
}

func TestExpandEnv(t *testing.T) {
	t.Setenv("TANDEM_TEST_TOKEN", "s3cret")
	got, err := ExpandEnv("Bearer ${env.TANDEM_TEST_TOKEN} ${port.x}")
	if err != nil || got != "Bearer s3cret ${port.x}" {
		t.Errorf("ExpandEnv = %q, %v", got, err)
	}
	if _, err := ExpandEnv("${env.TANDEM_TEST_UNSET_VARIABLE}"); err == nil {
		t.Error("an unset variable expanded")
	}
}
