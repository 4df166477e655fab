// Package quickack makes a client acknowledge every segment at once. Linux
// delays ACKs by up to ~40 ms, and TCP_QUICKACK, which turns that off, does
// not stick: the kernel may fall back to delayed ACKs after any read. A
// wrapped connection sets it again before every read. tandem uses it to
// confirm a delayed-ACK stall: if the stall vanishes when the client ACKs
// at once, the server's writes were waiting for that ACK (Nagle's algorithm).
package quickack

import (
	"context"
	"net"
	"runtime"
)

// Supported says whether this OS has TCP_QUICKACK; where it has not, a
// wrapped connection is an ordinary one.
const Supported = runtime.GOOS == "linux"

// Conn is a TCP connection that acknowledges at once.
type Conn struct {
	*net.TCPConn
}

// Wrap returns c acknowledging at once; a connection that is not TCP is
// returned as it is.
func Wrap(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	qc := Conn{tc}
	qc.set()
	return qc
}

// Read sets TCP_QUICKACK again, then reads.
func (c Conn) Read(p []byte) (int, error) {
	c.set()
	n, err := c.TCPConn.Read(p)
	c.set()
	return n, err
}

// Dial dials a TCP connection that acknowledges at once.
func Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return Wrap(c), nil
}
