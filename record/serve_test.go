package record

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseUpstream(t *testing.T) {
	for _, c := range []struct {
		to, want, err string
	}{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", ""},
		{"https://h:1/", "https://h:1", ""},
		{"", "", "--to: want the server to forward to"},
		{"%zz", "", `--to "%zz": parse`},
		{"http://u:pw@h:1", "", "credentials in the URL are refused"},
		{"ftp://h/", "", `--to "ftp://h/": want http://HOST:PORT or https://HOST:PORT, without a path`},
		{"http://h:1/api", "", "without a path"},
		{"http://h:1/?q=1", "", "without a path"},
		{"http://h:1/#top", "", "without a path"},
		{"http:///", "", "without a path"},
	} {
		u, err := ParseUpstream(c.to)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseUpstream(%q): %v; want %q", c.to, err, c.err)
		case c.err == "" && (err != nil || u.String() != c.want):
			t.Errorf("ParseUpstream(%q) = %v, %v; want %s", c.to, u, err, c.want)
		}
	}
}

// ImportHAR writes a HAR file's entries of one origin as a new recording,
// and never overwrites one.
func TestImportHAR(t *testing.T) {
	out := filepath.Join(t.TempDir(), "har.jsonl")
	h, st, err := ImportHAR("testdata/sample.har", out, HAROptions{})
	if err != nil || h.Upstream != "http://127.0.0.1:8080" || st != (HARStats{Imported: 3, NotHTTP: 1, OtherOrigin: 1}) {
		t.Fatalf("ImportHAR: %+v, %+v, %v", h, st, err)
	}
	if _, _, err := ImportHAR("testdata/sample.har", out, HAROptions{}); err == nil || !strings.Contains(err.Error(), "--out "+out+" exists") {
		t.Errorf("a second import to the same file: %v", err)
	}
	if _, _, err := ImportHAR("testdata/sample.har", "", HAROptions{}); err == nil || err.Error() != "--out: want the recording's file (.jsonl)" {
		t.Errorf("no --out: %v", err)
	}
	if _, _, err := ImportHAR("testdata/none.har", filepath.Join(t.TempDir(), "x.jsonl"), HAROptions{}); !os.IsNotExist(err) {
		t.Errorf("no HAR file: %v", err)
	}
}

// syncBuffer is a Log written by Serve while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listening = regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)

// Serve forwards and records until its context ends, then closes the
// recording, says how many exchanges it holds and returns nil.
func TestServe(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello "+r.URL.Path) }))
	defer up.Close()
	u, err := ParseUpstream(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "rec.jsonl")
	var log syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{Listen: "127.0.0.1:0", Upstream: u, Out: out, MaxBody: DefaultMaxBody, Log: &log})
	}()
	var addr string
	for deadline := time.Now().Add(time.Minute); addr == ""; time.Sleep(10 * time.Millisecond) {
		if m := listening.FindStringSubmatch(log.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("Serve did not say where it listens:\n%s", log.String())
		}
	}
	for _, p := range []string{"/a", "/b"} {
		resp, err := http.Get("http://" + addr + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "hello "+p {
			t.Errorf("%s: %q through the recorder", p, body)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after its context ended: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Serve still running a minute after its context ended")
	}
	if !strings.Contains(log.String(), "2 exchanges recorded in "+out) {
		t.Errorf("log:\n%s", log.String())
	}
	rd, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	n := 0
	for rd.Scan() {
		n++
	}
	if rd.Err() != nil || n != 2 || rd.Header().Source != "proxy" || rd.Header().Upstream != up.URL {
		t.Errorf("%d exchanges, %v, header %+v", n, rd.Err(), rd.Header())
	}
}

// Serve refuses an address beyond loopback unless told, and an existing
// recording, before it serves.
func TestServeRefuses(t *testing.T) {
	u, _ := ParseUpstream("http://127.0.0.1:1")
	exists := filepath.Join(t.TempDir(), "exists.jsonl")
	if err := os.WriteFile(exists, []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		listen, out, err string
	}{
		{"0.0.0.0:0", "x.jsonl", "--listen 0.0.0.0:0 is not a loopback address: refused without --listen-any"},
		{":0", "x.jsonl", "--listen :0 is not a loopback address"},
		{"8081", "x.jsonl", `--listen "8081": want HOST:PORT, e.g. 127.0.0.1:8081`},
		{"127.0.0.1:0", exists, "--out " + exists + " exists: choose another file"},
		{"localhost:0", "", "--out: want the recording's file (.jsonl)"},
	} {
		err := Serve(context.Background(), ServeOptions{Listen: c.listen, Upstream: u, Out: c.out, Log: io.Discard})
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("Serve on %s to %q: %v; want %q", c.listen, c.out, err, c.err)
		}
	}
	if b, _ := os.ReadFile(exists); string(b) != "keep me\n" {
		t.Errorf("an existing recording was changed: %q", b)
	}
}
