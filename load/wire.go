package load

import (
	"errors"
	"net"
)

// errLoopLinux is the event loop's answer where it cannot run: it is made
// of epoll, timerfd and kernel receive timestamps.
var errLoopLinux = errors.New("load: engine loop needs Linux (epoll, timerfd, kernel receive timestamps); use the worker engine")

// Wire is a request-response protocol that the event loop (Open with
// Engine "loop") speaks itself over plain TCP sockets, one request in
// flight per connection. A Dialer that also implements Wired offers one.
type Wire interface {
	// Addr is the target's IPv4 address and port.
	Addr() *net.TCPAddr
	// NewConn returns the protocol state of one connection.
	NewConn() WireConn
}

// WireConn is one connection's protocol state.
type WireConn interface {
	// AppendRequest appends the bytes of request number i of the run (see
	// the package doc) to b. An error fails the request unsent, with
	// status "request" (its values could not be rendered).
	AppendRequest(b []byte, i uint64) ([]byte, error)
	// Response frames the response at the start of b: its length (0 when
	// b holds only part of it), its result, and whether the server closes
	// the connection after it. An error says b is not a response.
	Response(b []byte) (n int, res Result, closeAfter bool, err error)
}

// Wired is a Dialer whose requests the event loop can send itself.
type Wired interface {
	Wire() (Wire, bool)
}
