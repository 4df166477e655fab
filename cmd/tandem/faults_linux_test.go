package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

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
	t.Parallel() // child processes and waits; asserts outcomes, not speed
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
	cmd := exec.Command("sh", "-c", `trap "" XFSZ; exec "$0" --fsize=24000 -- "$@"`, prlimit, os.Args[0], "run", studyPath, "--pin=false", "--out", out)
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

// Ctrl-C as a terminal sends it: SIGINT to tandem's whole process group,
// with a target that is a wrapper script (sh starting the server in the
// background and waiting for it). The target runs in a group of its own,
// so the signal reaches tandem only: tandem stops the run, marks the
// results interrupted (not "target exited"), exits 130, and the server the
// wrapper started is gone.
func TestCtrlCToTheGroupWithAWrapperTarget(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // child processes and waits; asserts outcomes, not speed
	dir := t.TempDir()
	studyPath := filepath.Join(dir, "study.yaml")
	write(t, studyPath, `version: 1
name: wrapper
defaults: {rounds: 3, warmup: 100ms, min_duration: 1s}
targets:
  - name: w
    start:
      command: [sh, -c, '"$0" sample serve --build a --blocks 300 --work 10 --data "$1" --grpc "$2" & wait', "${tandem}",
                "${workdir}/data", "127.0.0.1:${port.grpc}"]
      wipe: ["${workdir}/data"]
    endpoints: {grpc: "127.0.0.1:${port.grpc}"}
    ready: {first_answer: {call: ping}, timeout: 5m}
calls:
  ping: {grpc: {method: tandem.sample.v1.Ledger/Ping}}
scenarios:
  - {name: ping, call: ping, load: {concurrency: 1}}
`)
	out := filepath.Join(dir, "out")
	cmd := exec.Command(os.Args[0], "run", studyPath, "--pin=false", "--out", out)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group of its own, as a shell's job
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var addr string
	for deadline := time.Now().Add(5 * time.Minute); addr == ""; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Fatal("no scenario began within 5 minutes")
		}
		if r, err := results.Read(filepath.Join(out, "results.json")); err == nil && len(r.Scenarios) > 0 {
			addr = regexp.MustCompile(`127\.0\.0\.1:\d+`).FindString(strings.Join(r.Targets[0].Command, " "))
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) // the terminal's Ctrl-C
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatal("still running 2 minutes after Ctrl-C")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("exit %v; want status %d", err, exitInterrupted)
	}
	r, err := results.Read(filepath.Join(out, "results.json"))
	if err != nil || !r.Interrupted || r.Targets[0].Error != "" {
		t.Fatalf("results: %v; interrupted %v, target error %q; want interrupted and no target error", err, r != nil && r.Interrupted, r.Targets[0].Error)
	}
	if addr == "" {
		t.Fatal("no address in the target's command")
	}
	if stillListens(addr, 10*time.Second) {
		t.Fatalf("the wrapper's server still listens on %s", addr)
	}
}
