package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/history"
	"github.com/tandem-bench/tandem/server"
)

// defaultTokens is where token hashes are kept when no file is named.
var defaultTokens = filepath.Join(filepath.Dir(history.DefaultPath), "tokens")

// readTokens reads a token file: one SHA-256 hash (hex) per line, # for
// comments. A missing default file is no tokens.
func readTokens(path string, named bool) ([]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !named {
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

func serveCmd(stdout, stderr io.Writer) *cobra.Command {
	var listen, db, tokenFile string
	var hosts []string
	var insecure bool
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the run history: pages for people, an API for CI, on one origin",
		Long: `serve shows the run history in a browser (studies, each branch's top movers
and series, trends with the spread of each run's rounds, every run's report,
any two runs compared) and takes runs from CI (POST /api/v1/runs).

It listens on 127.0.0.1:7420 by default. It sends nothing anywhere: no
telemetry, no CORS, every asset from itself. Writes (adding and pinning
runs) need a token: tandem history token makes one and keeps only its hash
in --token-file. A non-loopback --listen is refused without a token file,
unless --insecure. Requests must name this server in their Host header
(the listen address's host, localhost, or an --allow-host).`,
		Example: "  tandem serve\n  tandem history token   # once; CI sends it as Authorization: Bearer TOKEN\n" +
			"  curl -H \"Authorization: Bearer $TANDEM_TOKEN\" --data-binary @out/results.json 'http://127.0.0.1:7420/api/v1/runs?branch=main'",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			named := tokenFile != ""
			if !named {
				tokenFile = defaultTokens
			}
			tokens, err := readTokens(tokenFile, named)
			if err != nil {
				return badInput(err)
			}
			if !server.Loopback(listen) && len(tokens) == 0 && !insecure {
				return badInput(fmt.Errorf("--listen %s is not loopback: refused without a token file (tandem history token), or --insecure", listen))
			}
			host, _, err := net.SplitHostPort(listen)
			if err != nil {
				return badInput(fmt.Errorf("--listen %q: %w", listen, err))
			}
			return withHistory(cmd.Context(), db, func(s *history.Store) error {
				allowed := append([]string{host, "localhost", "127.0.0.1", "::1"}, hosts...)
				h := server.New(s, server.Options{TokenHashes: tokens, Hosts: allowed})
				ln, err := net.Listen("tcp", listen)
				if err != nil {
					return badInput(err)
				}
				srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 2 * time.Minute,
					WriteTimeout: 2 * time.Minute, IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10}
				fmt.Fprintf(stdout, "tandem serve: http://%s/ (history %s; %d write token%s)\n", ln.Addr(), s.Where, len(tokens),
					map[bool]string{true: "", false: "s"}[len(tokens) == 1])
				done := make(chan error, 1)
				go func() { done <- srv.Serve(ln) }()
				select {
				case err := <-done:
					return err
				case <-cmd.Context().Done():
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					return srv.Shutdown(ctx)
				}
			})
		},
	}
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:7420", "the address to listen on")
	c.Flags().StringVar(&db, "db", "", "the history: a SQLite file or a postgres:// URL (default: $TANDEM_DB, else "+history.DefaultPath+")")
	c.Flags().StringVar(&tokenFile, "token-file", "", "the hashes of the tokens that may write (default "+defaultTokens+")")
	c.Flags().StringArrayVar(&hosts, "allow-host", nil, "another host name requests may use (repeatable)")
	c.Flags().BoolVar(&insecure, "insecure", false, "allow a non-loopback address without a token file")
	return c
}

func historyTokenCmd(stdout io.Writer) *cobra.Command {
	var file string
	c := &cobra.Command{
		Use:     "token",
		Short:   "Make a write token for tandem serve: print it once, keep only its hash",
		Example: "  tandem history token\n  tandem history token --file /etc/tandem/tokens",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			raw := make([]byte, 32)
			if _, err := rand.Read(raw); err != nil {
				return err
			}
			token := hex.EncodeToString(raw)
			if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
				return err
			}
			f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintln(f, server.HashToken(token)); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s\n(its hash is in %s; this is the only time the token is shown)\n", token, file)
			return nil
		},
	}
	c.Flags().StringVar(&file, "file", defaultTokens, "the file the token's hash is added to")
	return c
}
