package httpdrv

import (
	"crypto/tls"
	"net"
	"strings"

	"github.com/tandem-bench/tandem/driver/internal/h2wire"
	"github.com/tandem-bench/tandem/driver/internal/vary"
	"github.com/tandem-bench/tandem/driver/jsonrpc"
	"github.com/tandem-bench/tandem/load"
	"golang.org/x/net/http2/hpack"
)

// h2Wire is a Caller's HTTP/2 requests for the event loop (package
// h2wire), h2c or over TLS, the clients sharing Options.Connections
// connections.
type h2Wire struct {
	c    *Caller
	addr *net.TCPAddr
	// block is the request's header block when nothing in it varies.
	block []byte
}

// newH2Wire is the event loop's HTTP/2 for c, or false.
func newH2Wire(c *Caller, addr *net.TCPAddr) (*h2Wire, bool) {
	w := &h2Wire{c: c, addr: addr}
	if c.opts.Vary == nil || (c.opts.Vary.Path == nil && len(c.opts.Vary.Headers) == 0) {
		var e h2wire.Encoder
		w.block = c.h2Block(&e, nil)
		if len(w.block) > h2wire.MaxFrame {
			return nil, false // a header block this large needs CONTINUATION frames
		}
	}
	return w, true
}

func (w *h2Wire) Addr() *net.TCPAddr { return w.addr }

// TLSConfig is h2 over TLS for https (ALPN h2), nil for h2c.
func (w *h2Wire) TLSConfig() *tls.Config { return w.c.tlsConfig("h2") }

// Connections is how many connections a closed loop's clients share
// (Options.Connections; 0: one each).
func (w *h2Wire) Connections() int { return w.c.opts.Connections }

func (w *h2Wire) NewConn() load.WireConn {
	p := &h2Proto{w: w}
	if v := w.c.opts.Vary; v != nil {
		p.vary = v.NewRequest()
	}
	return h2wire.NewConn(p)
}

// h2Block is c's request header block; with r, with its path and headers
// rendered.
func (c *Caller) h2Block(e *h2wire.Encoder, r *vary.Request) []byte {
	e.Reset()
	path := c.u.RequestURI()
	if r != nil && c.varyPath() {
		path = strings.TrimSuffix(c.u.EscapedPath(), "/") + string(r.Path)
	}
	e.Field(":method", c.opts.Method)
	e.Field(":scheme", c.u.Scheme)
	e.Field(":authority", c.u.Host)
	e.Field(":path", path)
	for k, v := range c.opts.Headers {
		if h2Hop(k) || (r != nil && c.varyHeader(k)) {
			continue
		}
		e.Field(strings.ToLower(k), v)
	}
	if r != nil {
		for k, h := range c.opts.Vary.Headers {
			e.Field(strings.ToLower(h.Name), string(r.Headers[k]))
		}
	}
	return e.Bytes()
}

// h2Hop reports a header HTTP/2 does not carry (or carries as a
// pseudo-header or from the body's length).
func h2Hop(name string) bool {
	switch strings.ToLower(name) {
	case "host", "content-length", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return true
	}
	return false
}

// h2Proto is one connection's requests: the JSON-RPC ids, the body
// scratch, the parts that vary rendered.
type h2Proto struct {
	w       *h2Wire
	enc     h2wire.Encoder
	rpcID   int64
	rpcBody []byte
	vary    *vary.Request
}

func (p *h2Proto) Request(i uint64, st *h2wire.Stream) (block, body []byte, err error) {
	c := p.w.c
	body = c.opts.Body
	if p.vary != nil {
		if err := p.vary.Render(i); err != nil {
			return nil, nil, err
		}
		if c.varyBody() {
			body = p.vary.Body
		}
	}
	if rpc := c.rpc; rpc != nil {
		p.rpcID++
		st.Tag = p.rpcID
		if c.varyBody() {
			p.rpcBody = rpc.AppendParams(p.rpcBody[:0], p.rpcID, p.vary.Body)
		} else {
			p.rpcBody = rpc.Append(p.rpcBody[:0], p.rpcID)
		}
		body = p.rpcBody
	}
	block = p.w.block
	if block == nil {
		block = c.h2Block(&p.enc, p.vary)
	}
	if len(body) > 0 || c.opts.Method != "GET" {
		block = p.enc.WithLength(block, len(body))
	}
	return block, body, nil
}

func (p *h2Proto) Header(*h2wire.Stream, hpack.HeaderField) {}

// Streams: an HTTP answer is one unit, not a stream of messages.
func (p *h2Proto) Streams() bool { return false }

func (p *h2Proto) Data(st *h2wire.Stream, b []byte) {
	if p.w.c.rpc != nil {
		st.Body = append(st.Body, b...)
	}
}

func (p *h2Proto) Answer(st *h2wire.Stream) load.Result {
	c := p.w.c
	switch {
	case c.opts.MaxBody > 0 && st.N > c.opts.MaxBody:
		return load.Result{Status: "too-large"}
	case st.Status < 200 || st.Status > 299:
		return load.Result{Status: httpStatus(st.Status)}
	case c.rpc == nil:
		return load.Result{Units: 1}
	}
	_, res := jsonrpc.CheckReply(st.Body, st.Tag)
	return res
}
