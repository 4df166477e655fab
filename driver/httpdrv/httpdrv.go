// Package httpdrv sends HTTP requests and JSON-RPC 2.0 calls over HTTP/1.1
// (fasthttp, for a generator that is not the bottleneck) or HTTP/2 (TLS or
// h2c, through net/http). Each connection is its own client
// with one TCP connection; the request is built once, and for JSON-RPC only
// the id changes per call. Answers are checked without decoding them whole.
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
	"time"

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
}

// Caller sends one request shape.
type Caller struct {
	opts Options
	u    *url.URL
	rpc  *jsonrpc.Request
}

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
		if len(opts.Body) > 0 {
			c.opts.Method = http.MethodPost
		}
	}
	return c, nil
}

// Dial returns a connection; the TCP connection opens on the first request.
func (c *Caller) Dial(ctx context.Context) (load.Conn, error) { return c.DialConn(ctx) }

// DialConn is Dial with the concrete type, which can also Ask.
func (c *Caller) DialConn(context.Context) (*Conn, error) {
	cn := &Conn{c: c}
	tlsConf := &tls.Config{InsecureSkipVerify: c.opts.Insecure, ServerName: c.u.Hostname()}
	if c.opts.HTTP2 {
		tr := &http.Transport{TLSClientConfig: tlsConf, DisableCompression: true, MaxConnsPerHost: 1, Protocols: new(http.Protocols)}
		if c.u.Scheme == "http" {
			tr.Protocols.SetUnencryptedHTTP2(true) // h2c
		} else {
			tr.Protocols.SetHTTP2(true)
		}
		if c.opts.QuickACK {
			tr.DialContext = quickack.Dial
		}
		cn.h2 = &http.Client{Transport: tr}
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
	cn.req, cn.resp = &fasthttp.Request{}, &fasthttp.Response{}
	cn.req.SetRequestURI(c.opts.URL)
	cn.req.Header.SetMethod(c.opts.Method)
	for k, v := range c.opts.Headers {
		cn.req.Header.Set(k, v)
	}
	if c.rpc == nil {
		cn.req.SetBodyRaw(c.opts.Body)
	}
	return cn, nil
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
}

// Do sends the request once.
func (cn *Conn) Do(ctx context.Context, deadline time.Time) load.Result {
	_, res := cn.ask(ctx, deadline, false)
	return res
}

// Ask sends the request once and returns the answer: a JSON-RPC call's
// result, or an HTTP response's body.
func (cn *Conn) Ask(ctx context.Context) ([][]byte, load.Result) {
	ans, res := cn.ask(ctx, time.Now().Add(cn.c.opts.Timeout), true)
	if ans == nil {
		return nil, res
	}
	return [][]byte{bytes.Clone(ans)}, res
}

func (cn *Conn) nextBody() []byte {
	if cn.c.rpc == nil {
		return cn.c.opts.Body
	}
	cn.id++
	cn.body = cn.c.rpc.Append(cn.body[:0], cn.id)
	return cn.body
}

// ask sends the request; the returned answer is only valid until the next
// request on the connection.
func (cn *Conn) ask(ctx context.Context, deadline time.Time, keep bool) ([]byte, load.Result) {
	body := cn.nextBody()
	var status int
	var payload []byte
	if cn.h2 != nil {
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, cn.c.opts.Method, cn.c.opts.URL, bytes.NewReader(body))
		if err != nil {
			return nil, load.Result{Status: "transport"}
		}
		req.Header.Set("User-Agent", "") // none but one the headers give
		for k, v := range cn.c.opts.Headers {
			req.Header.Set(k, v)
		}
		resp, err := cn.h2.Do(req)
		if err != nil {
			return nil, load.Result{Status: load.TransportStatus(err)}
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
		if cn.c.rpc != nil {
			cn.req.SetBodyRaw(body)
		}
		if err := cn.hc.DoDeadline(cn.req, cn.resp, deadline); err != nil {
			return nil, load.Result{Status: fastStatus(err)}
		}
		status, payload = cn.resp.StatusCode(), cn.resp.Body()
	}
	if status < 200 || status > 299 {
		return nil, load.Result{Status: httpStatus(status)}
	}
	if cn.c.rpc == nil {
		if keep {
			return payload, load.Result{Units: 1}
		}
		return nil, load.Result{Units: 1}
	}
	return jsonrpc.CheckReply(payload, cn.id)
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
