package httpdrv

import (
	"crypto/tls"
	"fmt"
	"net"
	"strings"

	"github.com/tandem-bench/tandem/driver/internal/vary"
	"github.com/tandem-bench/tandem/driver/jsonrpc"
	"github.com/tandem-bench/tandem/load"
)

// Wire offers the request to load's event loop: HTTP/1.1 or HTTP/2
// (h2c, or over TLS with ALPN h2), plain or over TLS (crypto/tls on the
// loop's sockets; no QuickACK diagnosis) to an IPv4 address, any method
// but HEAD. The request's head is built once; a
// JSON-RPC call appends a fresh id per request, and the parts that vary
// (Options.Vary) are rendered for each request number. Like the worker
// engine's, it carries no User-Agent but one the headers give.
func (c *Caller) Wire() (load.Wire, bool) {
	o := c.opts
	if (c.u.Scheme != "http" && c.u.Scheme != "https") || o.QuickACK || o.Method == "HEAD" {
		return nil, false
	}
	port := c.u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[c.u.Scheme]
	}
	addr, err := net.ResolveTCPAddr("tcp4", net.JoinHostPort(c.u.Hostname(), port))
	if err != nil || addr.IP.To4() == nil {
		return nil, false
	}
	if o.HTTP2 {
		return newH2Wire(c, addr)
	}
	w := &wire{c: c, addr: addr}
	var head strings.Builder
	if c.varyPath() {
		// the request line up to the path, which each request renders
		w.line = []byte(o.Method + " " + strings.TrimSuffix(c.u.EscapedPath(), "/"))
		fmt.Fprintf(&head, " HTTP/1.1\r\nHost: %s\r\n", c.u.Host)
	} else {
		fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\n", o.Method, c.u.RequestURI(), c.u.Host)
	}
	for k, v := range o.Headers {
		if !strings.EqualFold(k, "Host") && !strings.EqualFold(k, "Content-Length") && !c.varyHeader(k) {
			fmt.Fprintf(&head, "%s: %s\r\n", k, v)
		}
	}
	w.head = []byte(head.String())
	return w, true
}

// varyHeader reports whether a header's value varies (Options.Vary).
func (c *Caller) varyHeader(name string) bool {
	if c.opts.Vary == nil {
		return false
	}
	for _, h := range c.opts.Vary.Headers {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}

type wire struct {
	c    *Caller
	addr *net.TCPAddr
	// head is the request's head but its Content-Length: from the path
	// on (the protocol, Host, the fixed headers) when line is set, else
	// whole.
	head []byte
	// line is the request line up to the path, when the path varies.
	line []byte
}

func (w *wire) Addr() *net.TCPAddr { return w.addr }

// TLSConfig is an https request's TLS (nil: plain TCP).
func (w *wire) TLSConfig() *tls.Config { return w.c.tlsConfig() }

// tlsConfig is an https request's TLS on the event loop, nil for http;
// with protos offered by ALPN.
func (c *Caller) tlsConfig(protos ...string) *tls.Config {
	if c.u.Scheme != "https" {
		return nil
	}
	return &tls.Config{InsecureSkipVerify: c.opts.Insecure, ServerName: c.u.Hostname(), NextProtos: protos}
}

func (w *wire) NewConn() load.WireConn {
	wc := &wireConn{w: w}
	if v := w.c.opts.Vary; v != nil {
		wc.vary = v.NewRequest()
	}
	return load.Serial(wc)
}

// wireConn is one connection's state: the JSON-RPC id, the body scratch,
// the parts that vary rendered.
type wireConn struct {
	w       *wire
	id      int64
	body    []byte
	scratch []byte
	vary    *vary.Request
}

func (wc *wireConn) AppendRequest(b []byte, i uint64) ([]byte, error) {
	c := wc.w.c
	body := c.opts.Body
	if wc.vary != nil {
		if err := wc.vary.Render(i); err != nil {
			return b, err
		}
		if c.varyBody() {
			body = wc.vary.Body
		}
	}
	if rpc := c.rpc; rpc != nil {
		wc.id++
		if c.varyBody() {
			wc.body = rpc.AppendParams(wc.body[:0], wc.id, wc.vary.Body)
		} else {
			wc.body = rpc.Append(wc.body[:0], wc.id)
		}
		body = wc.body
	}
	if wc.vary != nil {
		b = wc.appendHead(b)
	} else {
		b = append(b, wc.w.head...)
	}
	if len(body) > 0 || c.opts.Method != "GET" {
		b = append(b, "Content-Length: "...)
		b = appendInt(b, len(body))
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...), nil
}

// appendHead appends the head of the request rendered last: its path and
// the headers that vary.
func (wc *wireConn) appendHead(b []byte) []byte {
	if wc.w.line != nil {
		b = append(append(b, wc.w.line...), wc.vary.Path...)
	}
	b = append(b, wc.w.head...)
	for k, h := range wc.w.c.opts.Vary.Headers {
		b = append(append(append(append(b, h.Name...), ": "...), wc.vary.Headers[k]...), "\r\n"...)
	}
	return b
}

func appendInt(b []byte, n int) []byte {
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			break
		}
	}
	return append(b, d[i:]...)
}

func (wc *wireConn) Response(b []byte) (int, load.Result, bool, error) {
	r, err := frame(b, wc.scratch)
	if err != nil || r.n == 0 {
		return 0, load.Result{}, false, err
	}
	if r.chunked {
		wc.scratch = r.body[:0] // keep the grown buffer
	}
	if max := wc.w.c.opts.MaxBody; max > 0 && len(r.body) > max {
		return r.n, load.Result{Status: "too-large"}, r.close, nil
	}
	if r.status < 200 || r.status > 299 {
		return r.n, load.Result{Status: httpStatus(r.status)}, r.close, nil
	}
	if wc.w.c.rpc == nil {
		return r.n, load.Result{Units: 1}, r.close, nil
	}
	_, res := jsonrpc.CheckReply(r.body, wc.id)
	return r.n, res, r.close, nil
}
