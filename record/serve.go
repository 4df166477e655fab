package record

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

	"github.com/tandem-bench/tandem/internal/human"
)

// ParseUpstream reads the server a recorder forwards to (--to): http:// or
// https:// and a host, nothing else.
func ParseUpstream(to string) (*url.URL, error) {
	u, err := url.Parse(to)
	switch {
	case to == "":
		return nil, errors.New("--to: want the server to forward to, http://HOST:PORT or https://HOST:PORT")
	case err != nil:
		return nil, fmt.Errorf("--to %q: %w", to, err)
	case u.User != nil:
		return nil, errors.New("--to: credentials in the URL are refused (they would reach the recording's header); send them as headers")
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("--to %q: want http://HOST:PORT or https://HOST:PORT, without a path", to)
	}
	u.Path = ""
	return u, nil
}

// createNew creates the recording out (--out), refusing to overwrite one.
func createNew(out string, h Header) (*Writer, error) {
	if out == "" {
		return nil, errors.New("--out: want the recording's file (.jsonl)")
	}
	w, err := Create(out, h)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("--out %s exists: choose another file, or remove it (a recording is never overwritten)", out)
	}
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	return w, nil
}

// ImportHAR writes the HTTP entries of the HAR file at path that ReadHAR
// keeps as the new recording out; it returns the recording's header and
// what became of the entries.
func ImportHAR(path, out string, o HAROptions) (Header, HARStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, HARStats{}, err
	}
	defer f.Close()
	o.Name = path
	h, exs, st, err := ReadHAR(f, o)
	if err != nil {
		return h, st, err
	}
	w, err := createNew(out, h)
	if err != nil {
		return h, st, err
	}
	for i := range exs {
		if err := w.Write(&exs[i]); err != nil {
			w.Close()
			return h, st, fmt.Errorf("%s: %w", out, err)
		}
	}
	return h, st, w.Close()
}

// ServeOptions configure Serve.
type ServeOptions struct {
	// Listen is the address to listen on, HOST:PORT: a loopback address
	// unless ListenAny, since a recorder open to the network would let
	// anyone send requests through it, and into the recording.
	Listen    string
	ListenAny bool
	// Upstream is the server requests are forwarded to (ParseUpstream).
	Upstream *url.URL
	// Out is the recording to create; it must not exist.
	Out string
	// Rules redact each exchange; MaxBody and SecretsKept go in the
	// recording's header.
	Rules       Rules
	MaxBody     int
	SecretsKept bool
	// Log hears where the recorder listens, how many exchanges it has
	// recorded (on a Terminal one line rewritten each second, else a line
	// every 10 s when the count changed) and, at the end, the total.
	Log      io.Writer
	Terminal bool
}

// failure is the cause of a recorder stopped because its recording could
// not be written.
type failure struct{ err error }

func (f failure) Error() string { return f.err.Error() }

// listen listens on o.Listen, refusing an address beyond loopback unless
// o.ListenAny.
func (o ServeOptions) listen() (net.Listener, error) {
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: want HOST:PORT, e.g. 127.0.0.1:8081", o.Listen)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) && !o.ListenAny {
		return nil, fmt.Errorf("--listen %s is not a loopback address: refused without --listen-any", o.Listen)
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	return ln, nil
}

// Serve records the traffic o.Listen takes in the new recording o.Out,
// each request forwarded to o.Upstream, until ctx ends or the recording
// cannot be written. Requests in flight then get 5 s to finish and the
// recording is closed; a ctx that ends is not an error.
func Serve(ctx context.Context, o ServeOptions) error {
	ln, err := o.listen()
	if err != nil {
		return err
	}
	defer ln.Close()
	start := time.Now()
	w, err := createNew(o.Out, Header{Upstream: o.Upstream.String(), Start: start.UTC(), MaxBody: o.MaxBody, SecretsKept: o.SecretsKept, Source: "proxy"})
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	p, err := NewProxy(ProxyOptions{Upstream: o.Upstream, Writer: w, Start: start, Rules: o.Rules, Fail: func(err error) { stop(failure{err}) }})
	if err != nil {
		w.Close()
		return err
	}
	srv := p.Server()
	fmt.Fprintf(o.Log, "tandem record: listening on %s (HTTP/1.1 and h2c), forwarding to %s, recording to %s; Ctrl-C stops\n", ln.Addr(), o.Upstream, o.Out)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	pr := &progress{w: o.Log, term: o.Terminal}
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
			pr.show(w.Count())
		}
	}
	grace, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		srv.Close() // streams still open after the grace: cut them (each is recorded as cut)
	}
	p.Wait()
	closeErr := w.Close()
	pr.end()
	fmt.Fprintf(o.Log, "tandem record: %s recorded in %s\n", human.Plural(int(w.Count()), "exchange"), o.Out)
	var f failure
	switch {
	case serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed):
		return fmt.Errorf("listen: %w", serveErr)
	case errors.As(context.Cause(ctx), &f) && !errors.Is(f.err, context.Canceled):
		return fmt.Errorf("recording %s: %w (the proxy stopped; the lines written are whole)", o.Out, f.err)
	}
	return closeErr
}

// progress shows how many exchanges are recorded: on a terminal one line
// rewritten each second, elsewhere a line every 10 s when it changed.
type progress struct {
	w     io.Writer
	term  bool
	shown int64
	last  time.Time
}

func (p *progress) show(n int64) {
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
func (p *progress) end() {
	if p.term && p.shown > 0 {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
