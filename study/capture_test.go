package study

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CaseOrder: a case's own order, else compat.order, else parallel; a case
// that makes or uses a capture (in its call or its oracle's) is listed.
func TestCaseOrder(t *testing.T) {
	_, err := Parse("order.yaml", []byte(`
version: 1
name: order
targets:
  - {name: a, endpoints: {http: "http://127.0.0.1:1/"}}
  - {name: o, endpoints: {http: "http://127.0.0.1:2/"}}
calls:
  put: {http: {method: POST, path: "/kv/k", body: {value: "${v}"}}}
  item: {http: {path: "/items/${id}"}}
compat:
  order: listed
  targets: [a]
  oracles: {o: {target: o}}
  cases:
    - {call: put, vary: {v: [1]}, order: parallel}
    - {call: put, vary: {v: [1]}}
    - {call: put, vary: {v: [1]}, capture: {id: id}}
    - {call: item}
    - {call: put, vary: {v: [1]}, order: parallel, oracle: {name: o, call: item, checks: [{path: a, oracle: a}]}}
`))
	if err == nil {
		t.Fatal("order parallel on a case whose oracle uses a capture: accepted")
	}
	want := "order.yaml:19:42: compat.cases[4].order: order parallel on a case that makes or uses a capture (listed, or no order: a case that makes or uses a capture runs in order)"
	if err.Error() != want {
		t.Fatalf("error %v; want %s", err, want)
	}
	s := &Study{Calls: Calls{
		"put":  {HTTP: &HTTPCall{Path: "/kv/k"}},
		"item": {HTTP: &HTTPCall{Path: "/items/${id}"}},
	}}
	c := &Compat{Order: OrderListed, Cases: []Case{
		{Call: "put", Order: OrderParallel},
		{Call: "put"},
		{Call: "put", Capture: map[string]string{"id": "id"}, Order: OrderListed},
		{Call: "item"},
		{Call: "item", Vary: map[string]Value{"id": {V: []any{int64(3)}}}, Order: OrderParallel},
		{Call: "put", Order: OrderParallel, Oracle: &CaseOracle{Call: "item"}},
	}}
	orders := []CaseOrder{OrderParallel, OrderListed, OrderListed, OrderListed, OrderParallel, OrderListed}
	for i, w := range orders {
		if got := c.CaseOrder(s, i); got != w {
			t.Errorf("case %d: order %s; want %s", i, got, w)
		}
	}
	c.Order = ""
	if got := c.CaseOrder(s, 1); got != OrderParallel {
		t.Errorf("no order anywhere: %s; want parallel", got)
	}
	if got := c.CapturesUsed(3, s.Calls["item"]); len(got) != 1 || got[0] != "id" {
		t.Errorf("case 3 uses %v; want [id]", got)
	}
	if got := c.CapturesUsed(4, s.Calls["item"]); len(got) != 0 {
		t.Errorf("case 4 varies id, yet uses %v", got)
	}
	if j := c.CapturedBy(3, "id"); j != 2 {
		t.Errorf("case 3's id made by case %d; want 2", j)
	}
}

// A case of compat.file may use a capture the study's own cases make; a
// case of the study that uses a capture only the file makes is refused
// at its own file:line:col.
func TestCaseFileCaptures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	path := write("study.yaml", `
version: 1
name: include
targets: [{name: a, endpoints: {http: "http://127.0.0.1:1/"}}]
calls:
  put: {http: {method: POST, path: /kv/k, body: "x"}}
  item: {http: {path: "/items/${id}"}}
compat:
  file: cases.yaml
  cases: [{call: put, capture: {id: id}}]
`)
	write("cases.yaml", "cases:\n  - {call: item}\n")
	s, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Compat.CaseOrder(s, 1); got != OrderListed {
		t.Errorf("the file's case that uses id runs %s; want listed", got)
	}
	write("study.yaml", strings.Replace(string(must(os.ReadFile(path))), "cases: [{call: put, capture: {id: id}}]", "cases: [{call: item}]", 1))
	write("cases.yaml", "cases:\n  - {call: put, capture: {id: id}}\n")
	_, err = Read(path)
	want := path + ":10:18: compat.cases[0].call: call item uses ${id}, captured by cases[0] of cases.yaml, after it is sent"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v; want %s", err, want)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
