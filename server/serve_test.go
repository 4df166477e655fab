package server

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/history"
)

func TestReadTokens(t *testing.T) {
	dir := t.TempDir()
	hash := HashToken(token)
	for _, c := range []struct {
		name, text string
		mustExist  bool
		want       []string
		err        string
	}{
		{"missing, default", "", false, nil, ""},
		{"missing, named", "", true, nil, "--token-file: open "},
		{"comments and blank lines", "# ci\n\n  " + strings.ToUpper(hash) + "  \n", true, []string{hash}, ""},
		{"not a hash", "# ok\nnot-a-hash\n", true, nil, ":2: want a token's SHA-256 in hex"},
		{"too short", hash[:62] + "\n", true, nil, ":1: want a token's SHA-256 in hex"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			if c.text != "" {
				if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReadTokens(path, c.mustExist)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("error %v; want %q", err, c.err)
				}
				return
			}
			if err != nil || strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("%q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// NewToken keeps only the token's hash, in a private file, one line per
// token.
func TestNewToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "d", "tokens")
	var toks []string
	for range 2 {
		tok, err := NewToken(file)
		if err != nil || len(tok) != 64 {
			t.Fatalf("NewToken: %q, %v", tok, err)
		}
		toks = append(toks, tok)
	}
	hashes, err := ReadTokens(file, true)
	if err != nil || len(hashes) != 2 || hashes[0] != HashToken(toks[0]) || hashes[1] != HashToken(toks[1]) || toks[0] == toks[1] {
		t.Errorf("file holds %q (%v); want the hashes of %q", hashes, err, toks)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v", err)
	}
	if fi, err := os.Stat(filepath.Dir(file)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("token directory: %v", err)
	}
}

// Serve answers until its context ends, then returns nil.
func TestServeStopsWithContext(t *testing.T) {
	st, err := history.Open(context.Background(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(st, Options{Hosts: []string{"127.0.0.1"}}).Serve(ctx, ln) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /: %d", resp.StatusCode)
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
}

func TestAllowedHosts(t *testing.T) {
	for _, c := range []struct {
		listen   string
		extra    []string
		tokens   int
		insecure bool
		want     string
		err      string
	}{
		{"127.0.0.1:7420", nil, 0, false, "127.0.0.1,localhost,127.0.0.1,::1", ""},
		{"[::1]:7420", []string{"bench.example"}, 0, false, "::1,localhost,127.0.0.1,::1,bench.example", ""},
		{"localhost:0", nil, 0, false, "localhost,localhost,127.0.0.1,::1", ""},
		{"0.0.0.0:7420", nil, 0, false, "", "--listen 0.0.0.0:7420 is not loopback: refused without a token file"},
		{"0.0.0.0:7420", nil, 1, false, "0.0.0.0,localhost,127.0.0.1,::1", ""},
		{"10.0.0.1:7420", nil, 0, true, "10.0.0.1,localhost,127.0.0.1,::1", ""},
		{"nohost", nil, 0, false, "", "--listen nohost is not loopback"},
		{"nohost", nil, 1, false, "", `--listen "nohost": address nohost: missing port in address`},
	} {
		got, err := AllowedHosts(c.listen, c.extra, c.tokens, c.insecure)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("AllowedHosts(%s, %d tokens): %v; want %q", c.listen, c.tokens, err, c.err)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != c.want {
			t.Errorf("AllowedHosts(%s, %d tokens) = %q, %v; want %s", c.listen, c.tokens, got, err, c.want)
		}
	}
}
