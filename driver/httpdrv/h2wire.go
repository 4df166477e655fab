package httpdrv

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/tandem-bench/tandem/driver/internal/vary"
	"github.com/tandem-bench/tandem/driver/jsonrpc"
	"github.com/tandem-bench/tandem/load"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// HTTP/2 on the event loop: prior-knowledge cleartext HTTP/2 (h2c), its
// frames read and written by x/net/http2's Framer and its headers by
// hpack, several requests in flight per connection (a closed loop's
// clients over Options.Connections connections, one stream each). Like
// h2load, the client opens its windows wide (2^30−1 bytes, the
// connection's topped up when half is used), so a server's answers are
// never held back by them; the server's windows and frame size are
// honoured for request bodies.

const (
	// h2Window is the receive window the client grants, per stream and
	// for the connection.
	h2Window = 1<<30 - 1
	// h2MaxFrame is the largest frame the client reads (the protocol's
	// default, which it does not change).
	h2MaxFrame = 16 << 10
	// h2MaxStream is the last client stream id: a connection that used
	// them all takes no more requests.
	h2MaxStream = 1<<31 - 1
)

// h2Wire is a Caller's HTTP/2 requests for the event loop.
type h2Wire struct {
	c     *Caller
	addr  *net.TCPAddr
	conns int
	// block is the request's header block when nothing in it varies:
	// literals never indexed, so it is the same on every stream.
	block []byte
}

// newH2Wire is the event loop's HTTP/2 for c, or false.
func newH2Wire(c *Caller, addr *net.TCPAddr) (*h2Wire, bool) {
	w := &h2Wire{c: c, addr: addr, conns: c.opts.Connections}
	if c.opts.Vary == nil || (c.opts.Vary.Path == nil && len(c.opts.Vary.Headers) == 0) {
		var e h2Encoder
		w.block = e.block(c, nil)
		if len(w.block) > h2MaxFrame {
			return nil, false // a header block this large needs CONTINUATION frames
		}
	}
	return w, true
}

func (w *h2Wire) Addr() *net.TCPAddr { return w.addr }

// Connections is how many connections a closed loop's clients share
// (Options.Connections; 0: one each).
func (w *h2Wire) Connections() int { return w.conns }

func (w *h2Wire) NewConn() load.WireConn {
	wc := &h2Conn{w: w, nextID: 1, sendConn: 65535, sendInit: 65535, maxFrame: h2MaxFrame}
	wc.fr = http2.NewFramer(&wc.app, &wc.rd)
	wc.fr.SetMaxReadFrameSize(h2MaxFrame)
	wc.dec = hpack.NewDecoder(4096, wc.header)
	if v := w.c.opts.Vary; v != nil {
		wc.vary = v.NewRequest()
	}
	return wc
}

// h2Encoder encodes a request's header block without touching HPACK's
// dynamic table (every literal is never indexed), so a block encoded once
// may be sent on any stream of any connection.
type h2Encoder struct {
	buf bytes.Buffer
	enc *hpack.Encoder
	num []byte
}

// block is c's request header block; with r, with its path and headers
// rendered.
func (e *h2Encoder) block(c *Caller, r *vary.Request) []byte {
	if e.enc == nil {
		e.enc = hpack.NewEncoder(&e.buf)
	}
	e.buf.Reset()
	path := c.u.RequestURI()
	if r != nil && c.varyPath() {
		path = strings.TrimSuffix(c.u.EscapedPath(), "/") + string(r.Path)
	}
	field := func(name, value string) {
		e.enc.WriteField(hpack.HeaderField{Name: name, Value: value, Sensitive: true})
	}
	field(":method", c.opts.Method)
	field(":scheme", "http")
	field(":authority", c.u.Host)
	field(":path", path)
	for k, v := range c.opts.Headers {
		if h2Hop(k) || (r != nil && c.varyHeader(k)) {
			continue
		}
		field(strings.ToLower(k), v)
	}
	if r != nil {
		for k, h := range c.opts.Vary.Headers {
			field(strings.ToLower(h.Name), string(r.Headers[k]))
		}
	}
	return e.buf.Bytes()
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

// h2Stream is a request in flight: its stream, its slot, what its answer
// brought so far.
type h2Stream struct {
	id     uint32
	slot   int
	rpcID  int64 // a JSON-RPC call's id
	status int   // the answer's :status; 0 until its headers came
	n      int   // the answer's body bytes so far
	body   []byte
}

// h2Conn is one HTTP/2 connection's state.
type h2Conn struct {
	w       *h2Wire
	fr      *http2.Framer
	app     appender
	rd      bytes.Reader
	dec     *hpack.Decoder
	nextID  uint32
	streams []h2Stream
	free    []h2Stream // finished: their body buffers kept
	// headOpen says a header block is being decoded (CONTINUATION frames
	// follow its HEADERS).
	headOpen bool
	status   int // the :status decoded last
	// the server's windows for request bodies, and its frame size
	sendConn int64
	sendInit int64
	maxFrame int
	// consumed is answer data received since the last WINDOW_UPDATE
	consumed int64
	// waiting holds request bodies the server's windows held back
	waiting []h2Body
	rpcID   int64
	rpcBody []byte
	enc     h2Encoder
	vary    *vary.Request
}

// h2Body is a request body (or its rest) waiting for window.
type h2Body struct {
	id     uint32
	window int64 // the stream's send window
	data   []byte
}

// appender is an io.Writer that appends to b (the Framer writes a whole
// frame at once).
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

func (wc *h2Conn) Greeting(b []byte) []byte {
	b = append(b, http2.ClientPreface...)
	wc.app.b = b
	wc.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window})
	wc.fr.WriteWindowUpdate(0, h2Window-65535)
	return wc.app.b
}

var errStreams = errors.New("the connection's stream ids are used up")

func (wc *h2Conn) AppendRequest(b []byte, i uint64, s int) ([]byte, error) {
	if wc.nextID > h2MaxStream {
		return b, errStreams
	}
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
	st := wc.stream()
	st.id, st.slot = wc.nextID, s
	if rpc := c.rpc; rpc != nil {
		wc.rpcID++
		st.rpcID = wc.rpcID
		if c.varyBody() {
			wc.rpcBody = rpc.AppendParams(wc.rpcBody[:0], wc.rpcID, wc.vary.Body)
		} else {
			wc.rpcBody = rpc.Append(wc.rpcBody[:0], wc.rpcID)
		}
		body = wc.rpcBody
	}
	block := wc.w.block
	if block == nil {
		block = wc.enc.block(c, wc.vary)
	}
	if len(body) > 0 || c.opts.Method != "GET" {
		block = wc.enc.withLength(block, len(body))
	}
	if len(block) > h2MaxFrame {
		wc.streams = wc.streams[:len(wc.streams)-1]
		return b, fmt.Errorf("a header block of %d bytes: more than a frame", len(block))
	}
	wc.nextID += 2
	wc.app.b = b
	wc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: st.id, BlockFragment: block, EndStream: len(body) == 0, EndHeaders: true})
	if len(body) > 0 {
		wc.sendBody(h2Body{id: st.id, window: wc.sendInit, data: body})
	}
	return wc.app.b, nil
}

// withLength is block with a content-length of n: block is copied into
// the encoder's buffer unless it is there already.
func (e *h2Encoder) withLength(block []byte, n int) []byte {
	if e.enc == nil {
		e.enc = hpack.NewEncoder(&e.buf)
	}
	if len(block) == 0 || e.buf.Len() == 0 || &block[0] != &e.buf.Bytes()[0] {
		e.buf.Reset()
		e.buf.Write(block)
	}
	e.num = appendInt(e.num[:0], n)
	e.enc.WriteField(hpack.HeaderField{Name: "content-length", Value: string(e.num), Sensitive: true})
	return e.buf.Bytes()
}

// stream returns a new stream's entry (its body buffer reused).
func (wc *h2Conn) stream() *h2Stream {
	st := h2Stream{}
	if n := len(wc.free); n > 0 {
		st.body = wc.free[n-1].body[:0]
		wc.free = wc.free[:n-1]
	}
	wc.streams = append(wc.streams, st)
	return &wc.streams[len(wc.streams)-1]
}

// sendBody frames as much of a request body as the server's windows let
// into app.b, and keeps the rest (copied) waiting for window.
func (wc *h2Conn) sendBody(body h2Body) {
	for len(body.data) > 0 {
		n := int(min(int64(len(body.data)), int64(wc.maxFrame), wc.sendConn, body.window))
		if n <= 0 {
			wc.waiting = append(wc.waiting, h2Body{id: body.id, window: body.window, data: bytes.Clone(body.data)})
			return
		}
		wc.fr.WriteData(body.id, n == len(body.data), body.data[:n])
		wc.sendConn -= int64(n)
		body.window -= int64(n)
		body.data = body.data[n:]
	}
}

// resume sends what of the bodies waiting the windows now let through.
func (wc *h2Conn) resume() {
	waiting := wc.waiting
	wc.waiting = nil
	for _, body := range waiting {
		if wc.find(body.id) < 0 {
			continue // abandoned
		}
		wc.sendBody(body)
	}
}

// find is the index of stream id in streams, or -1.
func (wc *h2Conn) find(id uint32) int {
	for k := range wc.streams {
		if wc.streams[k].id == id {
			return k
		}
	}
	return -1
}

// end removes stream k from those in flight.
func (wc *h2Conn) end(k int) {
	wc.free = append(wc.free, h2Stream{body: wc.streams[k].body})
	last := len(wc.streams) - 1
	wc.streams[k] = wc.streams[last]
	wc.streams = wc.streams[:last]
}

func (wc *h2Conn) Cancel(out []byte, s int) ([]byte, bool) {
	for k := range wc.streams {
		if wc.streams[k].slot == s {
			wc.app.b = out
			wc.fr.WriteRSTStream(wc.streams[k].id, http2.ErrCodeCancel)
			wc.end(k)
			return wc.app.b, true
		}
	}
	return out, true
}

// header is the decoder's emit function: it keeps the :status of the
// header block being decoded.
func (wc *h2Conn) header(f hpack.HeaderField) {
	if f.Name == ":status" {
		wc.status = atoi(f.Value)
	}
}

// atoi is s as a number, or -1.
func atoi(s string) int {
	n := 0
	if s == "" {
		return -1
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func (wc *h2Conn) Next(b, out []byte) (load.Frame, []byte, error) {
	none := load.Frame{Slot: -1}
	if len(b) < 9 {
		return none, out, nil
	}
	size := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
	if size > h2MaxFrame {
		return none, out, fmt.Errorf("http2: a frame of %d bytes, more than %d", size, h2MaxFrame)
	}
	if len(b) < 9+size {
		return none, out, nil
	}
	wc.rd.Reset(b[:9+size])
	f, err := wc.fr.ReadFrame()
	if err != nil {
		return none, out, fmt.Errorf("http2: %w", err)
	}
	wc.app.b = out
	fr := load.Frame{N: 9 + size, Slot: -1}
	switch f := f.(type) {
	case *http2.HeadersFrame:
		fr, err = wc.headers(fr, f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded(), f.StreamEnded())
	case *http2.ContinuationFrame:
		fr, err = wc.headers(fr, f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded(), false)
	case *http2.DataFrame:
		fr = wc.data(fr, f)
	case *http2.RSTStreamFrame:
		if k := wc.find(f.StreamID); k >= 0 {
			fr.Slot, fr.Result = wc.streams[k].slot, load.Result{Status: load.TransportStatus(http2.StreamError{StreamID: f.StreamID, Code: f.ErrCode})}
			wc.end(k)
		}
	case *http2.SettingsFrame:
		err = wc.settings(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			wc.fr.WritePing(true, f.Data)
		}
	case *http2.WindowUpdateFrame:
		err = wc.windowUpdate(f)
	case *http2.GoAwayFrame:
		fr.Close = true
	case *http2.PushPromiseFrame:
		err = errors.New("http2: a push promise, refused in the settings")
	}
	return fr, wc.app.b, err
}

// headers decodes a header block's fragment of stream id; at the end of
// an answer (end of stream) it is framed.
func (wc *h2Conn) headers(fr load.Frame, id uint32, frag []byte, ended, endStream bool) (load.Frame, error) {
	if !wc.headOpen {
		wc.headOpen, wc.status = true, 0
	}
	// every block is decoded, an abandoned stream's too: the decoder's
	// table must follow the server's
	if _, err := wc.dec.Write(frag); err != nil {
		return fr, fmt.Errorf("http2: hpack: %w", err)
	}
	if !ended {
		return fr, nil
	}
	wc.headOpen = false
	if err := wc.dec.Close(); err != nil {
		return fr, fmt.Errorf("http2: hpack: %w", err)
	}
	k := wc.find(id)
	if k < 0 {
		return fr, nil // abandoned
	}
	st := &wc.streams[k]
	if st.status == 0 && wc.status >= 200 {
		st.status = wc.status // the answer's head (not an informational one, nor trailers)
	} else if st.status == 0 && wc.status < 100 {
		return fr, fmt.Errorf("http2: an answer without a :status")
	}
	if endStream {
		return wc.answer(fr, k), nil
	}
	return fr, nil
}

// data takes an answer's body bytes (and tops up the connection's
// window).
func (wc *h2Conn) data(fr load.Frame, f *http2.DataFrame) load.Frame {
	if wc.consumed += int64(f.Length); wc.consumed >= h2Window/2 {
		wc.fr.WriteWindowUpdate(0, uint32(wc.consumed))
		wc.consumed = 0
	}
	k := wc.find(f.StreamID)
	if k < 0 {
		return fr // abandoned
	}
	st := &wc.streams[k]
	st.n += len(f.Data())
	if wc.w.c.rpc != nil {
		st.body = append(st.body, f.Data()...)
	}
	if f.StreamEnded() {
		return wc.answer(fr, k)
	}
	return fr
}

// answer frames the answer of stream k, whole, and ends the stream.
func (wc *h2Conn) answer(fr load.Frame, k int) load.Frame {
	c, st := wc.w.c, &wc.streams[k]
	fr.Slot = st.slot
	switch {
	case st.status == 0:
		fr.Result = load.Result{Status: "protocol"}
	case c.opts.MaxBody > 0 && st.n > c.opts.MaxBody:
		fr.Result = load.Result{Status: "too-large"}
	case st.status < 200 || st.status > 299:
		fr.Result = load.Result{Status: httpStatus(st.status)}
	case c.rpc == nil:
		fr.Result = load.Result{Units: 1}
	default:
		_, fr.Result = jsonrpc.CheckReply(st.body, st.rpcID)
	}
	wc.end(k)
	return fr
}

// settings applies the server's settings and acknowledges them.
func (wc *h2Conn) settings(f *http2.SettingsFrame) error {
	if f.IsAck() {
		return nil
	}
	err := f.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingInitialWindowSize:
			// the change applies to the streams open too
			for k := range wc.waiting {
				wc.waiting[k].window += int64(s.Val) - wc.sendInit
			}
			wc.sendInit = int64(s.Val)
		case http2.SettingMaxFrameSize:
			wc.maxFrame = int(s.Val)
		}
		return nil
	})
	if err != nil {
		return err
	}
	wc.fr.WriteSettingsAck()
	wc.resume()
	return nil
}

// windowUpdate adds to a window of the server's and sends what waited.
func (wc *h2Conn) windowUpdate(f *http2.WindowUpdateFrame) error {
	if f.StreamID == 0 {
		wc.sendConn += int64(f.Increment)
	} else {
		for k := range wc.waiting {
			if wc.waiting[k].id == f.StreamID {
				wc.waiting[k].window += int64(f.Increment)
			}
		}
	}
	wc.resume()
	return nil
}
