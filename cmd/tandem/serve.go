package main

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/history"
	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/server"
)

// defaultTokens is where token hashes are kept when no file is named.
var defaultTokens = filepath.Join(filepath.Dir(history.DefaultPath), "tokens")

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
			tokens, err := server.ReadTokens(cmp.Or(tokenFile, defaultTokens), tokenFile != "")
			if err != nil {
				return cli.BadInput(err)
			}
			allowed, err := server.AllowedHosts(listen, hosts, len(tokens), insecure)
			if err != nil {
				return cli.BadInput(err)
			}
			return withHistory(cmd.Context(), db, func(s *history.Store) error {
				ln, err := net.Listen("tcp", listen)
				if err != nil {
					return cli.BadInput(err)
				}
				fmt.Fprintf(stdout, "tandem serve: http://%s/ (history %s; %s)\n", ln.Addr(), s.Where, human.Plural(len(tokens), "write token"))
				return server.New(s, server.Options{TokenHashes: tokens, Hosts: allowed}).Serve(cmd.Context(), ln)
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
			token, err := server.NewToken(file)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s\n(its hash is in %s; this is the only time the token is shown)\n", token, file)
			return nil
		},
	}
	c.Flags().StringVar(&file, "file", defaultTokens, "the file the token's hash is added to")
	return c
}
