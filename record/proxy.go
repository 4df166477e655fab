package record

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ProxyOptions configures a Proxy.
type ProxyOptions struct {
	// Upstream is the server requests are forwarded to: http:// (HTTP/1.1,
	// or h2c for HTTP/2 and gRPC requests) or https://.
	Upstream *url.URL
	// Writer receives every exchange; Start is its header's Start.
	Writer *Writer
	Start  time.Time
	// Rules redact each exchange before it is written.
	Rules Rules
	// Fail, if set, hears the first error writing the recording (the
	// proxy goes on forwarding; the caller decides whether to stop).
	Fail func(error)
}

// Proxy is a reverse proxy that forwards every request to the upstream as
// it came (HTTP/1.1 as HTTP/1.1, HTTP/2 as HTTP/2, gRPC with its trailers)
// and records each exchange once its answer is complete.
type Proxy struct {
	o      ProxyOptions
	rp     *httputil.ReverseProxy
	wg     sync.WaitGroup
	once   sync.Once
	failed atomic.Bool // the recording could not be written: forward no more
}

// NewProxy returns a Proxy for o.
func NewProxy(o ProxyOptions) (*Proxy, error) {
	u := o.Upstream
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream %v: want http://HOST:PORT or https://HOST:PORT", u)
	}
	if o.Writer == nil {
		return nil, errors.New("no writer")
	}
	p := &Proxy{o: o}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		Transport:      newTransport(u),
		FlushInterval:  -1, // streams pass at once
		ModifyResponse: p.answer,
		ErrorHandler:   p.noAnswer,
		ErrorLog:       log.New(io.Discard, "", 0), // each failure is in its exchange
	}
	return p, nil
}

// Server is an http.Server for the proxy: HTTP/1.1 and HTTP/2 without TLS
// (h2c with prior knowledge, as gRPC clients speak it).
func (p *Proxy) Server() *http.Server {
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, MaxHeaderBytes: 1 << 20, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	return srv
}

// Wait waits until every request the proxy was handling is recorded.
func (p *Proxy) Wait() { p.wg.Wait() }

// byProto sends HTTP/2 requests (gRPC among them) over HTTP/2 and the
// others over HTTP/1.1.
type byProto struct{ h1, h2 http.RoundTripper }

func (b byProto) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.ProtoMajor == 2 {
		return b.h2.RoundTrip(r)
	}
	return b.h1.RoundTrip(r)
}

// newTransport returns the transports to u: no proxy from the
// environment and no compression added, so requests pass as they came.
func newTransport(u *url.URL) http.RoundTripper {
	mk := func(h2 bool) *http.Transport {
		t := &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second, DisableCompression: true,
			MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second, Protocols: new(http.Protocols),
		}
		switch {
		case !h2:
			t.Protocols.SetHTTP1(true)
		case u.Scheme == "http":
			t.Protocols.SetUnencryptedHTTP2(true)
		default:
			t.Protocols.SetHTTP2(true)
		}
		return t
	}
	return byProto{h1: mk(false), h2: mk(true)}
}

// exchangeKey carries a request's answer state through the reverse proxy.
type exchangeKey struct{}

// answerState is what the reverse proxy's hooks learn of an answer.
type answerState struct {
	resp *http.Response
	body *answerBody
	err  error // no answer from the upstream
}

func (p *Proxy) answer(resp *http.Response) error {
	st, _ := resp.Request.Context().Value(exchangeKey{}).(*answerState)
	if st == nil {
		return nil
	}
	st.resp = resp
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return nil // the reverse proxy needs the upgraded connection's body as it is
	}
	ab := &answerBody{rc: resp.Body}
	if IsGRPC(resp.Header.Get("Content-Type")) {
		ab.frames = newFrameDigest()
		trailersOnly(resp)
	} else {
		ab.sum = sha256.New()
	}
	st.body = ab
	resp.Body = ab
	return nil
}

// grpcTrailers are the fields of a gRPC status.
var grpcTrailers = []string{"Grpc-Status", "Grpc-Message", "Grpc-Status-Details-Bin"}

// trailersOnly passes on a gRPC answer that came trailers-only (its status
// in its headers, no messages) with its status as trailers: the reverse
// proxy may flush the headers before the stream ends, and a client that
// gets the status in headers that do not end the stream never sees it.
func trailersOnly(resp *http.Response) {
	if resp.Header.Get("Grpc-Status") == "" || resp.Trailer.Get("Grpc-Status") != "" {
		return
	}
	if resp.Trailer == nil {
		resp.Trailer = http.Header{}
	}
	for _, k := range grpcTrailers {
		if vs, ok := resp.Header[k]; ok {
			resp.Trailer[k] = vs
			delete(resp.Header, k)
		}
	}
}

func (p *Proxy) noAnswer(w http.ResponseWriter, r *http.Request, err error) {
	if st, _ := r.Context().Value(exchangeKey{}).(*answerState); st != nil {
		st.err = err
	}
	w.WriteHeader(http.StatusBadGateway)
}

// ServeHTTP forwards the request and records the exchange. Once the
// recording cannot be written, requests are refused (503) rather than
// forwarded unrecorded.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.wg.Add(1)
	defer p.wg.Done()
	if p.failed.Load() {
		http.Error(w, "tandem record: the recording cannot be written; the request was not forwarded", http.StatusServiceUnavailable)
		return
	}
	start := time.Now()
	ex := Exchange{Offset: max(start.Sub(p.o.Start), 0), Method: r.Method, Path: r.URL.RequestURI(), Headers: requestHeaders(r.Header)}
	body := &bodyCapture{rc: r.Body, max: max(p.o.Writer.MaxBody(), detectBody)}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = body
	}
	st := &answerState{}
	defer func() {
		// The reverse proxy aborts a copy that fails with a panic
		// (http.ErrAbortHandler): record the exchange, then let it go on.
		v := recover()
		ex.Duration = time.Since(start)
		ex.Body, ex.BodySize = body.taken(r.ContentLength)
		ex.Protocol = Detect(r.ProtoMajor, r.Header.Get("Content-Type"), ex.Body)
		ex.Body = ex.Body[:min(len(ex.Body), p.o.Writer.MaxBody())]
		st.fill(&ex, v != nil)
		p.o.Rules.Apply(&ex)
		if err := p.o.Writer.Write(&ex); err != nil && !errors.Is(err, ErrClosed) {
			p.failed.Store(true)
			p.once.Do(func() {
				if p.o.Fail != nil {
					p.o.Fail(err)
				}
			})
		}
		if v != nil {
			panic(v)
		}
	}()
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, st)))
}

// fill records the answer in ex; aborted says the copy to the client
// failed.
func (st *answerState) fill(ex *Exchange, aborted bool) {
	switch {
	case st.err != nil:
		ex.Error = "no answer from the upstream: " + st.err.Error()
		return
	case st.resp == nil:
		ex.Error = "no answer from the upstream"
		return
	}
	resp := st.resp
	ex.Status = resp.StatusCode
	for _, k := range []string{"Content-Type", "Content-Encoding", "Grpc-Encoding"} {
		if vs := resp.Header.Values(k); len(vs) > 0 {
			if ex.AnswerHeaders == nil {
				ex.AnswerHeaders = http.Header{}
			}
			ex.AnswerHeaders[k] = vs
		}
	}
	ab := st.body
	if ab == nil {
		ex.Error = "the connection switched protocols: what it carried after the upgrade is not recorded"
		return
	}
	ex.AnswerSize = ab.size()
	if ab.frames != nil {
		ex.Messages = ab.frames.d.Count()
		st.grpcStatus(ex)
	}
	if done, err := ab.done(); !done || aborted {
		ex.Error = "the answer was cut short"
		if err != nil {
			ex.Error += ": " + err.Error()
		}
		return
	}
	ex.Digest = ab.digest()
}

// grpcStatus takes a gRPC answer's status from its trailers (or its
// headers, for a trailers-only answer).
func (st *answerState) grpcStatus(ex *Exchange) {
	for _, h := range []http.Header{st.resp.Trailer, st.resp.Header} {
		if s := h.Get("Grpc-Status"); s != "" {
			if code, err := strconv.Atoi(s); err == nil && code >= 0 {
				ex.GRPCStatus = &code
			}
			if msg, err := url.PathUnescape(h.Get("Grpc-Message")); err == nil {
				ex.GRPCMessage = msg
			}
			return
		}
	}
}

// hopByHop are the headers that concern one connection, not the request
// (RFC 9110, 7.6.1), with those the request's sender derives itself.
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	"Host", "Content-Length"}

// requestHeaders is a copy of h without hop-by-hop headers (and those its
// Connection header names).
func requestHeaders(h http.Header) http.Header {
	out := h.Clone()
	for _, v := range h.Values("Connection") {
		for _, name := range splitTokens(v) {
			out.Del(name)
		}
	}
	for _, k := range hopByHop {
		out.Del(k)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func splitTokens(v string) []string {
	var out []string
	for _, t := range strings.Split(v, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// detectBody is how much of a request body is kept to tell JSON-RPC from
// HTTP when the recording keeps less: a JSON-RPC request longer than both
// is recorded as HTTP.
const detectBody = 64 << 10

// bodyCapture keeps the first max bytes of a request body as the reverse
// proxy reads it, and counts them all.
type bodyCapture struct {
	rc  io.ReadCloser
	max int

	mu  sync.Mutex
	buf []byte
	n   int64
}

func (b *bodyCapture) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.mu.Lock()
	b.n += int64(n)
	if keep := min(n, b.max-len(b.buf)); keep > 0 {
		b.buf = append(b.buf, p[:keep]...)
	}
	b.mu.Unlock()
	return n, err
}

func (b *bodyCapture) Close() error { return b.rc.Close() }

// taken is the body kept and the body's size: what was read, or the
// declared length when the upstream answered before reading it all.
func (b *bodyCapture) taken(declared int64) ([]byte, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf, max(b.n, declared, int64(len(b.buf)))
}

// answerBody digests an answer's body as the reverse proxy copies it.
type answerBody struct {
	rc     io.ReadCloser
	sum    hash.Hash
	frames *frameDigest

	mu  sync.Mutex
	n   int64
	eof bool
	err error
}

func (a *answerBody) Read(p []byte) (int, error) {
	n, err := a.rc.Read(p)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n += int64(n)
	if a.frames != nil {
		a.frames.Write(p[:n])
	} else {
		a.sum.Write(p[:n])
	}
	switch {
	case err == io.EOF:
		a.eof = true
	case err != nil && a.err == nil:
		a.err = err
	}
	return n, err
}

func (a *answerBody) Close() error { return a.rc.Close() }

func (a *answerBody) size() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// done reports whether the body was read to its end (and, for gRPC, ended
// between messages), or the error that cut it.
func (a *answerBody) done() (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ok := a.eof && a.err == nil
	if a.frames != nil && !a.frames.complete() {
		ok = false
		if a.err == nil {
			a.err = errors.New("it ends inside a gRPC message")
		}
	}
	return ok, a.err
}

func (a *answerBody) digest() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.frames != nil {
		return a.frames.d.Sum()
	}
	return hex.EncodeToString(a.sum.Sum(nil))
}
