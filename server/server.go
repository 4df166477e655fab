// Package server is tandem serve: the run history's pages and API on one
// origin, for people and CI. It sends nothing anywhere (no telemetry, no
// CORS, no external asset), answers only to the hosts it is told, and
// takes writes only with a token, which it keeps as a hash.
package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/history"
)

// Limits of a request.
const (
	// MaxUpload bounds a run's results.json, gzipped or not.
	MaxUpload = 64 << 20
)

// Options configure a server.
type Options struct {
	// TokenHashes are the SHA-256 hashes (hex) of the tokens that may
	// write (add, pin). None: writes are refused.
	TokenHashes []string
	// Hosts are the host names (without port) requests may name in their
	// Host header: the listen address's, and any the operator adds.
	Hosts []string
}

// Server serves one history.
type Server struct {
	store *history.Store
	o     Options
	mux   *http.ServeMux
}

// New makes the handler of the history's pages and API.
func New(store *history.Store, o Options) *Server {
	o.TokenHashes = slices.Clone(o.TokenHashes)
	for i, h := range o.TokenHashes { // HashToken's lower case, however the file spelt it
		o.TokenHashes[i] = strings.ToLower(strings.TrimSpace(h))
	}
	o.Hosts = slices.DeleteFunc(slices.Clone(o.Hosts), func(h string) bool { return h == "" }) // no Host is no host of ours
	s := &Server{store: store, o: o, mux: http.NewServeMux()}
	s.routes()
	return s
}

// HashToken is how a token is kept: its SHA-256, in hex.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return hex.EncodeToString(sum[:])
}

// authorized reports whether r carries a token whose hash is known.
func (s *Server) authorized(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return false
	}
	h := HashToken(tok)
	good := 0
	for _, known := range s.o.TokenHashes {
		good |= subtle.ConstantTimeCompare([]byte(h), []byte(known))
	}
	return good == 1
}

// hostAllowed reports whether r's Host names this server (a defence
// against DNS rebinding: a page elsewhere cannot reach it by a name that
// resolves to loopback).
func (s *Server) hostAllowed(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(strings.ToLower(host), "[]")
	for _, ok := range s.o.Hosts {
		if host == strings.ToLower(ok) {
			return true
		}
	}
	return false
}

// ServeHTTP checks the host, sets the headers every answer carries, and
// routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if !s.hostAllowed(r) {
		http.Error(w, fmt.Sprintf("host %q is not this server's (tandem serve --allow-host adds one)", r.Host), http.StatusMisdirectedRequest)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Loopback reports whether addr (host:port) listens on loopback only.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
