package study

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/golden"
)

// head is a study up to its scenarios.
const head = `version: 1
name: bounds
targets:
  - name: a
    endpoints: {http: "http://127.0.0.1:1/"}
calls:
  ping: {http: {path: /}}
`

// errorList parses data against lim and returns its errors, failing the
// test if there are none.
func errorList(t *testing.T, data string, lim limits) ErrorList {
	t.Helper()
	s, err := parse("t.yaml", []byte(data), lim)
	var list ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("parse = %+v, %v; want an ErrorList", s, err)
	}
	return list
}

func TestMissingEnvGolden(t *testing.T) {
	s, err := Read("testdata/env/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(name string) (string, bool) {
		if name == "TANDEM_SET" {
			return "", true // set, if empty
		}
		return "", false
	}
	err = s.MissingEnv(lookup)
	var list ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("MissingEnv = %v; want an ErrorList", err)
	}
	golden.Check(t, "testdata/env/missing.golden", []byte(err.Error()+"\n"))
	if strings.Contains(err.Error(), "TANDEM_SET") || strings.Contains(err.Error(), "LITERAL") {
		t.Errorf("MissingEnv reports a variable that is set or escaped:\n%v", err)
	}
	if err := s.MissingEnv(func(string) (string, bool) { return "x", true }); err != nil {
		t.Errorf("MissingEnv with every variable set = %v; want nil", err)
	}
}

func TestMissingEnvWithoutPositions(t *testing.T) {
	s := &Study{File: "built", Targets: []Target{{Name: "a", Endpoints: map[string]string{"http": "${env.NOPE}"}}}}
	err := s.MissingEnv(func(string) (string, bool) { return "", false })
	want := `built:1:1: targets[0].endpoints.http: environment variable NOPE is not set (set it in tandem's environment)`
	if err == nil || err.Error() != want {
		t.Errorf("MissingEnv = %v; want %s", err, want)
	}
}

func TestOpenFileLimitOfThisMachine(t *testing.T) {
	n, ok := openFileLimit()
	if !ok {
		t.Skip("no open-file limit here")
	}
	if lim := machineLimits(); lim.openFiles != n {
		t.Errorf("machineLimits = %+v; want %d open files", lim, n)
	}
	if n-FileHeadroom > MaxConnections {
		t.Skipf("open-file limit %d is above MaxConnections", n)
	}
	_, err := Parse("t.yaml", []byte(head+fmt.Sprintf("scenarios:\n  - {name: s, call: ping, load: {concurrency: %d}}\n", n)))
	if want := fmt.Sprintf("concurrency %d exceeds the open-file limit %d (ulimit -n)", n, n); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse = %v; want %q", err, want)
	}
	if _, err := Parse("t.yaml", []byte(head+fmt.Sprintf("scenarios:\n  - {name: s, call: ping, load: {concurrency: %d}}\n", max(n-FileHeadroom, 1)))); err != nil {
		t.Errorf("Parse of concurrency at the limit: %v", err)
	}
}

func TestConnectionsWithoutAnOpenFileLimit(t *testing.T) {
	unknown := limits{}
	list := errorList(t, head+"scenarios:\n  - {name: s, call: ping, load: {concurrency: 100001}}\n", unknown)
	want := "t.yaml:9:47: scenarios[0].load.concurrency: concurrency 100001 exceeds tandem's limit of 100,000 connections (at most 100,000: the generator keeps latency histograms for every connection)"
	if len(list) != 1 || list[0].Error() != want {
		t.Errorf("got %v\nwant %s", list, want)
	}
	if _, err := parse("t.yaml", []byte(head+"scenarios:\n  - {name: s, call: ping, load: {concurrency: 100000}}\n"), unknown); err != nil {
		t.Errorf("concurrency 100000 without an open-file limit: %v", err)
	}
	// A huge open-file limit leaves MaxConnections the bound.
	list = errorList(t, head+"scenarios:\n  - {name: s, call: ping, load: {concurrency: 1000000000}}\n", limits{openFiles: 1 << 30})
	if len(list) != 1 || !strings.Contains(list[0].Msg, "tandem's limit of 100,000") {
		t.Errorf("got %v; want tandem's limit", list)
	}
}

func TestFileSizeCap(t *testing.T) {
	big := []byte(head + "description: " + strings.Repeat("x", maxFileSize) + "\n")
	list := errorList(t, string(big), goldenLimits)
	want := fmt.Sprintf("t.yaml:1:1: file of %s bytes is too large (at most 8,388,608 bytes (8 MiB))", thousands(int64(len(big))))
	if len(list) != 1 || list[0].Error() != want {
		t.Errorf("got %v\nwant %s", list, want)
	}

	// Read refuses a 50 MB file by its size, without reading it.
	path := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil { // sparse: nothing written
		t.Fatal(err)
	}
	f.Close()
	_, err = Read(path)
	if want := path + ":1:1: file of 52,428,800 bytes is too large (at most 8,388,608 bytes (8 MiB))"; err == nil || err.Error() != want {
		t.Errorf("Read = %v; want %s", err, want)
	}
	var l ErrorList
	if !errors.As(err, &l) {
		t.Errorf("Read error %T; want an ErrorList (exit 2)", err)
	}
}

func TestSecondDocument(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{head + "---\n", "t.yaml:8:1: a second YAML document (one document: a study file holds one study)"},
		{head + "...\n--- # again\nversion: 2\n", "t.yaml:9:1: a second YAML document (one document: a study file holds one study)"},
		{head + "---\nname: [\n", "t.yaml:9:1: YAML syntax: did not find expected node content"},
	} {
		list := errorList(t, c.data, goldenLimits)
		if list.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.data, list, c.want)
		}
	}
	// The first document's own errors are still reported.
	list := errorList(t, head+"scenarios:\n  - {name: s, call: nope, load: {concurrency: 1}}\n---\n", goldenLimits)
	if len(list) != 2 || !strings.Contains(list[0].Msg, `undefined call "nope"`) {
		t.Errorf("got %v; want the undefined call and the second document", list)
	}
}

func TestQuickKeepsABatch(t *testing.T) {
	s, err := parse("t.yaml", []byte(head+`scenarios:
  - {name: slow, call: ping, load: {batch: {per_period: 1, period: 3s}}, duration: 30s}
  - {name: fast, call: ping, load: {batch: {per_period: 1, period: 100ms}}, duration: 30s}
  - {name: open, call: ping, load: {rate: 10}, duration: 30s}
`), goldenLimits)
	if err != nil {
		t.Fatal(err)
	}
	s.Quick()
	for i, want := range []time.Duration{3 * time.Second, time.Second, time.Second} {
		if got := s.Scenarios[i].Duration; got != want {
			t.Errorf("quick %s: duration %v; want %v", s.Scenarios[i].Name, got, want)
		}
	}
}

// --quick caps an adaptive scenario's rounds (the defaults set them to
// the full cap before Quick runs) and leaves a fixed count alone.
func TestQuickCapsAdaptiveRounds(t *testing.T) {
	s, err := parse("t.yaml", []byte(head+`scenarios:
  - {name: adaptive, call: ping, load: {concurrency: 1}}
  - {name: fixed, call: ping, load: {concurrency: 1}, rounds: 7}
`), goldenLimits)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Scenarios[0].Rounds; got != DefaultMaxRounds {
		t.Fatalf("adaptive rounds before --quick %d; want %d", got, DefaultMaxRounds)
	}
	s.Quick()
	for i, want := range []int{40, 7} {
		if got := s.Scenarios[i].Rounds; got != want {
			t.Errorf("quick %s: rounds %d; want %d", s.Scenarios[i].Name, got, want)
		}
	}
}
