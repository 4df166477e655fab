package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ReadTokens reads a token file (--token-file): one SHA-256 hash (hex) of
// a token per line, # for comments. A missing file is no tokens unless
// mustExist.
func ReadTokens(path string, mustExist bool) ([]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !mustExist {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--token-file: %w", err)
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.ToLower(strings.TrimSpace(line))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, err := hex.DecodeString(line); err != nil || len(line) != 64 {
			return nil, fmt.Errorf("%s:%d: want a token's SHA-256 in hex (tandem history token writes them)", path, i+1)
		}
		out = append(out, line)
	}
	return out, nil
}

// NewToken makes a write token and adds its hash to the token file (made
// 0600, its directory 0700, if need be); the token itself is kept nowhere.
func NewToken(file string) (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token := hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := fmt.Fprintln(f, HashToken(token)); err != nil {
		f.Close()
		return "", err
	}
	return token, f.Close()
}

// AllowedHosts are the names requests to a server listening on listen
// may give in their Host header (Options.Hosts): the listen address's
// host, loopback's names, and extra. An address beyond loopback is
// refused when no token may write (tokens is how many), unless insecure.
func AllowedHosts(listen string, extra []string, tokens int, insecure bool) ([]string, error) {
	if !Loopback(listen) && tokens == 0 && !insecure {
		return nil, fmt.Errorf("--listen %s is not loopback: refused without a token file (tandem history token), or --insecure", listen)
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w", listen, err)
	}
	return append([]string{host, "localhost", "127.0.0.1", "::1"}, extra...), nil
}

// Serve serves s on ln until ctx ends, then gives the requests in flight
// 5 s to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 2 * time.Minute,
		WriteTimeout: 2 * time.Minute, IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		grace, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(grace)
	}
}
