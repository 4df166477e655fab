package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/record"
)

// A recorder whose file may not grow past 4 KB (a full disk) stops with
// the write's error and exit 2, and the file it leaves is whole lines.
func TestRecordDiskFull(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // a child process; asserts outcomes, not speed
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) is not on PATH")
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("pong")) }))
	defer up.Close()
	out := filepath.Join(t.TempDir(), "rec.jsonl")
	cmd := exec.Command("sh", "-c", `trap "" XFSZ; exec "$0" --fsize=4000 -- "$@"`, prlimit, os.Args[0],
		"record", "--listen", "127.0.0.1:0", "--to", up.URL, "--out", out)
	rc := &recordChild{cmd: cmd, out: out, done: make(chan error, 1)}
	pipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := pipe.Read(buf)
			rc.mu.Lock()
			rc.stderr.Write(buf[:n])
			if m := listeningOn.FindStringSubmatch(rc.stderr.String()); m != nil && len(addr) == 0 {
				addr <- m[1]
			}
			rc.mu.Unlock()
			if err != nil {
				break
			}
		}
		rc.done <- cmd.Wait()
	}()
	var target string
	select {
	case target = <-addr:
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("no listening line within 3 minutes\n%s", rc.log())
	}
	body := strings.Repeat("a", 300) // each exchange a line of about 600 bytes
	var exit error
	sent, ok, refused := 0, 0, 0
loop:
	for ; sent < 100; sent++ { // 4 KB holds a few: the recorder stops long before 100
		select {
		case exit = <-rc.done:
			break loop
		default:
		}
		resp, err := http.Post("http://"+target+"/", "text/plain", strings.NewReader(body))
		switch {
		case err != nil: // no longer listening
			refused++
		case resp.StatusCode == http.StatusOK:
			ok++
		case resp.StatusCode == http.StatusServiceUnavailable: // not forwarded: it could not be recorded
			refused++
		}
		if err == nil {
			resp.Body.Close()
		}
	}
	if exit == nil {
		select {
		case exit = <-rc.done:
		case <-time.After(3 * time.Minute):
			cmd.Process.Kill()
			t.Fatalf("still recording after %d requests and 3 minutes\n%s", sent, rc.log())
		}
	}
	var ee *exec.ExitError
	if !errors.As(exit, &ee) || ee.ExitCode() != exitBadInput || !strings.Contains(rc.log(), "file too large") {
		t.Fatalf("exit %v; want status 2 with the write's error\n%s", exit, rc.log())
	}
	rd, err := record.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	n := 0
	for rd.Scan() {
		n++
	}
	if rd.Err() != nil || n == 0 {
		t.Errorf("the recording left: %d exchanges, %v; want whole lines, at least one", n, rd.Err())
	}
	// every exchange kept was answered; once the file was full, requests
	// were refused, not forwarded unrecorded to the end
	if ok < n || ok+refused != sent || (refused == 0 && sent == 100) {
		t.Errorf("%d requests: %d answered, %d refused, %d recorded", sent, ok, refused, n)
	}
	t.Logf("%d exchanges kept; %d requests: %d answered, %d refused; %s", n, sent, ok, refused, strings.TrimSpace(rc.log()))
}
