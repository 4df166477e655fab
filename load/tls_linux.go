package load

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// Secure is a Wire whose connections speak TLS: the event loop runs
// crypto/tls over its own sockets (the handshake as the connection is
// dialed, blocking; records decrypted as the loop reads them). A nil
// config: plain TCP.
type Secure interface {
	TLSConfig() *tls.Config
}

// tlsConfigOf is w's TLS configuration, nil for none.
func tlsConfigOf(w Wire) *tls.Config {
	if s, ok := w.(Secure); ok {
		return s.TLSConfig()
	}
	return nil
}

// rawConn is a net.Conn over one of the loop's sockets, for crypto/tls:
// while blocking (the handshake) it reads and writes the socket itself;
// after, it reads only what the loop has received and handed it (in), and
// says "would block" when that is used up, which crypto/tls takes as a
// temporary error (the connection stays usable); its writes wait for room
// until deadline.
type rawConn struct {
	fd       int
	blocking bool
	in       []byte
	off      int
	deadline time.Time
}

// errWouldBlock is rawConn's read with nothing received: temporary.
var errWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "would block" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// add hands the conn bytes the loop received.
func (r *rawConn) add(b []byte) {
	if r.off == len(r.in) {
		r.in, r.off = r.in[:0], 0
	}
	r.in = append(r.in, b...)
}

func (r *rawConn) Read(b []byte) (int, error) {
	if r.blocking {
		for {
			n, err := unix.Read(r.fd, b)
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN: // the receive timeout ran out
				return 0, &net.OpError{Op: "read", Net: "tcp", Err: unix.ETIMEDOUT}
			case err != nil:
				return 0, &net.OpError{Op: "read", Net: "tcp", Err: err}
			case n == 0:
				return 0, io.EOF
			}
			return n, nil
		}
	}
	if r.off == len(r.in) {
		return 0, errWouldBlock
	}
	n := copy(b, r.in[r.off:])
	r.off += n
	return n, nil
}

func (r *rawConn) Write(b []byte) (int, error) {
	if err := writeAll(r.fd, b, r.deadline); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (r *rawConn) Close() error                     { return nil } // the loop closes the socket
func (r *rawConn) LocalAddr() net.Addr              { return nil }
func (r *rawConn) RemoteAddr() net.Addr             { return nil }
func (r *rawConn) SetDeadline(time.Time) error      { return nil }
func (r *rawConn) SetReadDeadline(time.Time) error  { return nil }
func (r *rawConn) SetWriteDeadline(time.Time) error { return nil }

// handshake runs a TLS client handshake on the blocking socket fd,
// bounded by timeout, and checks the protocol the server chose (ALPN)
// when cfg asks for one.
func handshake(fd int, cfg *tls.Config, timeout time.Duration) (*tls.Conn, *rawConn, error) {
	tv := unix.NsecToTimeval(int64(timeout))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	raw := &rawConn{fd: fd, blocking: true, deadline: time.Now().Add(timeout)}
	tc := tls.Client(raw, cfg)
	if err := tc.Handshake(); err != nil {
		return nil, nil, err
	}
	if want := cfg.NextProtos; len(want) > 0 && tc.ConnectionState().NegotiatedProtocol != want[0] {
		return nil, nil, fmt.Errorf("tls: the server chose protocol %q (ALPN), not %q", tc.ConnectionState().NegotiatedProtocol, want[0])
	}
	raw.blocking = false
	return tc, raw, nil
}

// decrypt reads what plaintext the records connection c received hold
// into c.buf; an error (not "would block") fails the connection.
func (c *loopConn) decrypt() error {
	for {
		if cap(c.buf)-len(c.buf) < 16<<10 {
			c.buf = append(c.buf, make([]byte, 16<<10)...)[:len(c.buf)]
		}
		n, err := c.tls.Read(c.buf[len(c.buf):cap(c.buf)])
		c.buf = c.buf[:len(c.buf)+n]
		if err == errWouldBlock {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// write sends b on connection c (through its TLS, if it has one),
// waiting for room in the socket's buffer until deadline.
func (c *loopConn) write(b []byte, deadline time.Time) error {
	if c.tls == nil {
		return writeAll(c.fd, b, deadline)
	}
	c.raw.deadline = deadline
	_, err := c.tls.Write(b)
	return err
}
