package pong

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"io"
	"math/big"
	"net"
	"time"

	"golang.org/x/net/http2/hpack"
)

// H2Options configures ServeH2.
type H2Options struct {
	// GRPC answers every request as a gRPC call: status 200 with
	// content-type application/grpc, Messages empty messages and trailers
	// with grpc-status 0. An empty message decodes as any proto3 message,
	// so any unary method (Messages 1) or server-streaming method
	// (Messages N) can be called. Without GRPC every request gets a plain
	// 200 "pong".
	GRPC bool
	// Messages is the number of empty gRPC messages in every answer
	// (with GRPC); 0 means 1.
	Messages int
}

// ServeH2 speaks HTTP/2 on ln until it is closed: prior-knowledge h2c on a
// plain listener, or h2 behind a tls.Listener whose config offers ALPN "h2".
// It answers every stream, once the request is complete (END_STREAM), with
// fixed pre-encoded frames, without decoding the request's headers. Each
// connection is served by one goroutine, none per request, and a request
// allocates nothing.
func ServeH2(ln net.Listener, o H2Options) {
	a := newH2Answer(o)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go serveH2Conn(c, a)
	}
}

// H2TLSConfig returns a server configuration with a fresh self-signed
// certificate for 127.0.0.1 and localhost, offering ALPN "h2" only: wrap a
// listener with tls.NewListener(ln, cfg) and pass it to ServeH2.
func H2TLSConfig() (*tls.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "tandem pong"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}}, nil
}

// HTTP/2 frame types and flags (RFC 9113, section 6).
const (
	frameData         = 0x0
	frameHeaders      = 0x1
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePushPromise  = 0x5
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8
	frameContinuation = 0x9

	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4

	settingInitialWindowSize = 0x4

	h2Preface      = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	maxFrame       = 16384 // the SETTINGS_MAX_FRAME_SIZE we keep to: the default
	defaultWindow  = 65535
	maxWindow      = 1<<31 - 1
	windowBatch    = 16 << 10 // return received DATA bytes once this many are consumed
	flushThreshold = 64 << 10 // write the output early beyond this
)

// h2Answer holds the pre-encoded frames of an answer, stream id 0 in their
// headers, patched per stream.
type h2Answer struct {
	headers  []byte // HEADERS frame, END_HEADERS
	data     []byte // DATA frame: "pong" with END_STREAM, or an empty gRPC message
	trailers []byte // gRPC only: HEADERS frame, END_HEADERS|END_STREAM
	messages int    // DATA frames per answer
}

func newH2Answer(o H2Options) *h2Answer {
	a := &h2Answer{messages: 1}
	if o.GRPC {
		if o.Messages > 1 {
			a.messages = o.Messages
		}
		a.headers = frame(frameHeaders, flagEndHeaders, hpackBlock(":status", "200", "content-type", "application/grpc"))
		a.data = frame(frameData, 0, []byte{0, 0, 0, 0, 0})
		a.trailers = frame(frameHeaders, flagEndHeaders|flagEndStream, hpackBlock("grpc-status", "0"))
	} else {
		a.headers = frame(frameHeaders, flagEndHeaders, hpackBlock(":status", "200", "content-type", "text/plain", "content-length", "4"))
		a.data = frame(frameData, flagEndStream, []byte("pong"))
	}
	return a
}

// dataLen is the flow-controlled size of one DATA frame of the answer.
func (a *h2Answer) dataLen() int64 { return int64(len(a.data) - 9) }

// hpackBlock encodes name, value pairs with static-table entries and
// literals without indexing only, so that no dynamic table state is shared
// between answers.
func hpackBlock(kv ...string) []byte {
	var buf bytes.Buffer
	e := hpack.NewEncoder(&buf)
	e.SetMaxDynamicTableSizeLimit(0)
	// the first field carries a table size update: encode and drop one
	_ = e.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	buf.Reset()
	for i := 0; i+1 < len(kv); i += 2 {
		_ = e.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return buf.Bytes()
}

func frame(typ, flags byte, payload []byte) []byte {
	f := appendFrameHeader(nil, len(payload), typ, flags, 0)
	return append(f, payload...)
}

func appendFrameHeader(b []byte, length int, typ, flags byte, stream uint32) []byte {
	return append(b, byte(length>>16), byte(length>>8), byte(length), typ, flags,
		byte(stream>>24), byte(stream>>16), byte(stream>>8), byte(stream))
}

// Stream states.
const (
	streamReceiving = iota // the request is not complete yet
	streamAnswering        // complete: its answer is due
	streamDone             // answered or reset: dropped at the next compaction
)

type h2Stream struct {
	id      uint32
	state   uint8
	sent    int32 // answer progress: 0 nothing, 1 headers, 1+k headers and k DATA frames
	unacked int32 // DATA bytes received and not yet returned by WINDOW_UPDATE
	window  int64 // send window
}

type h2Conn struct {
	c   net.Conn
	br  *bufio.Reader
	out []byte
	a   *h2Answer

	hdr     [9]byte
	payload [maxFrame]byte

	streams    []h2Stream
	answering  int    // streams in state streamAnswering
	dropped    int    // streams reset and not yet compacted
	lastID     uint32 // the highest stream id the client opened
	connWindow int64  // connection send window
	initWindow int64  // the peer's SETTINGS_INITIAL_WINDOW_SIZE
	unacked    int    // DATA bytes received on the connection, not yet returned
	goAway     bool

	contID  uint32 // stream of a header block awaiting CONTINUATION, or 0
	contEnd bool   // that block's HEADERS had END_STREAM
}

func serveH2Conn(c net.Conn, a *h2Answer) {
	defer c.Close()
	s := &h2Conn{
		c:          c,
		br:         bufio.NewReaderSize(c, 64<<10),
		out:        make([]byte, 0, flushThreshold+4<<10),
		a:          a,
		connWindow: defaultWindow,
		initWindow: defaultWindow,
	}
	s.serve()
}

func (s *h2Conn) serve() {
	// the server preface: an empty SETTINGS frame
	s.out = appendFrameHeader(s.out, 0, frameSettings, 0, 0)
	if !s.flush() {
		return
	}
	if _, err := io.ReadFull(s.br, s.payload[:len(h2Preface)]); err != nil || string(s.payload[:len(h2Preface)]) != h2Preface {
		return
	}
	first := true
	for {
		if !s.frameBuffered() {
			s.answer()
			if s.goAway && len(s.streams) == 0 {
				s.flush()
				return
			}
			if !s.flush() {
				return
			}
		}
		if _, err := io.ReadFull(s.br, s.hdr[:]); err != nil {
			return
		}
		length := int(s.hdr[0])<<16 | int(s.hdr[1])<<8 | int(s.hdr[2])
		typ, flags := s.hdr[3], s.hdr[4]
		id := binary.BigEndian.Uint32(s.hdr[5:]) & maxWindow
		if length > maxFrame {
			return
		}
		if first && (typ != frameSettings || flags&flagAck != 0) {
			return // the client preface ends with its SETTINGS
		}
		first = false
		if s.contID != 0 && (typ != frameContinuation || id != s.contID) {
			return
		}
		if !s.frame(length, typ, flags, id) {
			return
		}
		if len(s.out) >= flushThreshold && !s.flush() {
			return
		}
	}
}

// frameBuffered reports whether a whole frame is in the reader's buffer.
func (s *h2Conn) frameBuffered() bool {
	n := s.br.Buffered()
	if n < 9 {
		return false
	}
	h, _ := s.br.Peek(9)
	return n >= 9+(int(h[0])<<16|int(h[1])<<8|int(h[2]))
}

func (s *h2Conn) flush() bool {
	if len(s.out) == 0 {
		return true
	}
	_, err := s.c.Write(s.out)
	s.out = s.out[:0]
	return err == nil
}

// read reads a frame's payload into s.payload.
func (s *h2Conn) read(length int) ([]byte, bool) {
	p := s.payload[:length]
	_, err := io.ReadFull(s.br, p)
	return p, err == nil
}

func (s *h2Conn) skip(length int) bool {
	_, err := s.br.Discard(length)
	return err == nil
}

// frame handles one frame whose header has been read; false closes the
// connection.
func (s *h2Conn) frame(length int, typ, flags byte, id uint32) bool {
	switch typ {
	case frameHeaders:
		return s.onHeaders(length, flags, id)
	case frameContinuation:
		if !s.skip(length) || s.contID == 0 {
			return false
		}
		if flags&flagEndHeaders != 0 {
			if s.contEnd {
				s.complete(s.contID)
			}
			s.contID = 0
		}
	case frameData:
		return s.onData(length, flags, id)
	case frameSettings:
		return s.onSettings(length, flags, id)
	case framePing:
		p, ok := s.read(length)
		if !ok || id != 0 || length != 8 {
			return false
		}
		if flags&flagAck == 0 {
			s.out = appendFrameHeader(s.out, 8, framePing, flagAck, 0)
			s.out = append(s.out, p...)
		}
	case frameWindowUpdate:
		return s.onWindowUpdate(length, id)
	case frameRSTStream:
		if _, ok := s.read(length); !ok || id == 0 || length != 4 {
			return false
		}
		if st := s.find(id); st != nil {
			if st.state == streamAnswering {
				s.answering--
			}
			st.state = streamDone
			s.dropped++
		}
	case frameGoAway:
		if _, ok := s.read(length); !ok || id != 0 || length < 8 {
			return false
		}
		s.goAway = true
	case framePushPromise:
		return false // clients do not push
	default: // PRIORITY (0x2) and unknown types
		return s.skip(length)
	}
	return true
}

// onHeaders handles a HEADERS frame: a new stream, or trailers.
func (s *h2Conn) onHeaders(length int, flags byte, id uint32) bool {
	if !s.skip(length) || id == 0 || id&1 == 0 {
		return false
	}
	if id > s.lastID {
		s.lastID = id
		s.streams = append(s.streams, h2Stream{id: id, state: streamReceiving, window: s.initWindow})
	} else if st := s.find(id); st == nil || st.state != streamReceiving {
		return false // HEADERS on a closed stream
	}
	// else trailers
	if flags&flagEndHeaders == 0 {
		s.contID, s.contEnd = id, flags&flagEndStream != 0
		return true
	}
	if flags&flagEndStream != 0 {
		s.complete(id)
	}
	return true
}

// onData handles a DATA frame: its flow control, and the end of its stream.
func (s *h2Conn) onData(length int, flags byte, id uint32) bool {
	if !s.skip(length) || id == 0 {
		return false
	}
	s.unacked += length
	if s.unacked >= windowBatch {
		s.windowUpdate(0, s.unacked)
		s.unacked = 0
	}
	st := s.find(id)
	if st == nil || st.state != streamReceiving {
		return true
	}
	if flags&flagEndStream != 0 {
		s.complete(id)
		return true
	}
	st.unacked += int32(length)
	if st.unacked >= windowBatch {
		s.windowUpdate(id, int(st.unacked))
		st.unacked = 0
	}
	return true
}

// onSettings handles a SETTINGS frame: the initial window, and the ack.
func (s *h2Conn) onSettings(length int, flags byte, id uint32) bool {
	p, ok := s.read(length)
	if !ok || id != 0 || length%6 != 0 {
		return false
	}
	if flags&flagAck != 0 {
		return length == 0
	}
	for ; len(p) >= 6; p = p[6:] {
		if binary.BigEndian.Uint16(p) != settingInitialWindowSize {
			continue
		}
		v := int64(binary.BigEndian.Uint32(p[2:]))
		if v > maxWindow {
			return false
		}
		delta := v - s.initWindow
		s.initWindow = v
		for i := range s.streams {
			s.streams[i].window += delta
			if s.streams[i].window > maxWindow {
				return false
			}
		}
	}
	s.out = appendFrameHeader(s.out, 0, frameSettings, flagAck, 0)
	return true
}

// onWindowUpdate handles a WINDOW_UPDATE frame, of the connection or a stream.
func (s *h2Conn) onWindowUpdate(length int, id uint32) bool {
	p, ok := s.read(length)
	if !ok || length != 4 {
		return false
	}
	inc := int64(binary.BigEndian.Uint32(p) & maxWindow)
	if id == 0 {
		if inc == 0 {
			return false
		}
		s.connWindow += inc
		return s.connWindow <= maxWindow
	}
	if st := s.find(id); st != nil {
		st.window += inc
		return st.window <= maxWindow
	}
	return true
}

// find returns the stream with this id, or nil; recent streams first.
func (s *h2Conn) find(id uint32) *h2Stream {
	for i := len(s.streams) - 1; i >= 0; i-- {
		if s.streams[i].id == id {
			if s.streams[i].state == streamDone {
				return nil
			}
			return &s.streams[i]
		}
		if s.streams[i].id < id {
			break // ids ascend
		}
	}
	return nil
}

// complete marks a stream's request complete, its answer due.
func (s *h2Conn) complete(id uint32) {
	if st := s.find(id); st != nil && st.state == streamReceiving {
		st.state = streamAnswering
		s.answering++
	}
}

func (s *h2Conn) windowUpdate(id uint32, n int) {
	s.out = appendFrameHeader(s.out, 4, frameWindowUpdate, 0, id)
	s.out = binary.BigEndian.AppendUint32(s.out, uint32(n))
}

// appendFrame appends a pre-encoded frame with the stream id patched in.
func (s *h2Conn) appendFrame(f []byte, id uint32) {
	n := len(s.out)
	s.out = append(s.out, f...)
	binary.BigEndian.PutUint32(s.out[n+5:], id)
}

// answer writes what flow control allows of the due answers, in stream
// order, and drops the streams done with.
func (s *h2Conn) answer() {
	if s.answering == 0 {
		if s.dropped > 0 {
			s.compact() // nothing to write; drop reset streams
		}
		return
	}
	a := s.a
	size := a.dataLen()
	msgs := int32(a.messages)
	for i := range s.streams {
		st := &s.streams[i]
		if st.state != streamAnswering {
			continue
		}
		if st.sent == 0 {
			s.appendFrame(a.headers, st.id)
			st.sent = 1
		}
		for st.sent <= msgs && s.connWindow >= size && st.window >= size {
			s.appendFrame(a.data, st.id)
			s.connWindow -= size
			st.window -= size
			st.sent++
		}
		if st.sent <= msgs {
			if s.connWindow < size {
				break // the rest wait for a connection WINDOW_UPDATE
			}
			continue // this stream waits for its WINDOW_UPDATE
		}
		if a.trailers != nil {
			s.appendFrame(a.trailers, st.id)
		}
		st.state = streamDone
		s.answering--
		if len(s.out) >= flushThreshold && !s.flush() {
			break // the next read fails
		}
	}
	s.compact()
}

// compact drops done streams, keeping the order.
func (s *h2Conn) compact() {
	j := 0
	for i := range s.streams {
		if s.streams[i].state != streamDone {
			s.streams[j] = s.streams[i]
			j++
		}
	}
	s.streams = s.streams[:j]
	s.dropped = 0
}
