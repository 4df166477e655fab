package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/progress"
	"github.com/tandem-bench/tandem/record"
)

// redactFlags are the redaction flags record and import-har share.
type redactFlags struct {
	headers, values []string
	keep            bool
	maxBody         int
}

func (f *redactFlags) add(c *cobra.Command) {
	fl := c.Flags()
	fl.StringArrayVar(&f.headers, "redact-header", nil, "also redact the values of headers whose name matches this regular expression (case-insensitive; repeatable)")
	fl.StringArrayVar(&f.values, "redact-value", nil, "redact what matches this regular expression in header values, the query and the body (repeatable)")
	fl.BoolVar(&f.keep, "keep-secrets", false, "redact nothing: keep Authorization, cookies and what the rules match (the file is still created 0600)")
	fl.IntVar(&f.maxBody, "max-body", record.DefaultMaxBody, fmt.Sprintf("keep at most this many bytes of each request body (1 to %d)", record.MaxMaxBody))
}

func (f *redactFlags) rules() (record.Rules, error) {
	if f.maxBody < 1 || f.maxBody > record.MaxMaxBody {
		return record.Rules{}, cli.BadInput(fmt.Errorf("--max-body %d: want 1 to %d bytes", f.maxBody, record.MaxMaxBody))
	}
	r, err := record.CompileRules(f.headers, f.values, f.keep)
	if err != nil {
		return record.Rules{}, cli.BadInput(err)
	}
	return r, nil
}

func recordCmd(stdout, stderr io.Writer) *cobra.Command {
	var listen, to, out string
	var listenAny bool
	var rf redactFlags
	c := &cobra.Command{
		Use:   "record --listen ADDR --to URL --out FILE",
		Short: "Record a service's traffic through a reverse proxy, for replay as compat cases",
		Long: `record is a reverse proxy: it listens on --listen (HTTP/1.1, and HTTP/2 without
TLS as gRPC clients speak it), forwards every request as it came to --to
(HTTP/2 and gRPC over h2c or TLS, trailers included), and appends each
exchange to --out once its answer ends: the request (protocol detected:
http1, h2, grpc or jsonrpc), the answer's status, digest and duration.
docs/recording.md describes the file; a study replays it as compat cases
(compat.recordings).

Authorization, Proxy-Authorization, Cookie and Set-Cookie values are
redacted in the file, and whatever --redact-header and --redact-value match,
unless --keep-secrets; the upstream always gets the request whole. The file
is created with mode 0600 and never overwritten; each line is written whole,
so a recorder killed at any moment loses at most the exchange it was writing.

--listen must be a loopback address unless --listen-any: a recorder open to
the network would let anyone send requests through it, and into the file.
Ctrl-C (or SIGTERM) stops it: requests in flight get 5 s to finish, the file
is synced, and it exits 0.`,
		Example: "  tandem record --listen 127.0.0.1:8081 --to http://127.0.0.1:8080 --out traffic.jsonl\n" +
			"  curl -H \"Authorization: Bearer $TOKEN\" --data '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getinfo\"}' http://127.0.0.1:8081/\n" +
			"  tandem record import-har session.har --out session.jsonl",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			up, err := record.ParseUpstream(to)
			if err != nil {
				return cli.BadInput(err)
			}
			rules, err := rf.rules()
			if err != nil {
				return err
			}
			return record.Serve(cmd.Context(), record.ServeOptions{Listen: listen, ListenAny: listenAny, Upstream: up, Out: out, Rules: rules,
				MaxBody: rf.maxBody, SecretsKept: rf.keep, Log: stderr, Terminal: progress.IsTerminal(stderr)})
		},
	}
	f := c.Flags()
	f.StringVar(&listen, "listen", "", "the loopback address to listen on, HOST:PORT (required)")
	f.StringVar(&to, "to", "", "the server to forward to: http://HOST:PORT or https://HOST:PORT (required)")
	f.StringVar(&out, "out", "", "the recording to write (JSONL; must not exist) (required)")
	f.BoolVar(&listenAny, "listen-any", false, "allow a --listen address that is not loopback")
	rf.add(c)
	c.MarkFlagRequired("listen")
	c.MarkFlagRequired("to")
	c.MarkFlagRequired("out")
	c.AddCommand(importHARCmd(stdout))
	cli.ArgsAreInput(c.Commands())
	return c
}

func importHARCmd(stdout io.Writer) *cobra.Command {
	var out, origin string
	var rf redactFlags
	c := &cobra.Command{
		Use:   "import-har FILE.har --out FILE.jsonl",
		Short: "Turn a HAR 1.2 file (a browser's or a proxy's) into a recording",
		Long: `import-har writes the HTTP entries of one origin of a HAR 1.2 file as a
recording (docs/recording.md), in the order they started: the first
entry's origin unless --origin names another. Entries that are not HTTP
(ws:, data:, …) or go to other origins are skipped and counted; an entry
that cannot be an exchange is an error that names its index
(log.entries[N]). Secrets are redacted as tandem record redacts them.`,
		Example: "  tandem record import-har session.har --out session.jsonl\n" +
			"  tandem record import-har session.har --origin https://api.example --out api.jsonl --redact-header '^x-api-key$'",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rules, err := rf.rules()
			if err != nil {
				return err
			}
			h, st, err := record.ImportHAR(args[0], out, record.HAROptions{Origin: origin, MaxBody: rf.maxBody, Rules: rules})
			if err != nil {
				return cli.BadInput(err)
			}
			fmt.Fprintf(stdout, "%s: %s of %s written to %s (skipped: %d not HTTP, %d of other origins)\n", args[0],
				human.Plural(st.Imported, "exchange"), h.Upstream, out, st.NotHTTP, st.OtherOrigin)
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "the recording to write (JSONL; must not exist) (required)")
	c.Flags().StringVar(&origin, "origin", "", "import only the entries to this scheme://host[:port] (default: the first HTTP entry's)")
	rf.add(c)
	c.MarkFlagRequired("out")
	return c
}
