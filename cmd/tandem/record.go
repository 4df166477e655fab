package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/record"
	"github.com/tandem-bench/tandem/server"
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
		return record.Rules{}, badInput(fmt.Errorf("--max-body %d: want 1 to %d bytes", f.maxBody, record.MaxMaxBody))
	}
	r, err := record.CompileRules(f.headers, f.values, f.keep)
	if err != nil {
		return record.Rules{}, badInput(err)
	}
	return r, nil
}

// createRecording creates --out, refusing to overwrite one.
func createRecording(out string, h record.Header) (*record.Writer, error) {
	if out == "" {
		return nil, badInput(errors.New("--out: want the recording's file (.jsonl)"))
	}
	w, err := record.Create(out, h)
	if errors.Is(err, os.ErrExist) {
		return nil, badInput(fmt.Errorf("--out %s exists: choose another file, or remove it (a recording is never overwritten)", out))
	}
	if err != nil {
		return nil, badInput(fmt.Errorf("--out: %w", err))
	}
	return w, nil
}

// upstreamURL checks --to: http:// or https:// and a host, nothing else.
func upstreamURL(to string) (*url.URL, error) {
	u, err := url.Parse(to)
	switch {
	case to == "":
		return nil, badInput(errors.New("--to: want the server to forward to, http://HOST:PORT or https://HOST:PORT"))
	case err != nil:
		return nil, badInput(fmt.Errorf("--to %q: %w", to, err))
	case u.User != nil:
		return nil, badInput(errors.New("--to: credentials in the URL are refused (they would reach the recording's header); send them as headers"))
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return nil, badInput(fmt.Errorf("--to %q: want http://HOST:PORT or https://HOST:PORT, without a path", to))
	}
	u.Path = ""
	return u, nil
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
			up, err := upstreamURL(to)
			if err != nil {
				return err
			}
			rules, err := rf.rules()
			if err != nil {
				return err
			}
			if _, _, err := net.SplitHostPort(listen); err != nil {
				return badInput(fmt.Errorf("--listen %q: want HOST:PORT, e.g. 127.0.0.1:8081", listen))
			}
			if !server.Loopback(listen) && !listenAny {
				return badInput(fmt.Errorf("--listen %s is not a loopback address: refused without --listen-any", listen))
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return badInput(fmt.Errorf("--listen: %w", err))
			}
			defer ln.Close()
			start := time.Now()
			w, err := createRecording(out, record.Header{Upstream: up.String(), Start: start.UTC(), MaxBody: rf.maxBody, SecretsKept: rf.keep, Source: "proxy"})
			if err != nil {
				return err
			}
			return serveRecorder(cmd.Context(), ln, up, w, rules, start, out, stderr)
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
	argsAreInput(c.Commands())
	return c
}

// serveRecorder runs the proxy until ctx ends or the recording cannot be
// written, then closes the recording.
func serveRecorder(ctx context.Context, ln net.Listener, up *url.URL, w *record.Writer, rules record.Rules, start time.Time, out string, stderr io.Writer) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	p, err := record.NewProxy(record.ProxyOptions{Upstream: up, Writer: w, Start: start, Rules: rules, Fail: func(err error) { stop(err) }})
	if err != nil {
		w.Close()
		return err
	}
	srv := p.Server()
	fmt.Fprintf(stderr, "tandem record: listening on %s (HTTP/1.1 and h2c), forwarding to %s, recording to %s; Ctrl-C stops\n", ln.Addr(), up, out)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	progress := newRecordProgress(stderr)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var serveErr error
loop:
	for {
		select {
		case serveErr = <-done:
			break loop
		case <-ctx.Done():
			break loop
		case <-tick.C:
			progress.show(w.Count())
		}
	}
	grace, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		srv.Close() // streams still open after the grace: cut them (each is recorded as cut)
	}
	p.Wait()
	closeErr := w.Close()
	progress.end()
	fmt.Fprintf(stderr, "tandem record: %s recorded in %s\n", human.Plural(int(w.Count()), "exchange"), out)
	switch cause := context.Cause(ctx); {
	case serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed):
		return fmt.Errorf("listen: %w", serveErr)
	case cause != nil && !errors.Is(cause, context.Canceled) && !isInterruption(cause):
		return fmt.Errorf("recording %s: %w (the proxy stopped; the lines written are whole)", out, cause)
	}
	return closeErr
}

// isInterruption reports whether err is a signal's cancellation.
func isInterruption(err error) bool {
	var in interruption
	return errors.As(err, &in)
}

// recordProgress shows how many exchanges are recorded: on a terminal one
// line rewritten each second, elsewhere a line every 10 s when it changed.
type recordProgress struct {
	w     io.Writer
	term  bool
	shown int64
	last  time.Time
}

func newRecordProgress(w io.Writer) *recordProgress {
	return &recordProgress{w: w, term: isTerminal(w)}
}

func (p *recordProgress) show(n int64) {
	if n == p.shown || (!p.term && time.Since(p.last) < 10*time.Second) {
		return
	}
	p.shown, p.last = n, time.Now()
	line := fmt.Sprintf("tandem record: %s recorded", human.Plural(int(n), "exchange"))
	if p.term {
		fmt.Fprintf(p.w, "\r\x1b[K%s", line)
		return
	}
	fmt.Fprintln(p.w, line)
}

// end leaves the terminal's progress line.
func (p *recordProgress) end() {
	if p.term && p.shown > 0 {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
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
			f, err := os.Open(args[0])
			if err != nil {
				return badInput(err)
			}
			defer f.Close()
			h, exs, st, err := record.ReadHAR(f, record.HAROptions{Name: args[0], Origin: origin, MaxBody: rf.maxBody, Rules: rules})
			if err != nil {
				return badInput(err)
			}
			w, err := createRecording(out, h)
			if err != nil {
				return err
			}
			for i := range exs {
				if err := w.Write(&exs[i]); err != nil {
					w.Close()
					return fmt.Errorf("%s: %w", out, err)
				}
			}
			if err := w.Close(); err != nil {
				return err
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
