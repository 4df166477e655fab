package record

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

// Serve forwards and records until its context ends, then closes the
// recording, says how many exchanges it holds and returns nil.
func TestServe(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello "+r.URL.Path) }))
	defer up.Close()
	u, err := ParseUpstream(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "rec.jsonl")
	var log syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, ServeOptions{Upstream: u, Out: out, MaxBody: DefaultMaxBody, Log: &log}) }()
	for _, p := range []string{"/a", "/b"} {
		resp, err := http.Get("http://" + ln.Addr().String() + p)
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
	if !strings.Contains(log.String(), "listening on "+ln.Addr().String()) || !strings.Contains(log.String(), "2 exchanges recorded in "+out) {
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
	// a recording is never overwritten
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	if err := Serve(context.Background(), ln2, ServeOptions{Upstream: u, Out: out, Log: io.Discard}); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("Serve to an existing recording: %v", err)
	}
}
