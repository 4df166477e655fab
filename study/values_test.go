package study

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/values"
)

// valuesStudy is a study whose calls have values: an HTTP call with a
// feeder beside the study file, a gRPC call with a generator.
const valuesStudy = `version: 1
name: values
targets: [{name: a, endpoints: {http: "http://127.0.0.1:1/", grpc: "127.0.0.1:1"}}]
calls:
  get:
    http:
      path: "/users/${users.name}?n=${n}&lit=$${n}"
      headers: {X-Id: "${users.id}", X-Key: "${env.KEY}"}
      body: {id: "${n}", user: "${users.name}", note: "${env.KEY}"}
    values:
      n: {seq: {from: 1}}
      users: {csv: data/users.csv, order: once}
  block:
    grpc: {method: a.B/C, request: {height: "${h}"}}
    values: {h: {zipf: {n: 10, s: 1.1}}}
scenarios:
  - {name: get, call: get, load: {concurrency: 1}}
  - {name: block, call: block, load: {rate: 10}, duration: 1s}
`

func writeValuesStudy(t *testing.T) string {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "users.csv"), []byte("id,name\n7,ann\n8,bo b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "study.yaml")
	if err := os.WriteFile(file, []byte(valuesStudy), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// A call's values are parsed with their feeder's path resolved against
// the study file's directory, are no case variables, and compile (after
// ResolveEnv) into templates that render each request's values where the
// call names them: the path percent-encoded, "$${" a literal "${", an
// environment variable's value as it is, a whole placeholder typed.
func TestCallValues(t *testing.T) {
	file := writeValuesStudy(t)
	s, err := Read(file)
	if err != nil {
		t.Fatal(err)
	}
	get := s.Calls["get"]
	want := map[string]values.Spec{
		"n":     values.Seq{From: 1},
		"users": values.File{Path: filepath.Join(filepath.Dir(file), "data", "users.csv"), Format: values.CSV, Order: values.Once},
	}
	if !reflect.DeepEqual(get.ValueSpecs, want) {
		t.Fatalf("specs %#v; want %#v", get.ValueSpecs, want)
	}
	if vars := get.CaseVars(); len(vars) != 0 {
		t.Fatalf("case variables %v; want none (values are not case variables)", vars)
	}
	if once := get.OnceFeeders(); !slices.Equal(once, []string{"users"}) {
		t.Fatalf("once feeders %v; want [users]", once)
	}
	resolved, _, err := get.ResolveEnv(func(string) (string, bool) { return "k${x}", true })
	if err != nil {
		t.Fatal(err)
	}
	set, err := values.Open(context.Background(), s.Seed, get.ValueSpecs)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	tm, err := resolved.Compile(set)
	if err != nil {
		t.Fatal(err)
	}
	r := set.NewRenderer()
	render := func(t *values.Template, i uint64) string {
		b, err := t.Append(nil, r, i, time.Time{})
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	for i, w := range []struct{ path, id, key, body string }{
		{"/users/ann?n=1&lit=${n}", "7", "k${x}", `{"id":1,"note":"k${x}","user":"ann"}`},
		{"/users/bo%20b?n=2&lit=${n}", "8", "k${x}", `{"id":2,"note":"k${x}","user":"bo b"}`},
	} {
		got := []string{render(tm.Path, uint64(i)), render(tm.Headers["X-Id"], uint64(i)), render(tm.Headers["X-Key"], uint64(i)), render(tm.Body, uint64(i))}
		if !slices.Equal(got, []string{w.path, w.id, w.key, w.body}) {
			t.Errorf("request %d: %q; want %q", i, got, []string{w.path, w.id, w.key, w.body})
		}
	}
	if !tm.Headers["X-Key"].Static() || tm.Path.Static() {
		t.Errorf("X-Key static %v, path static %v; want true, false", tm.Headers["X-Key"].Static(), tm.Path.Static())
	}
}

// A call without values keeps what ResolveEnv always did: $${ is a
// literal ${ and an environment variable's ${ is sent as it is.
func TestResolveEnvWithoutValues(t *testing.T) {
	c := &Call{HTTP: &HTTPCall{Path: "/a/${env.K}/$${x}"}}
	out, _, err := c.ResolveEnv(func(string) (string, bool) { return "${y}", true })
	if err != nil {
		t.Fatal(err)
	}
	if out.HTTP.Path != "/a/${y}/${x}" {
		t.Fatalf("path %q; want /a/${y}/${x}", out.HTTP.Path)
	}
}
