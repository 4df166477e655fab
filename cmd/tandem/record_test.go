package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/record"
)

func TestRecordBadInput(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists.jsonl")
	os.WriteFile(exists, []byte("keep me\n"), 0o600)
	badHAR := filepath.Join(dir, "bad.har")
	os.WriteFile(badHAR, []byte(`{"log": {"entries": [{"startedDateTime": "now", "request": {"method": "GET", "url": "http://h/"}, "response": {"status": 200}}]}}`), 0o644)
	out := filepath.Join(dir, "out.jsonl")
	rec := func(extra ...string) []string {
		return append([]string{"record", "--listen", "127.0.0.1:0", "--to", "http://127.0.0.1:1", "--out", out}, extra...)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"not loopback", []string{"record", "--listen", "0.0.0.0:0", "--to", "http://127.0.0.1:1", "--out", out}, "--listen 0.0.0.0:0 is not a loopback address: refused without --listen-any"},
		{"no host", []string{"record", "--listen", ":0", "--to", "http://127.0.0.1:1", "--out", out}, "--listen :0 is not a loopback address"},
		{"listen not an address", []string{"record", "--listen", "8081", "--to", "http://127.0.0.1:1", "--out", out}, `--listen "8081": want HOST:PORT`},
		{"to not http", []string{"record", "--listen", "127.0.0.1:0", "--to", "ftp://h/", "--out", out}, `--to "ftp://h/": want http://HOST:PORT`},
		{"to with a path", []string{"record", "--listen", "127.0.0.1:0", "--to", "http://h:1/api", "--out", out}, "without a path"},
		{"to with credentials", []string{"record", "--listen", "127.0.0.1:0", "--to", "http://u:pw@h:1", "--out", out}, "credentials in the URL are refused"},
		{"max body", rec("--max-body", "0"), "--max-body 0: want 1 to 8388608 bytes"},
		{"bad header pattern", rec("--redact-header", "("), `--redact-header "("`},
		{"value pattern matching nothing", rec("--redact-value", ".*"), "matches the empty string"},
		{"no out", []string{"record", "--listen", "127.0.0.1:0", "--to", "http://127.0.0.1:1"}, `required flag(s) "out" not set`},
		{"out exists", []string{"record", "--listen", "127.0.0.1:0", "--to", "http://127.0.0.1:1", "--out", exists}, "exists: choose another file"},
		{"import: bad entry", []string{"record", "import-har", badHAR, "--out", out}, `bad.har: log.entries[0]: startedDateTime "now"`},
		{"import: no file", []string{"record", "import-har", filepath.Join(dir, "none.har"), "--out", out}, "no such file"},
		{"import: two files", []string{"record", "import-har", badHAR, badHAR, "--out", out}, "accepts 1 arg(s)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := tandem(t, c.args...)
			if code != exitBadInput || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, %q; want 2 and %q", code, stderr, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created", out)
			}
		})
	}
	if b, _ := os.ReadFile(exists); string(b) != "keep me\n" {
		t.Errorf("an existing file was changed: %q", b)
	}
}

// recordChild is `tandem record` as a child process.
type recordChild struct {
	cmd    *exec.Cmd
	addr   string
	out    string
	done   chan error
	mu     sync.Mutex
	stderr bytes.Buffer
}

var listeningOn = regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)

// startRecord starts `tandem record --to upstream` on a free loopback port
// and waits until it listens.
func startRecord(t *testing.T, upstream string, extra ...string) *recordChild {
	t.Helper()
	r := &recordChild{out: filepath.Join(t.TempDir(), "rec.jsonl"), done: make(chan error, 1)}
	r.cmd = exec.Command(os.Args[0], append([]string{"record", "--listen", "127.0.0.1:0", "--to", upstream, "--out", r.out}, extra...)...)
	pipe, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			r.mu.Lock()
			r.stderr.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
			if m := listeningOn.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		io.Copy(io.Discard, pipe)
		r.done <- r.cmd.Wait()
	}()
	select {
	case r.addr = <-found:
	case err := <-r.done:
		t.Fatalf("tandem record exited: %v\n%s", err, r.log())
	case <-time.After(3 * time.Minute): // a -race child on a busy machine
		r.cmd.Process.Kill()
		t.Fatalf("tandem record did not listen within 3 minutes\n%s", r.log())
	}
	t.Cleanup(func() { r.cmd.Process.Kill() })
	return r
}

func (r *recordChild) log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stderr.String()
}

// stop sends sig and returns the exit status and the exchanges recorded.
func (r *recordChild) stop(t *testing.T, sig os.Signal) (int, []record.Exchange) {
	t.Helper()
	r.cmd.Process.Signal(sig)
	var err error
	select {
	case err = <-r.done:
	case <-time.After(3 * time.Minute):
		r.cmd.Process.Kill()
		t.Fatalf("tandem record still running 3 minutes after %v\n%s", sig, r.log())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	rd, err := record.Open(r.out)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.log())
	}
	defer rd.Close()
	var exs []record.Exchange
	for rd.Scan() {
		exs = append(exs, rd.Exchange())
	}
	if rd.Err() != nil {
		t.Fatal(rd.Err())
	}
	return code, exs
}

func TestRecordStopsCleanly(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello " + r.URL.Path))
	}))
	defer up.Close()
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(cli.SignalName(sig), func(t *testing.T) {
			rc := startRecord(t, up.URL, "--redact-value", "tok_[0-9]+")
			for _, p := range []string{"/a", "/b?key=tok_123", "/c"} {
				req, _ := http.NewRequest("GET", "http://"+rc.addr+p, nil)
				req.Header.Set("Authorization", "Bearer s3cret")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if want := "hello " + strings.Split(p, "?")[0]; string(body) != want {
					t.Errorf("%s: %q through the recorder; want %q", p, body, want)
				}
			}
			code, exs := rc.stop(t, sig)
			if code != 0 {
				t.Errorf("exit %d after %v; want 0\n%s", code, sig, rc.log())
			}
			if len(exs) != 3 || !strings.Contains(rc.log(), "3 exchanges recorded in "+rc.out) {
				t.Fatalf("%d exchanges; want 3\n%s", len(exs), rc.log())
			}
			if exs[1].Path != "/b?key="+record.Marker {
				t.Errorf("path %q; want the token redacted", exs[1].Path)
			}
			data, _ := os.ReadFile(rc.out)
			if bytes.Contains(data, []byte("s3cret")) || bytes.Contains(data, []byte("tok_123")) {
				t.Errorf("a secret is in the recording:\n%s", data)
			}
			if fi, _ := os.Stat(rc.out); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v; want 0600", fi.Mode().Perm())
			}
		})
	}
}

func TestRecordImportHAR(t *testing.T) {
	out := filepath.Join(t.TempDir(), "har.jsonl")
	code, stdout, stderr := tandem(t, "record", "import-har", "../../record/testdata/sample.har", "--out", out)
	if code != 0 || !strings.Contains(stdout, "3 exchanges of http://127.0.0.1:8080 written to "+out+" (skipped: 1 not HTTP, 1 of other origins)") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
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
	if rd.Err() != nil || n != 3 || rd.Header().Source != "har" {
		t.Errorf("read %d exchanges, %v, header %+v", n, rd.Err(), rd.Header())
	}
	if data, _ := os.ReadFile(out); bytes.Contains(data, []byte("s3cret")) {
		t.Error("the HAR's Authorization reached the recording")
	}
}
