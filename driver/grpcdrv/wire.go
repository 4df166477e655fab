package grpcdrv

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/driver/internal/h2wire"
	"github.com/tandem-bench/tandem/driver/internal/vary"
	"github.com/tandem-bench/tandem/load"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// maxRecv is the largest answer message a call takes, as grpc-go's
// default (a larger one fails the call with RESOURCE_EXHAUSTED).
const maxRecv = 4 << 20

// Wire offers the event loop (package h2wire) a unary or server-streaming
// call over cleartext HTTP/2 to an IPv4 address: the request encoded once
// (or, where values vary, rendered and encoded for each request into a
// connection's own buffers), each answer's messages counted and its status
// read from the trailers, nothing decoded. The clients share
// Options.Connections connections (0: one each). QuickACK diagnosis and a
// flow's captures stay on the worker engine (grpc-go). Without .proto
// files the method is resolved first, by the server's reflection.
func (c *Caller) Wire() (load.Wire, bool) {
	v := c.opts.Vary
	if c.opts.QuickACK || v != nil && v.UsesSlots() {
		return nil, false
	}
	addr, err := net.ResolveTCPAddr("tcp4", c.opts.Addr)
	if err != nil || addr.IP.To4() == nil {
		return nil, false
	}
	c.mu.Lock()
	resolved := c.desc != nil
	c.mu.Unlock()
	if !resolved {
		cc, err := c.dial(context.Background()) // bounded by dialTimeout
		if err != nil {
			return nil, false // the worker engine fails the same way, and says why
		}
		cc.Close()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &wire{addr: addr, conns: c.opts.Connections, stream: c.stream, vary: v, in: c.desc.Input(), md: c.md, authority: c.opts.Addr,
		path: c.path}
	var e h2wire.Encoder
	if v == nil || len(v.Headers) == 0 {
		if w.block = w.header(&e, nil); len(w.block) > h2wire.MaxFrame {
			return nil, false // a header block this large needs CONTINUATION frames
		}
	} else {
		// the metadata that varies, each name once (the last, as
		// metadata.Set keeps it); request 0's block well inside a frame
		for k := len(v.Headers) - 1; k >= 0; k-- {
			if name := strings.ToLower(v.Headers[k].Name); !slices.Contains(w.varyNames, name) && !reserved(name) {
				w.varyAt, w.varyNames = append(w.varyAt, k), append(w.varyNames, name)
			}
		}
		r := v.NewRequest()
		if r.Render(0) != nil || len(w.header(&e, r)) > h2wire.MaxFrame/2 {
			return nil, false
		}
	}
	w.body = binary.BigEndian.AppendUint32([]byte{0}, uint32(len(c.frame)))
	w.body = append(w.body, c.frame...)
	return w, true
}

// wire is a call for the event loop.
type wire struct {
	addr            *net.TCPAddr
	conns           int
	stream          bool // server-streaming: each message a unit
	path, authority string
	md              metadata.MD
	// vary renders the parts that vary (nil: none), in the method's
	// input type; of its headers those at varyAt go out, named varyNames.
	vary      *vary.Parts
	varyAt    []int
	varyNames []string
	in        protoreflect.MessageDescriptor
	// block is the request's header block, body its message
	// length-prefixed, when they do not vary.
	block, body []byte
}

func (w *wire) Addr() *net.TCPAddr { return w.addr }
func (w *wire) Connections() int   { return w.conns }

func (w *wire) NewConn() load.WireConn {
	p := &call{w: w}
	if w.vary != nil {
		p.r = w.vary.NewRequest()
		if w.vary.Body != nil {
			p.msg = dynamicpb.NewMessage(w.in)
		}
	}
	return h2wire.NewConn(p)
}

// header is the request's header block: its metadata, with r's values
// where they vary (set, as grpc-go's metadata.Set, over the call's own),
// as grpc-go sends metadata: reserved keys left out, binary (-bin) values
// in base64.
func (w *wire) header(e *h2wire.Encoder, r *vary.Request) []byte {
	e.Reset()
	e.Field(":method", "POST")
	e.Field(":scheme", "http")
	e.Field(":path", w.path)
	e.Field(":authority", w.authority)
	e.Field("content-type", "application/grpc")
	e.Field("te", "trailers")
	for k, vs := range w.md {
		if reserved(k) || r != nil && slices.Contains(w.varyNames, k) {
			continue
		}
		for _, v := range vs {
			e.Field(k, metadataValue(k, v)) // metadata.New lower-cased the keys
		}
	}
	if r != nil {
		for j, k := range w.varyAt {
			e.Field(w.varyNames[j], metadataValue(w.varyNames[j], string(r.Headers[k])))
		}
	}
	return e.Bytes()
}

// reserved says grpc-go leaves metadata key k out of a call's headers:
// it sets them itself.
func reserved(k string) bool {
	switch k {
	case "content-type", "user-agent", "grpc-message-type", "grpc-encoding", "grpc-message", "grpc-status", "grpc-timeout", "te":
		return true
	}
	return strings.HasPrefix(k, ":")
}

// metadataValue is v as grpc-go sends a value of key k: a binary one
// (-bin) in unpadded base64.
func metadataValue(k, v string) string {
	if strings.HasSuffix(k, "-bin") {
		return base64.RawStdEncoding.EncodeToString([]byte(v))
	}
	return v
}

// call is the gRPC of a call over h2wire, one connection's. Of each stream
// it keeps in Tag whether the answer's head was gRPC's (its content-type),
// in Code the grpc-status (-1: none yet), in Units the messages whole, in
// Left the bytes left of the message being read and in Body its prefix
// while incomplete. Where values vary, r renders request i's, msg decodes
// its JSON and body holds it encoded; enc encodes its header block.
type call struct {
	w    *wire
	r    *vary.Request
	msg  *dynamicpb.Message
	enc  h2wire.Encoder
	body []byte
}

// Request is request i: the call's own, or rendered with its values (a
// request that does not render or does not fit the method's input fails
// as the worker engine fails it: StatusRequest).
func (p *call) Request(i uint64, _ *h2wire.Stream) ([]byte, []byte, error) {
	if p.r == nil {
		return p.w.block, p.w.body, nil
	}
	if err := p.r.Render(i); err != nil {
		return nil, nil, err
	}
	block, body := p.w.block, p.w.body
	if block == nil {
		block = p.w.header(&p.enc, p.r)
	}
	if p.msg != nil {
		if err := protojson.Unmarshal(p.r.Body, p.msg); err != nil {
			return nil, nil, fmt.Errorf("request %d for %s: %w", i, p.w.in.FullName(), err)
		}
		var err error
		p.body = append(p.body[:0], 0, 0, 0, 0, 0)
		if p.body, err = (proto.MarshalOptions{Deterministic: true}).MarshalAppend(p.body, p.msg); err != nil {
			return nil, nil, fmt.Errorf("request %d: encode: %w", i, err)
		}
		binary.BigEndian.PutUint32(p.body[1:5], uint32(len(p.body)-5))
		body = p.body
	}
	return block, body, nil
}

// Streams: a server-streaming call's answer is its messages.
func (p *call) Streams() bool { return p.w.stream }

func (p *call) Header(st *h2wire.Stream, f hpack.HeaderField) {
	switch f.Name {
	case "content-type":
		if v := f.Value; v == "application/grpc" || strings.HasPrefix(v, "application/grpc+") || strings.HasPrefix(v, "application/grpc;") {
			st.Tag = 1
		}
	case "grpc-status":
		st.Code = -2 // present, malformed until parsed
		if n, ok := atoi(f.Value); ok {
			st.Code = n
		}
	}
}

// atoi is s as a non-negative number.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// Data counts the messages of an answer by their 5-byte prefixes
// (compressed flag, length); a compressed one or one over maxRecv is
// marked in Left (-1, -2), and what follows is not counted.
func (p *call) Data(st *h2wire.Stream, b []byte) {
	for len(b) > 0 && st.Left >= 0 {
		if st.Left > 0 {
			n := min(st.Left, len(b))
			st.Left -= n
			if b = b[n:]; st.Left == 0 {
				st.Units++
			}
			continue
		}
		n := min(5-len(st.Body), len(b))
		st.Body, b = append(st.Body, b[:n]...), b[n:]
		if len(st.Body) < 5 {
			return
		}
		size := binary.BigEndian.Uint32(st.Body[1:])
		switch {
		case st.Body[0] != 0:
			st.Left = -1 // compressed, and no encoding was asked for
		case size > maxRecv:
			st.Left = -2
		case size == 0:
			st.Units++
		default:
			st.Left = int(size)
		}
		st.Body = st.Body[:0]
	}
}

// Answer judges a call's answer as grpc-go does: a head that is not
// gRPC's by its HTTP status; a message cut short, compressed or too large
// (INTERNAL, RESOURCE_EXHAUSTED); a status in the trailers (none:
// UNKNOWN); a successful unary call with exactly one message whole. A
// stream's units are its messages, failed or not.
func (p *call) Answer(st *h2wire.Stream) load.Result {
	code := codes.OK
	switch {
	case st.Tag == 0:
		code = httpCode(st.Status)
	case st.Code == -2, st.Code == -1:
		code = codes.Unknown // malformed, or none
	case st.Code != 0:
		code = codes.Code(st.Code)
	case st.Left == -2:
		code = codes.ResourceExhausted
	case st.Left == -1, st.Left > 0, len(st.Body) > 0:
		code = codes.Internal // compressed, or cut short
	case !p.w.stream && st.Units != 1:
		code = codes.Internal // a unary answer of other than one message
	}
	var res load.Result
	if code != codes.OK {
		res.Status = codeStatus(code)
	}
	switch {
	case p.w.stream:
		res.Units = st.Units
	case code == codes.OK:
		res.Units = 1
	}
	return res
}

// httpCode is grpc-go's code for an answer whose head is not gRPC's.
func httpCode(status int) codes.Code {
	switch status {
	case 400:
		return codes.Internal
	case 401:
		return codes.Unauthenticated
	case 403:
		return codes.PermissionDenied
	case 404:
		return codes.Unimplemented
	case 429, 502, 503, 504:
		return codes.Unavailable
	}
	return codes.Unknown
}
