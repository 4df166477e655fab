package httpdrv

import (
	"fmt"
	"net"
	"strings"

	"github.com/tandem-bench/tandem/driver/jsonrpc"
	"github.com/tandem-bench/tandem/load"
)

// Wire offers the request to load's event loop: plain HTTP/1.1 (no TLS,
// no HTTP/2, no QuickACK diagnosis) to an IPv4 address, any method but
// HEAD. The request's head is built once; a JSON-RPC call appends a fresh
// id per request. Like the worker engine's, it carries no User-Agent but
// one the headers give.
func (c *Caller) Wire() (load.Wire, bool) {
	o := c.opts
	if c.u.Scheme != "http" || o.HTTP2 || o.QuickACK || o.Method == "HEAD" {
		return nil, false
	}
	port := c.u.Port()
	if port == "" {
		port = "80"
	}
	addr, err := net.ResolveTCPAddr("tcp4", net.JoinHostPort(c.u.Hostname(), port))
	if err != nil || addr.IP.To4() == nil {
		return nil, false
	}
	var head strings.Builder
	path := c.u.RequestURI()
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\n", o.Method, path, c.u.Host)
	for k, v := range o.Headers {
		if !strings.EqualFold(k, "Host") && !strings.EqualFold(k, "Content-Length") {
			fmt.Fprintf(&head, "%s: %s\r\n", k, v)
		}
	}
	return &wire{c: c, addr: addr, head: []byte(head.String())}, true
}

type wire struct {
	c    *Caller
	addr *net.TCPAddr
	head []byte
}

func (w *wire) Addr() *net.TCPAddr { return w.addr }

func (w *wire) NewConn() load.WireConn { return &wireConn{w: w} }

// wireConn is one connection's state: the JSON-RPC id, the body scratch.
type wireConn struct {
	w       *wire
	id      int64
	body    []byte
	scratch []byte
}

func (wc *wireConn) AppendRequest(b []byte) []byte {
	body := wc.w.c.opts.Body
	if rpc := wc.w.c.rpc; rpc != nil {
		wc.id++
		wc.body = rpc.Append(wc.body[:0], wc.id)
		body = wc.body
	}
	b = append(b, wc.w.head...)
	if len(body) > 0 || wc.w.c.opts.Method != "GET" {
		b = append(b, "Content-Length: "...)
		b = appendInt(b, len(body))
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...)
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
