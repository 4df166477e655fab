package load

import (
	"errors"
	"net"
)

// errLoopLinux is the event loop's answer where it cannot run: it is made
// of epoll, timerfd and kernel receive timestamps.
var errLoopLinux = errors.New("load: engine loop needs Linux (epoll, timerfd, kernel receive timestamps); use the worker engine")

// Wire is a request-response protocol that the event loop (Open with
// Engine "loop") speaks itself over plain TCP sockets. A Dialer that also
// implements Wired offers one.
type Wire interface {
	// Addr is the target's IPv4 address and port.
	Addr() *net.TCPAddr
	// NewConn returns the protocol state of one connection.
	NewConn() WireConn
}

// Shared is a Wire whose connections each carry several requests at once
// (HTTP/2's streams): a closed loop's clients share Connections of them,
// client k on connection k mod Connections. Zero: a connection each.
type Shared interface {
	Connections() int
}

// WireConn is one connection's protocol state. The loop gives each request
// in flight a slot (a client of a closed loop, a connection's turn of an
// open one): a number that is the request's until its answer is framed,
// cancelled or its connection fails. A protocol that carries one request
// at a time (HTTP/1.1) is a SerialConn made a WireConn by Serial.
type WireConn interface {
	// Greeting appends what the client sends as the connection opens
	// (HTTP/2's preface and settings; nothing for HTTP/1.1).
	Greeting(b []byte) []byte
	// AppendRequest appends the bytes of request number i of the run (see
	// the package doc), carried in slot s, to b. ErrFull holds the request
	// back until one in flight on the connection ends; another error fails
	// it unsent, with status "request" (its values could not be rendered,
	// or the connection takes no more).
	AppendRequest(b []byte, i uint64, s int) ([]byte, error)
	// Next frames what is at the start of b: a response, or one of the
	// protocol's own frames, which may need a reply (appended to out). An
	// error says b is not the protocol: the connection is closed and the
	// requests in flight on it fail with status "protocol".
	Next(b, out []byte) (Frame, []byte, error)
	// Cancel appends to out what abandons the request in slot s (its
	// timeout passed) while the connection carries on; ok is false when
	// the connection cannot, and must be closed.
	Cancel(out []byte, s int) (_ []byte, ok bool)
}

// ErrFull is WireConn.AppendRequest's answer when the connection takes no
// more requests until one in flight ends (HTTP/2: the server's limit of
// concurrent streams): the request waits, and is appended again then.
var ErrFull = errors.New("load: the connection carries as many requests as it may")

// ErrSpent is WireConn.AppendRequest's answer when the connection can
// carry no more requests at all (HTTP/2: its stream ids ran out): the
// request goes on a new connection once those in flight are answered, as
// after the server's going away.
var ErrSpent = errors.New("load: the connection carries no more requests")

// Frame is what WireConn.Next framed.
type Frame struct {
	// N is the bytes framed: 0 when b holds only part of a frame.
	N int
	// Slot is the slot whose answer the frame completes, or -1.
	Slot int
	// Progress, with a Slot, says instead that the frame brought the first
	// message of the slot's answer, which goes on (a stream's): its
	// arrival times the answer's Result.First.
	Progress bool
	// Result is the answer's (with a Slot).
	Result Result
	// Close says the server takes no more requests on the connection:
	// requests still in flight on it fail with status "eof".
	Close bool
}

// SerialConn is one connection's state for a protocol that carries one
// request at a time, answers in order and needs no greeting or reply.
type SerialConn interface {
	// AppendRequest appends the bytes of request number i to b (see
	// WireConn.AppendRequest).
	AppendRequest(b []byte, i uint64) ([]byte, error)
	// Response frames the response at the start of b: its length (0 when
	// b holds only part of it), its result, and whether the server closes
	// the connection after it. An error says b is not a response.
	Response(b []byte) (n int, res Result, closeAfter bool, err error)
}

// Serial is the WireConn of a SerialConn: each response answers the
// request sent last; a request is cancelled by closing the connection.
func Serial(c SerialConn) WireConn { return &serial{c: c, slot: -1} }

// SerialOf is the SerialConn that Serial made wc of, if it did.
func SerialOf(wc WireConn) (SerialConn, bool) {
	s, ok := wc.(*serial)
	if !ok {
		return nil, false
	}
	return s.c, true
}

type serial struct {
	c    SerialConn
	slot int // the slot of the request sent last
}

func (s *serial) Greeting(b []byte) []byte { return b }

func (s *serial) AppendRequest(b []byte, i uint64, slot int) ([]byte, error) {
	s.slot = slot
	return s.c.AppendRequest(b, i)
}

func (s *serial) Next(b, out []byte) (Frame, []byte, error) {
	n, res, closeAfter, err := s.c.Response(b)
	if err != nil || n == 0 {
		return Frame{Slot: -1}, out, err
	}
	return Frame{N: n, Slot: s.slot, Result: res, Close: closeAfter}, out, nil
}

func (s *serial) Cancel(out []byte, _ int) ([]byte, bool) { return out, false }

// Wired is a Dialer whose requests the event loop can send itself.
type Wired interface {
	Wire() (Wire, bool)
}
