// Package h2wire is HTTP/2 for load's event loop: prior knowledge, over
// plain TCP (h2c) or TLS (the loop's, ALPN h2), its frames read and written by x/net/http2's
// Framer and its headers by hpack, a request in flight per stream and
// several streams per connection. What the streams carry (an HTTP request,
// a gRPC call) is a Protocol's. Like h2load, a connection opens its
// windows wide (2^30−1 bytes, the connection's topped up when half is
// used), so a server's answers are never held back by them; the server's
// windows and frame size are honoured for request bodies.
package h2wire

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/tandem-bench/tandem/load"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

const (
	// window is the receive window a connection grants, per stream and
	// for the connection.
	window = 1<<30 - 1
	// MaxFrame is the largest frame a connection reads (the protocol's
	// default, which it does not change), and so the largest header block
	// a request may have.
	MaxFrame = 16 << 10
	// maxStream is the last client stream id: a connection that used them
	// all takes no more requests (load.ErrSpent: the loop retires it and
	// dials a new one).
	maxStream = 1<<31 - 1
)

// Protocol is what one connection's streams carry: it renders each
// request and judges each answer.
type Protocol interface {
	// Request renders request number i of the run, to be sent on st: its
	// header block (see Encoder) and its body, both valid until the next
	// call. It may keep what it needs of the request in st.Tag.
	Request(i uint64, st *Stream) (block, body []byte, err error)
	// Header sees each field of a stream's header blocks: its answer's
	// head, then its trailers (st.Trailers).
	Header(st *Stream, f hpack.HeaderField)
	// Data sees a stream's body bytes as they come.
	Data(st *Stream, p []byte)
	// Answer is the result of the stream's answer, whole.
	Answer(st *Stream) load.Result
	// Streams says an answer is a stream of messages, the arrival of the
	// first of which is its Result.First.
	Streams() bool
}

// Stream is a request in flight and what its answer brought so far.
type Stream struct {
	id   uint32
	slot int
	seq  uint64 // the request's number
	// Status is the answer's :status, 0 until its head came.
	Status int
	// Trailers says the answer's head came and a later header block is
	// being read.
	Trailers bool
	// N counts the answer's body bytes so far.
	N int
	// Units counts the answer's messages whole so far (the Protocol's
	// Data counts them): with Streams, the arrival of the first, before
	// the answer ends, is its Result.First.
	Units int64
	// recv is the answer's data since its window was last topped up.
	recv int64
	// Body, Tag, Code and Left are the Protocol's to use (Body's buffer
	// is kept from stream to stream).
	Body []byte
	Tag  int64
	Code int
	Left int
}

// Encoder encodes header blocks without touching HPACK's dynamic table:
// every field is a literal never indexed, so a block encoded once may be
// sent on any stream of any connection.
type Encoder struct {
	buf bytes.Buffer
	enc *hpack.Encoder
	num string // the content-length last written, n
	n   int
}

// Reset starts a new block.
func (e *Encoder) Reset() {
	if e.enc == nil {
		e.enc = hpack.NewEncoder(&e.buf)
	}
	e.buf.Reset()
}

// Field adds a field to the block.
func (e *Encoder) Field(name, value string) {
	e.enc.WriteField(hpack.HeaderField{Name: name, Value: value, Sensitive: true})
}

// Bytes is the block, valid until the next Reset.
func (e *Encoder) Bytes() []byte { return e.buf.Bytes() }

// WithLength is block with a content-length of n: block is copied into
// the encoder's buffer unless it is there already.
func (e *Encoder) WithLength(block []byte, n int) []byte {
	if e.enc == nil || len(block) == 0 || e.buf.Len() == 0 || &block[0] != &e.buf.Bytes()[0] {
		e.Reset()
		e.buf.Write(block)
	}
	if e.num == "" || e.n != n {
		e.num, e.n = strconv.Itoa(n), n // most bodies are one length: no string each
	}
	e.enc.WriteField(hpack.HeaderField{Name: "content-length", Value: e.num, Sensitive: true})
	return e.buf.Bytes()
}

// Conn is one connection's HTTP/2: a load.WireConn.
type Conn struct {
	p       Protocol
	fr      *http2.Framer
	app     appender
	rd      bytes.Reader
	dec     *hpack.Decoder
	nextID  uint32
	streams []Stream
	free    [][]byte // the body buffers of streams ended
	// block is the stream whose header block is being decoded (its
	// HEADERS, then any CONTINUATION), 0 for none.
	block     uint32
	blockEnds bool // the block's HEADERS ended its stream
	// the server's windows for request bodies, and its frame size
	sendConn int64
	sendInit int64
	maxFrame int
	// maxStreams is the server's limit of streams at once (its
	// SETTINGS_MAX_CONCURRENT_STREAMS; none until it says).
	maxStreams int
	// consumed is answer data received since the last WINDOW_UPDATE.
	consumed int64
	// waiting holds request bodies the server's windows held back.
	waiting []body
	// unanswered are the slots of the streams a GOAWAY said the server
	// will not answer (see Unanswered).
	unanswered []int
	// refused are requests the server refused unprocessed
	// (REFUSED_STREAM: it had more streams than it allows), to send again
	// as soon as it has room.
	refused   []refusal
	streamsOK bool // the Protocol's answers are streams
}

// refusal is a request refused unprocessed: its slot and number.
type refusal struct {
	slot int
	seq  uint64
}

// body is a request body (or its rest) waiting for window.
type body struct {
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

// NewConn is a connection whose streams carry p's requests.
func NewConn(p Protocol) *Conn {
	c := &Conn{p: p, nextID: 1, sendConn: 65535, sendInit: 65535, maxFrame: MaxFrame}
	c.fr = http2.NewFramer(&c.app, &c.rd)
	c.fr.SetMaxReadFrameSize(MaxFrame)
	c.fr.SetReuseFrames()
	c.dec = hpack.NewDecoder(4096, c.header)
	c.streamsOK = p.Streams()
	return c
}

// Greeting is the client's preface, its settings (no push, its stream
// window) and its connection window.
func (c *Conn) Greeting(b []byte) []byte {
	b = append(b, http2.ClientPreface...)
	c.app.b = b
	c.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: window})
	c.fr.WriteWindowUpdate(0, window-65535)
	return c.app.b
}

// AppendRequest appends request i, in slot s, as a new stream; ErrFull
// while the server has as many streams as it allows, or requests it
// refused wait to be sent again.
func (c *Conn) AppendRequest(b []byte, i uint64, s int) ([]byte, error) {
	if c.full() || len(c.refused) > 0 {
		return b, load.ErrFull
	}
	return c.appendStream(b, i, s)
}

// full says the server has as many streams as it allows.
func (c *Conn) full() bool { return c.maxStreams > 0 && len(c.streams) >= c.maxStreams }

// appendStream appends request i, in slot s, as a new stream.
func (c *Conn) appendStream(b []byte, i uint64, s int) ([]byte, error) {
	if c.nextID > maxStream {
		return b, load.ErrSpent // the loop goes on on a new connection
	}
	st := c.stream()
	st.id, st.slot, st.seq = c.nextID, s, i
	block, data, err := c.p.Request(i, st)
	if err == nil && len(block) > MaxFrame {
		err = fmt.Errorf("http2: a header block of %d bytes: more than a frame", len(block))
	}
	if err != nil {
		c.free = append(c.free, st.Body)
		c.streams = c.streams[:len(c.streams)-1]
		return b, err
	}
	c.nextID += 2
	c.app.b = b
	c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: st.id, BlockFragment: block, EndStream: len(data) == 0, EndHeaders: true})
	if len(data) > 0 {
		c.sendBody(body{id: st.id, window: c.sendInit, data: data})
	}
	return c.app.b, nil
}

// stream returns a new stream's entry (a body buffer reused).
func (c *Conn) stream() *Stream {
	st := Stream{Code: -1}
	if n := len(c.free); n > 0 {
		st.Body = c.free[n-1][:0]
		c.free = c.free[:n-1]
	}
	c.streams = append(c.streams, st)
	return &c.streams[len(c.streams)-1]
}

// sendBody frames as much of a request body as the server's windows let
// into app.b, and keeps the rest (copied) waiting for window.
func (c *Conn) sendBody(b body) {
	for len(b.data) > 0 {
		n := int(min(int64(len(b.data)), int64(c.maxFrame), c.sendConn, b.window))
		if n <= 0 {
			c.waiting = append(c.waiting, body{id: b.id, window: b.window, data: bytes.Clone(b.data)})
			return
		}
		c.fr.WriteData(b.id, n == len(b.data), b.data[:n])
		c.sendConn -= int64(n)
		b.window -= int64(n)
		b.data = b.data[n:]
	}
}

// resume sends what of the bodies waiting the windows now let through.
func (c *Conn) resume() {
	waiting := c.waiting
	c.waiting = nil
	for _, b := range waiting {
		if c.find(b.id) >= 0 { // else abandoned
			c.sendBody(b)
		}
	}
}

// find is the index of stream id among those in flight, or -1.
func (c *Conn) find(id uint32) int {
	for k := range c.streams {
		if c.streams[k].id == id {
			return k
		}
	}
	return -1
}

// end removes stream k from those in flight.
func (c *Conn) end(k int) {
	c.free = append(c.free, c.streams[k].Body)
	last := len(c.streams) - 1
	c.streams[k] = c.streams[last]
	c.streams = c.streams[:last]
}

// Cancel resets the stream of slot s.
func (c *Conn) Cancel(out []byte, s int) ([]byte, bool) {
	for k, r := range c.refused {
		if r.slot == s {
			c.refused = append(c.refused[:k], c.refused[k+1:]...)
			return out, true
		}
	}
	for k := range c.streams {
		if c.streams[k].slot == s {
			c.app.b = out
			c.fr.WriteRSTStream(c.streams[k].id, http2.ErrCodeCancel)
			c.end(k)
			return c.app.b, true
		}
	}
	return out, true
}

// header is the decoder's emit function: the fields of the block being
// decoded go to its stream, if it is still in flight.
func (c *Conn) header(f hpack.HeaderField) {
	k := c.find(c.block)
	if k < 0 {
		return // abandoned: the block is decoded only to keep the table
	}
	st := &c.streams[k]
	if f.Name == ":status" && !st.Trailers {
		st.Status, _ = strconv.Atoi(f.Value)
	}
	c.p.Header(st, f)
}

// Next frames one frame at the start of b.
func (c *Conn) Next(b, out []byte) (load.Frame, []byte, error) {
	none := load.Frame{Slot: -1}
	if len(b) < 9 {
		return none, out, nil
	}
	size := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
	if size > MaxFrame {
		return none, out, fmt.Errorf("http2: a frame of %d bytes, more than %d", size, MaxFrame)
	}
	if len(b) < 9+size {
		return none, out, nil
	}
	c.rd.Reset(b[:9+size])
	f, err := c.fr.ReadFrame()
	if err != nil {
		return none, out, fmt.Errorf("http2: %w", err)
	}
	c.app.b = out
	fr := load.Frame{N: 9 + size, Slot: -1}
	switch f := f.(type) {
	case *http2.HeadersFrame:
		fr, err = c.headers(fr, f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded(), f.StreamEnded())
	case *http2.ContinuationFrame:
		fr, err = c.headers(fr, f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded(), c.blockEnds)
	case *http2.DataFrame:
		fr = c.data(fr, f)
	case *http2.RSTStreamFrame:
		if k := c.find(f.StreamID); k >= 0 && f.ErrCode == http2.ErrCodeRefusedStream {
			// unprocessed: sent again when the server has room
			c.refused = append(c.refused, refusal{slot: c.streams[k].slot, seq: c.streams[k].seq})
			c.end(k)
		} else if k >= 0 {
			fr.Slot, fr.Result = c.streams[k].slot, load.Result{Status: load.TransportStatus(http2.StreamError{StreamID: f.StreamID, Code: f.ErrCode})}
			c.end(k)
		}
	case *http2.SettingsFrame:
		err = c.settings(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			c.fr.WritePing(true, f.Data)
		}
	case *http2.WindowUpdateFrame:
		c.windowUpdate(f)
	case *http2.GoAwayFrame:
		// the streams up to the last it names are answered; the others
		// never will be (the loop sends them again on a new connection)
		fr.Close = true
		for k := len(c.streams) - 1; k >= 0; k-- {
			if c.streams[k].id > f.LastStreamID {
				c.unanswered = append(c.unanswered, c.streams[k].slot)
				c.end(k)
			}
		}
		for _, r := range c.refused {
			c.unanswered = append(c.unanswered, r.slot)
		}
		c.refused = c.refused[:0]
	case *http2.PushPromiseFrame:
		err = errors.New("http2: a push promise, refused in the settings")
	}
	if err == nil && !fr.Close {
		if err = c.sendRefused(); err == load.ErrSpent {
			// no stream id left for them: the loop retires the connection
			// and sends them on its next (Unanswered)
			err, fr.Close = nil, true
		}
	}
	return fr, c.app.b, err
}

// sendRefused sends again, into app.b, the requests the server refused,
// as far as it has room for them. Where the stream ids ran out
// (load.ErrSpent) those not sent are left Unanswered.
func (c *Conn) sendRefused() error {
	for len(c.refused) > 0 && !c.full() {
		r := c.refused[0]
		c.refused = append(c.refused[:0], c.refused[1:]...)
		var err error
		if c.app.b, err = c.appendStream(c.app.b, r.seq, r.slot); err != nil {
			if err == load.ErrSpent {
				c.unanswered = append(c.unanswered, r.slot)
				for _, r := range c.refused {
					c.unanswered = append(c.unanswered, r.slot)
				}
				c.refused = c.refused[:0]
			}
			return err
		}
	}
	return nil
}

// Unanswered returns, once, the slots whose requests the connection will
// not answer: those the server, going away, said it will not (their
// streams above its GOAWAY's last), and those it refused when no stream
// id was left to send them again.
func (c *Conn) Unanswered() []int {
	u := c.unanswered
	c.unanswered = nil
	return u
}

// headers decodes a fragment of stream id's header block; at the end of
// its answer (end of stream) the answer is framed.
func (c *Conn) headers(fr load.Frame, id uint32, frag []byte, ended, endStream bool) (load.Frame, error) {
	if c.block == 0 {
		c.block, c.blockEnds = id, endStream
		if k := c.find(id); k >= 0 && c.streams[k].Status >= 200 {
			c.streams[k].Trailers = true
		}
	}
	// every block is decoded, an abandoned stream's too: the decoder's
	// table must follow the server's
	if _, err := c.dec.Write(frag); err != nil {
		return fr, fmt.Errorf("http2: hpack: %w", err)
	}
	if !ended {
		return fr, nil
	}
	c.block = 0
	if err := c.dec.Close(); err != nil {
		return fr, fmt.Errorf("http2: hpack: %w", err)
	}
	k := c.find(id)
	if k < 0 || !endStream {
		return fr, nil
	}
	return c.answer(fr, k), nil
}

// data takes an answer's body bytes (and tops up the connection's
// window).
func (c *Conn) data(fr load.Frame, f *http2.DataFrame) load.Frame {
	if c.consumed += int64(f.Length); c.consumed >= window/2 {
		c.fr.WriteWindowUpdate(0, uint32(c.consumed))
		c.consumed = 0
	}
	k := c.find(f.StreamID)
	if k < 0 {
		return fr // abandoned
	}
	st := &c.streams[k]
	st.N += len(f.Data())
	before := st.Units
	c.p.Data(st, f.Data())
	if f.StreamEnded() {
		return c.answer(fr, k)
	}
	if st.recv += int64(f.Length); st.recv >= window/2 { // a long stream's
		c.fr.WriteWindowUpdate(st.id, uint32(st.recv))
		st.recv = 0
	}
	if c.streamsOK && before == 0 && st.Units > 0 {
		fr.Slot, fr.Progress = st.slot, true // the answer's first message
	}
	return fr
}

// answer frames the answer of stream k, whole, and ends the stream.
func (c *Conn) answer(fr load.Frame, k int) load.Frame {
	st := &c.streams[k]
	fr.Slot = st.slot
	if st.Status == 0 {
		fr.Result = load.Result{Status: "protocol"} // no head, or only an informational one
	} else {
		fr.Result = c.p.Answer(st)
	}
	c.end(k)
	return fr
}

// settings applies the server's settings and acknowledges them.
func (c *Conn) settings(f *http2.SettingsFrame) error {
	if f.IsAck() {
		return nil
	}
	err := f.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingInitialWindowSize:
			// the change applies to the streams open too
			for k := range c.waiting {
				c.waiting[k].window += int64(s.Val) - c.sendInit
			}
			c.sendInit = int64(s.Val)
		case http2.SettingMaxFrameSize:
			c.maxFrame = int(s.Val)
		case http2.SettingMaxConcurrentStreams:
			c.maxStreams = int(min(s.Val, 1<<20))
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.fr.WriteSettingsAck()
	c.resume()
	return nil
}

// windowUpdate adds to a window of the server's and sends what waited.
func (c *Conn) windowUpdate(f *http2.WindowUpdateFrame) {
	if f.StreamID == 0 {
		c.sendConn += int64(f.Increment)
	} else {
		for k := range c.waiting {
			if c.waiting[k].id == f.StreamID {
				c.waiting[k].window += int64(f.Increment)
			}
		}
	}
	c.resume()
}
