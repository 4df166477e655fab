// Package httpdrv sends HTTP requests and JSON-RPC 2.0 calls over HTTP/1.1
// (fasthttp, for a generator that is not the bottleneck) or HTTP/2 (TLS or
// h2c, through net/http). Each connection is its own client
// with one TCP connection; the request is built once, and for JSON-RPC only
// the id changes per call, unless Options.Vary gives each request number
// values of its own in its path, headers or body. Answers are checked
// without decoding them whole.
package httpdrv

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tandem-bench/tandem/driver/internal/vary"
	"github.com/tandem-bench/tandem/driver/jsonrpc"
	"github.com/tandem-bench/tandem/driver/quickack"
	"github.com/tandem-bench/tandem/load"
	"github.com/valyala/fasthttp"
)

// Options describes one HTTP request or JSON-RPC call. Requests carry
// only the headers they need (Host, and Content-Length and Content-Type
// for a body or a call) and those in Headers: no User-Agent unless given.
type Options struct {
	// URL is the full request URL, http:// or https://.
	URL string
	// Method is the HTTP method; default GET, or POST with a body.
	Method  string
	Headers map[string]string
	Body    []byte
	// RPCMethod, if set, makes this a JSON-RPC 2.0 call with RPCParams
	// (JSON) as its params.
	RPCMethod string
	RPCParams []byte
	// HTTP2 speaks HTTP/2: over TLS for https://, cleartext (h2c) for http://.
	HTTP2 bool
	// Connections, with HTTP2, is how many connections the Conns share,
	// each request a stream (0: a connection each). Conn k is on
	// connection k mod Connections.
	Connections int
	// Insecure skips the verification of the server's certificate.
	Insecure bool
	// QuickACK makes the client acknowledge every segment at once (see
	// package quickack); for diagnosis, not for load.
	QuickACK bool
	// Timeout bounds each request; default 10 s.
	Timeout time.Duration
	// MaxBody bounds a response body; a longer one has status "too-large".
	// Zero means no bound.
	MaxBody int
	// Vary, if set, holds the parts rendered for each request number: the
	// path and query (appended to URL, which must have no query of its
	// own), headers (over those of Headers) and the body (a JSON-RPC
	// call's params), each in place of the fixed one.
	Vary *vary.Parts
}

// Caller sends one request shape.
type Caller struct {
	opts Options
	u    *url.URL
	rpc  *jsonrpc.Request
	// shared are the HTTP/2 clients the Conns share (Options.Connections),
	// dialed is how many Conns were dialed.
	mu     sync.Mutex
	shared []*http.Client
	dialed int
}

// varyPath reports whether the request's path varies.
func (c *Caller) varyPath() bool { return c.opts.Vary != nil && c.opts.Vary.Path != nil }

// varyBody reports whether the request's body (a call's params) varies.
func (c *Caller) varyBody() bool { return c.opts.Vary != nil && c.opts.Vary.Body != nil }

// New checks opts and returns a Caller.
func New(opts Options) (*Caller, error) {
	u, err := url.Parse(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", opts.URL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url %q: want http://HOST/… or https://HOST/…", opts.URL)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if !opts.Vary.Varies() {
		opts.Vary = nil
	}
	if opts.Vary != nil && opts.Vary.Path != nil && (u.RawQuery != "" || u.Fragment != "") {
		return nil, fmt.Errorf("url %q: a path with values goes after the URL, which then cannot have a query of its own", opts.URL)
	}
	c := &Caller{opts: opts, u: u}
	c.opts.Headers = map[string]string{}
	for k, v := range opts.Headers {
		c.opts.Headers[k] = v
	}
	if opts.RPCMethod != "" {
		if c.rpc, err = jsonrpc.NewRequest(opts.RPCMethod, opts.RPCParams); err != nil {
			return nil, err
		}
		c.opts.Method = http.MethodPost
		c.opts.Headers["Content-Type"] = "application/json"
	} else if c.opts.Method == "" {
		c.opts.Method = http.MethodGet
		if len(opts.Body) > 0 || c.varyBody() {
			c.opts.Method = http.MethodPost
		}
	}
	return c, nil
}

// Dial returns a connection; the TCP connection opens on the first request.
func (c *Caller) Dial(ctx context.Context) (load.Conn, error) { return c.DialConn(ctx) }

// DialConn is Dial with the concrete type, which can also Ask.
func (c *Caller) DialConn(context.Context) (*Conn, error) {
	cn := c.newConn()
	tlsConf := &tls.Config{InsecureSkipVerify: c.opts.Insecure, ServerName: c.u.Hostname()}
	if c.opts.HTTP2 {
		if n := c.opts.Connections; n > 0 {
			c.mu.Lock()
			defer c.mu.Unlock()
			if len(c.shared) < n {
				c.shared = append(c.shared, c.h2Client(tlsConf))
			}
			cn.h2 = c.shared[c.dialed%n]
			c.dialed++
			return cn, nil
		}
		cn.h2 = c.h2Client(tlsConf)
		return cn, nil
	}
	addr := c.u.Host
	if c.u.Port() == "" {
		addr = net.JoinHostPort(c.u.Hostname(), map[string]string{"http": "80", "https": "443"}[c.u.Scheme])
	}
	// DialDualStack: without it fasthttp keeps only the IPv4 addresses of
	// the host, so [::1] (or a name with only IPv6 addresses) has none and
	// every request fails.
	cn.hc = &fasthttp.HostClient{Addr: addr, IsTLS: c.u.Scheme == "https", TLSConfig: tlsConf, MaxConns: 1, DialDualStack: true,
		MaxIdemponentCallAttempts: 1, DisableHeaderNamesNormalizing: true, DisablePathNormalizing: true,
		MaxResponseBodySize: c.opts.MaxBody, NoDefaultUserAgentHeader: true}
	if c.opts.QuickACK {
		cn.hc.Dial = func(addr string) (net.Conn, error) { return quickack.Dial(context.Background(), "tcp", addr) }
	}
	cn.prepare()
	return cn, nil
}

// h2Client is an HTTP/2 client of one connection.
func (c *Caller) h2Client(tlsConf *tls.Config) *http.Client {
	tr := &http.Transport{TLSClientConfig: tlsConf, DisableCompression: true, MaxConnsPerHost: 1, Protocols: new(http.Protocols)}
	if c.u.Scheme == "http" {
		tr.Protocols.SetUnencryptedHTTP2(true) // h2c
	} else {
		tr.Protocols.SetHTTP2(true)
	}
	if c.opts.QuickACK {
		tr.DialContext = quickack.Dial
	}
	return &http.Client{Transport: tr}
}

// newConn is a Conn of c's request, with no connection yet.
func (c *Caller) newConn() *Conn {
	cn := &Conn{c: c}
	if c.opts.Vary != nil {
		cn.vary = c.opts.Vary.NewRequest()
	}
	return cn
}

// prepare builds an HTTP/1.1 Conn's request once: its URL, method,
// headers and a fixed body.
func (cn *Conn) prepare() {
	c := cn.c
	cn.req, cn.resp = &fasthttp.Request{}, &fasthttp.Response{}
	cn.req.SetRequestURI(c.opts.URL)
	cn.req.Header.SetMethod(c.opts.Method)
	for k, v := range c.opts.Headers {
		cn.req.Header.Set(k, v)
	}
	if c.rpc == nil && !c.varyBody() {
		cn.req.SetBodyRaw(c.opts.Body)
	}
}

// Beside returns a Conn of c's request over other's connection, when both
// reach one host the same way (scheme, HTTP version, TLS verification,
// QuickACK, answer bound): a mix's or a flow's calls in turn on one
// keep-alive connection, or one HTTP/2 connection. ok is false otherwise.
// The Conns share the connection, not their requests: use them one at a
// time.
func (c *Caller) Beside(other *Conn) (cn *Conn, ok bool) {
	o := other.c
	if c.u.Scheme != o.u.Scheme || c.u.Host != o.u.Host || c.opts.HTTP2 != o.opts.HTTP2 || c.opts.Insecure != o.opts.Insecure ||
		c.opts.QuickACK != o.opts.QuickACK || c.opts.MaxBody != o.opts.MaxBody {
		return nil, false
	}
	cn = c.newConn()
	cn.hc, cn.h2 = other.hc, other.h2
	if cn.hc != nil {
		cn.prepare()
	}
	return cn, true
}

// Conn is one HTTP connection.
type Conn struct {
	c    *Caller
	hc   *fasthttp.HostClient
	req  *fasthttp.Request
	resp *fasthttp.Response
	h2   *http.Client
	id   int64
	body []byte
	buf  bytes.Buffer
	// vary renders the parts that vary (Options.Vary); uri is the URL
	// with the path rendered.
	vary *vary.Request
	uri  []byte
}

// Do sends request number i once.
func (cn *Conn) Do(ctx context.Context, i uint64, deadline time.Time) load.Result {
	_, res := cn.ask(ctx, i, deadline, false, nil)
	return res
}

// Keep sends request number i once and keeps its answer in a: the body
// (a JSON-RPC call's result) and the headers a names, by name in any case.
func (cn *Conn) Keep(ctx context.Context, i uint64, deadline time.Time, a *vary.Answer) load.Result {
	ans, res := cn.ask(ctx, i, deadline, true, a)
	if res.Status == "" {
		a.Body = append(a.Body[:0], ans...)
	}
	return res
}

// Vary is the Conn's rendering of the parts that vary (nil: none).
func (cn *Conn) Vary() *vary.Request { return cn.vary }

// Ask sends the request once (request number 0, when its parts vary) and
// returns the answer: a JSON-RPC call's result, or an HTTP response's
// body. A failed call's answer is its error's content, if it has one: an
// HTTP error response's body (ErrorBody), a JSON-RPC error object.
func (cn *Conn) Ask(ctx context.Context) ([][]byte, load.Result) {
	ans, res := cn.ask(ctx, 0, time.Now().Add(cn.c.opts.Timeout), true, nil)
	if ans == nil {
		return nil, res
	}
	return [][]byte{bytes.Clone(ans)}, res
}

// nextBody renders request i's parts that vary, if any, and returns its
// body.
func (cn *Conn) nextBody(i uint64) ([]byte, error) {
	if cn.vary != nil {
		if err := cn.vary.Render(i); err != nil {
			return nil, err
		}
	}
	if cn.c.rpc == nil {
		if cn.c.varyBody() {
			return cn.vary.Body, nil
		}
		return cn.c.opts.Body, nil
	}
	cn.id++
	if cn.c.varyBody() {
		cn.body = cn.c.rpc.AppendParams(cn.body[:0], cn.id, cn.vary.Body)
	} else {
		cn.body = cn.c.rpc.Append(cn.body[:0], cn.id)
	}
	return cn.body, nil
}

// url is the request's URL: with its rendered path, when it varies.
func (cn *Conn) url() []byte {
	cn.uri = append(cn.uri[:0], cn.c.opts.URL...)
	if cn.c.varyPath() {
		cn.uri = append(cn.uri, cn.vary.Path...)
	}
	return cn.uri
}

// ask sends request i; the returned answer is only valid until the next
// request on the connection. With a, it keeps the headers a names.
func (cn *Conn) ask(ctx context.Context, i uint64, deadline time.Time, keep bool, a *vary.Answer) ([]byte, load.Result) {
	body, err := cn.nextBody(i)
	if err != nil {
		return nil, load.Result{Status: load.StatusRequest}
	}
	var status int
	var payload []byte
	if cn.h2 != nil {
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		u := cn.c.opts.URL
		if cn.c.varyPath() {
			u = string(cn.url())
		}
		req, err := http.NewRequestWithContext(ctx, cn.c.opts.Method, u, bytes.NewReader(body))
		if err != nil {
			return nil, load.Result{Status: "transport"}
		}
		req.Header.Set("User-Agent", "") // none but one the headers give
		for k, v := range cn.c.opts.Headers {
			req.Header.Set(k, v)
		}
		if cn.vary != nil {
			for k, h := range cn.c.opts.Vary.Headers {
				req.Header.Set(h.Name, string(cn.vary.Headers[k]))
			}
		}
		resp, err := cn.h2.Do(req)
		if err != nil {
			return nil, load.Result{Status: load.TransportStatus(err)}
		}
		if a != nil {
			for k, name := range a.Headers {
				if vs := resp.Header.Values(name); len(vs) > 0 {
					a.KeepHeader(k, []byte(vs[0]), true)
				} else {
					a.KeepHeader(k, nil, false)
				}
			}
		}
		cn.buf.Reset()
		var body io.Reader = resp.Body
		if cn.c.opts.MaxBody > 0 {
			body = io.LimitReader(resp.Body, int64(cn.c.opts.MaxBody)+1)
		}
		_, err = cn.buf.ReadFrom(body)
		resp.Body.Close()
		if err != nil {
			return nil, load.Result{Status: load.TransportStatus(err)}
		}
		if cn.c.opts.MaxBody > 0 && cn.buf.Len() > cn.c.opts.MaxBody {
			return nil, load.Result{Status: "too-large"}
		}
		status, payload = resp.StatusCode, cn.buf.Bytes()
	} else {
		if cn.c.rpc != nil || cn.c.varyBody() {
			cn.req.SetBodyRaw(body)
		}
		if cn.vary != nil {
			cn.varied()
		}
		if err := cn.hc.DoDeadline(cn.req, cn.resp, deadline); err != nil {
			return nil, load.Result{Status: fastStatus(err)}
		}
		status, payload = cn.resp.StatusCode(), cn.resp.Body()
		if a != nil {
			cn.keepHeaders(a)
		}
	}
	if status < 200 || status > 299 {
		if keep {
			return ErrorBody(payload), load.Result{Status: httpStatus(status)}
		}
		return nil, load.Result{Status: httpStatus(status)}
	}
	if cn.c.rpc == nil {
		if keep {
			return payload, load.Result{Units: 1}
		}
		return nil, load.Result{Units: 1}
	}
	ans, res := jsonrpc.CheckReply(payload, cn.id)
	if keep && res.Status != "" {
		return jsonrpc.ErrorObject(payload), res
	}
	return ans, res
}

// MaxErrorBody bounds the body of an HTTP error response that Ask keeps.
const MaxErrorBody = 64 << 10

// ErrorBody is an HTTP error response's body as Ask keeps it: at most
// MaxErrorBody bytes (cut on a rune boundary), nil when empty.
func ErrorBody(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	if len(b) > MaxErrorBody {
		cut := MaxErrorBody
		for cut > 0 && b[cut]&0xC0 == 0x80 {
			cut--
		}
		b = b[:cut]
	}
	return b
}

// keepHeaders keeps the answer's headers that a names, by name in any
// case (the first of a header given twice).
func (cn *Conn) keepHeaders(a *vary.Answer) {
	for k, name := range a.Headers {
		found := false
		for key, v := range cn.resp.Header.All() {
			if !found && strings.EqualFold(string(key), name) {
				a.KeepHeader(k, v, true)
				found = true
			}
		}
		if !found {
			a.KeepHeader(k, nil, false)
		}
	}
}

// varied sets the fasthttp request's path and headers that vary to those
// rendered.
func (cn *Conn) varied() {
	if cn.c.varyPath() {
		cn.req.SetRequestURIBytes(cn.url())
	}
	for k, h := range cn.c.opts.Vary.Headers {
		cn.req.Header.SetBytesV(h.Name, cn.vary.Headers[k])
	}
}

// httpStatuses are interned so that recording a failure allocates nothing.
var httpStatuses = map[int]string{}

func init() {
	for code := 100; code < 600; code++ {
		httpStatuses[code] = "http:" + strconv.Itoa(code)
	}
}

func httpStatus(code int) string {
	if s, ok := httpStatuses[code]; ok {
		return s
	}
	return "http:" + strconv.Itoa(code)
}

func fastStatus(err error) string {
	switch {
	case errors.Is(err, fasthttp.ErrTimeout), errors.Is(err, fasthttp.ErrDialTimeout):
		return "timeout"
	case errors.Is(err, fasthttp.ErrConnectionClosed):
		return "reset"
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return "too-large"
	}
	if st := load.TransportStatus(err); st != "transport" {
		return st
	}
	var ne net.Error
	if !errors.As(err, &ne) {
		return "protocol" // the answer was not HTTP
	}
	return "transport"
}

// Close closes the connection.
func (cn *Conn) Close() error {
	if cn.h2 != nil {
		cn.h2.CloseIdleConnections()
	}
	if cn.hc != nil {
		cn.hc.CloseIdleConnections()
	}
	return nil
}
