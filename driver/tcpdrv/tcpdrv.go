// Package tcpdrv sends a request over plain TCP and reads one answer per
// request: line protocols such as Redis inline commands or memcached text,
// and binary protocols whose answers carry a length prefix. A connection
// carries one request at a time.
package tcpdrv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tandem-bench/tandem/driver/internal/vary"
	"github.com/tandem-bench/tandem/driver/quickack"
	"github.com/tandem-bench/tandem/load"
)

// DefaultMaxAnswer bounds an answer when Options.MaxAnswer is 0.
const DefaultMaxAnswer = 1 << 20

// Options configure a Caller.
type Options struct {
	// Addr is the target's host:port (a tcp:// prefix is allowed).
	Addr string
	// Send is the request's bytes.
	Send []byte
	// Until ends an answer: it is read up to and including these bytes.
	Until []byte
	// LengthPrefix, instead of Until, is the size of an answer's length
	// prefix in bytes (1, 2 or 4, big-endian); the prefix is not part of
	// the answer.
	LengthPrefix int
	// ErrorPrefix, if set, marks an answer that starts with it as a failed
	// request (status tcp:error), e.g. "-" for a Redis error.
	ErrorPrefix []byte
	// Timeout bounds each request.
	Timeout time.Duration
	// MaxAnswer bounds an answer; 0 is DefaultMaxAnswer.
	MaxAnswer int
	// QuickACK makes the client acknowledge every segment at once, to
	// confirm a delayed-ACK stall.
	QuickACK bool
	// Vary, if its Body is set, renders each request number's bytes in
	// place of Send.
	Vary *vary.Parts
}

// Caller dials connections for one request shape.
type Caller struct{ o Options }

// New checks the options and returns a Caller.
func New(o Options) (*Caller, error) {
	o.Addr = strings.TrimPrefix(o.Addr, "tcp://")
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return nil, fmt.Errorf("tcp address %q: %w", o.Addr, err)
	}
	if o.Vary == nil || o.Vary.Body == nil {
		o.Vary = nil
	}
	switch {
	case len(o.Send) == 0 && o.Vary == nil:
		return nil, errors.New("tcp: nothing to send")
	case o.LengthPrefix != 0 && len(o.Until) > 0:
		return nil, errors.New("tcp: until and a length prefix are two ways to end an answer: choose one")
	case o.LengthPrefix != 0 && o.LengthPrefix != 1 && o.LengthPrefix != 2 && o.LengthPrefix != 4:
		return nil, fmt.Errorf("tcp: a length prefix of %d bytes; want 1, 2 or 4", o.LengthPrefix)
	case o.LengthPrefix == 0 && len(o.Until) == 0:
		return nil, errors.New("tcp: no way to end an answer: set until or a length prefix")
	}
	if o.MaxAnswer <= 0 {
		o.MaxAnswer = DefaultMaxAnswer
	}
	return &Caller{o: o}, nil
}

// Dial opens a connection for load.
func (c *Caller) Dial(ctx context.Context) (load.Conn, error) { return c.DialConn(ctx) }

// DialConn opens a connection.
func (c *Caller) DialConn(ctx context.Context) (*Conn, error) {
	var d net.Dialer
	if c.o.Timeout > 0 {
		d.Timeout = c.o.Timeout
	}
	nc, err := d.DialContext(ctx, "tcp", c.o.Addr)
	if err != nil {
		return nil, err
	}
	if c.o.QuickACK {
		nc = quickack.Wrap(nc)
	}
	cn := &Conn{c: c, nc: nc, r: bufio.NewReaderSize(nc, 16<<10)}
	if v := c.o.Vary; v != nil {
		cn.vary = v.NewRequest()
	}
	return cn, nil
}

// redial replaces a connection a failed request left mid-answer.
func (cn *Conn) redial(ctx context.Context, deadline time.Time) error {
	d := net.Dialer{Deadline: deadline}
	nc, err := d.DialContext(ctx, "tcp", cn.c.o.Addr)
	if err != nil {
		return err
	}
	if cn.c.o.QuickACK {
		nc = quickack.Wrap(nc)
	}
	cn.nc = nc
	cn.r.Reset(nc)
	cn.watched = nil // watch the new connection
	return nil
}

// Conn is one connection; one request at a time. After a failed request
// (the stream may be mid-answer) the next one dials a new connection.
type Conn struct {
	c   *Caller
	nc  net.Conn // nil after a failed request
	r   *bufio.Reader
	buf []byte
	// watched is the run context whose end interrupts a wait; stop ends
	// the watch.
	watched context.Context
	stop    func() bool
	// vary renders each request's bytes (Options.Vary).
	vary *vary.Request
}

// Do sends request number i once and reads its answer by deadline.
func (cn *Conn) Do(ctx context.Context, i uint64, deadline time.Time) load.Result {
	_, res := cn.do(ctx, i, deadline)
	return res
}

// Ask sends the request once (request number 0, when its bytes vary) and
// returns the answer as JSON (see jsonText).
func (cn *Conn) Ask(ctx context.Context) ([][]byte, load.Result) {
	ans, res := cn.do(ctx, 0, time.Now().Add(cn.timeout()))
	if res.Status != "" && res.Status != statusError {
		return nil, res
	}
	js, err := jsonText(ans)
	if err != nil {
		return nil, load.Result{Status: "tcp:answer"}
	}
	return [][]byte{js}, res
}

func (cn *Conn) timeout() time.Duration {
	if cn.c.o.Timeout > 0 {
		return cn.c.o.Timeout
	}
	return 10 * time.Second
}

// statusError is the status of an answer that starts with ErrorPrefix.
const statusError = "tcp:error"

func (cn *Conn) do(ctx context.Context, i uint64, deadline time.Time) ([]byte, load.Result) {
	if err := ctx.Err(); err != nil {
		return nil, load.Result{Status: load.TransportStatus(err)}
	}
	send := cn.c.o.Send
	if cn.vary != nil {
		if err := cn.vary.Render(i); err != nil {
			return nil, load.Result{Status: load.StatusRequest}
		}
		send = cn.vary.Body
	}
	if cn.nc == nil {
		if err := cn.redial(ctx, deadline); err != nil {
			return nil, load.Result{Status: load.TransportStatus(err)}
		}
	}
	if ctx != cn.watched {
		// the run's end interrupts a wait at once, not at the deadline
		if cn.stop != nil {
			cn.stop()
		}
		cn.watched = ctx
		nc := cn.nc
		cn.stop = context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
	}
	cn.nc.SetDeadline(deadline)
	if err := ctx.Err(); err != nil {
		// the run ended between the check above and the deadline, which
		// then replaced the one that would have cut the wait short
		return nil, load.Result{Status: load.TransportStatus(err)}
	}
	if _, err := cn.nc.Write(send); err != nil {
		return nil, cn.fail(err)
	}
	ans, err := cn.read()
	if err == nil && cn.r.Buffered() > 0 {
		// more came than one answer: the framing does not fit the
		// protocol (a Redis bulk reply read to its first line), and what
		// is left would be taken for the next answer
		err = errExtra
	}
	if err != nil {
		return nil, cn.fail(err)
	}
	if p := cn.c.o.ErrorPrefix; len(p) > 0 && bytes.HasPrefix(ans, p) {
		return ans, load.Result{Status: statusError}
	}
	return ans, load.Result{Units: 1}
}

// errTooLarge is an answer over MaxAnswer; errExtra, bytes after an
// answer before the next request was sent.
var (
	errTooLarge = errors.New("answer too large")
	errExtra    = errors.New("bytes after the answer")
)

// read reads one answer into cn.buf.
func (cn *Conn) read() ([]byte, error) {
	o := cn.c.o
	if o.LengthPrefix > 0 {
		var p [4]byte
		if _, err := io.ReadFull(cn.r, p[:o.LengthPrefix]); err != nil {
			return nil, err
		}
		var n int
		switch o.LengthPrefix {
		case 1:
			n = int(p[0])
		case 2:
			n = int(binary.BigEndian.Uint16(p[:2]))
		default:
			n = int(binary.BigEndian.Uint32(p[:4]))
		}
		if n > o.MaxAnswer {
			return nil, errTooLarge
		}
		cn.buf = append(cn.buf[:0], make([]byte, n)...)
		_, err := io.ReadFull(cn.r, cn.buf)
		return cn.buf, err
	}
	last := o.Until[len(o.Until)-1]
	cn.buf = cn.buf[:0]
	for {
		chunk, err := cn.r.ReadSlice(last)
		cn.buf = append(cn.buf, chunk...)
		if len(cn.buf) > o.MaxAnswer {
			return nil, errTooLarge
		}
		switch {
		case err == nil && bytes.HasSuffix(cn.buf, o.Until):
			return cn.buf, nil
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// fail closes the connection after a failed request (its stream may be
// mid-answer) and names the failure.
func (cn *Conn) fail(err error) load.Result {
	cn.nc.Close()
	cn.nc = nil
	switch {
	case errors.Is(err, errTooLarge):
		return load.Result{Status: "too-large"}
	case errors.Is(err, errExtra):
		return load.Result{Status: "tcp:extra"}
	}
	return load.Result{Status: load.TransportStatus(err)}
}

// Close closes the connection.
func (cn *Conn) Close() error {
	if cn.stop != nil {
		cn.stop()
	}
	if cn.nc == nil {
		return nil
	}
	return cn.nc.Close()
}

// jsonText is an answer as JSON for compat: a string when it is UTF-8
// text, else {"base64": …}, so that two binary answers never look alike.
func jsonText(ans []byte) ([]byte, error) {
	if utf8.Valid(ans) {
		return json.Marshal(string(ans))
	}
	return json.Marshal(map[string]string{"base64": base64.StdEncoding.EncodeToString(ans)})
}
