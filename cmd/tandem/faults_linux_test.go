package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/results"
)

// A full disk, as a real process meets it: tandem run as a child whose
// files may not grow past a limit (RLIMIT_FSIZE, set by prlimit; SIGXFSZ
// ignored, so a write that crosses it fails with EFBIG as on a full disk).
// The run stops with the write's error and exit 2, and what is on disk is
// the last results.json written whole, valid against the schema, with no
// temporary file left beside it.
func TestDiskFullKeepsTheLastResults(t *testing.T) {
	tooltest.Long(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) is not on PATH")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("pong")) }))
	defer srv.Close()
	dir := t.TempDir()
	studyPath := filepath.Join(dir, "study.yaml")
	scenarios := ""
	const n = 12 // each adds a few KB of rounds to results.json
	for i := range n {
		scenarios += fmt.Sprintf("  - {name: s%d, call: ping, load: {concurrency: 1}, requests: 200}\n", i+1)
	}
	write(t, studyPath, `version: 1
name: disk full
defaults: {rounds: 2, warmup: 10ms}
targets: [{name: web, endpoints: {http: "`+srv.URL+`/"}}]
calls:
  ping: {http: {method: GET, path: /}}
scenarios:
`+scenarios)
	out := filepath.Join(dir, "out")
	// room for the first few scenarios' results, not for all twelve
	cmd := exec.Command("sh", "-c", `trap "" XFSZ; exec "$0" --fsize=24000 -- "$@"`, prlimit, os.Args[0], "run", studyPath, "--out", out)
	stdout, err := cmd.Output()
	var ee *exec.ExitError
	if err == nil || !errors.As(err, &ee) || ee.ExitCode() != exitBadInput {
		t.Fatalf("exit %v; want status %d\nstdout:\n%s", err, exitBadInput, stdout)
	}
	if msg := string(ee.Stderr); !strings.Contains(msg, "file too large") || !strings.Contains(msg, "results.json") {
		t.Errorf("stderr does not name the failed write:\n%s", msg)
	}
	path := filepath.Join(out, "results.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no results.json kept: %v", err)
	}
	if err := results.Validate(data); err != nil {
		t.Errorf("the results.json kept is not whole: %v", err)
	}
	r, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped with %d scenarios kept: %s", len(r.Scenarios), strings.TrimSpace(string(ee.Stderr)))
	if len(r.Scenarios) == 0 || len(r.Scenarios) == n && len(r.Scenarios[n-1].Rounds) == 2 {
		t.Errorf("results.json holds %d scenarios: want the first ones, not none or all", len(r.Scenarios))
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("a temporary file was left: %s", e.Name())
		}
	}
}
