package link

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// bufSize is the most one read takes from a sender.
	bufSize = 32 << 10
	// queueLen is how many chunks one direction of a connection holds
	// between its reader and its writer: at most queueLen·bufSize bytes
	// (4 MiB) in flight, like a TCP window, so a delayed connection moves
	// at most 4 MiB per delay.
	queueLen = 128
)

// buffer is one read's bytes, shared by the pieces cut from it; the last
// to let go of it puts it back in the link's pool.
type buffer struct {
	b    []byte
	refs atomic.Int32
}

// piece is a run of bytes that crosses a direction at once, not before due.
type piece struct {
	data  []byte
	buf   *buffer
	due   time.Time
	read  time.Time // when its bytes were read from the sender
	reset bool      // after this piece, reset the connection (ResetAfterBytes)
}

// conn is one forwarded connection: a client, its upstream connection, and
// a pipe for each direction.
type conn struct {
	l                *Link
	client, upstream *net.TCPConn
	ctx              context.Context // ends when the connection is reset or closed
	cancel           context.CancelFunc
	end              sync.Once
	resetAfter       time.Duration // the shorter ResetAfter when accepted (0: none)
	up, down         *pipe
}

func newConn(l *Link, client, upstream *net.TCPConn) *conn {
	c := &conn{l: l, client: client, upstream: upstream}
	c.ctx, c.cancel = context.WithCancel(l.ctx)
	id := l.nextID.Add(1)
	c.up = &pipe{c: c, dir: &l.up, other: &l.down, src: client, dst: upstream,
		rng: rand.New(rand.NewPCG(l.seed, id<<1))}
	c.down = &pipe{c: c, dir: &l.down, other: &l.up, src: upstream, dst: client,
		rng: rand.New(rand.NewPCG(l.seed, id<<1|1))}
	up, down := l.up.cond.Load(), l.down.cond.Load()
	c.resetAfter = shortest(up.ResetAfter, down.ResetAfter)
	return c
}

// shortest is the shorter of two durations, 0 standing for none.
func shortest(a, b time.Duration) time.Duration {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// run forwards both directions and returns when both have ended; the
// calling goroutine reads the client.
func (c *conn) run() {
	if c.resetAfter > 0 {
		timer := time.AfterFunc(c.resetAfter, func() { c.reset(true) })
		defer timer.Stop()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.down.run()
	}()
	c.up.run()
	<-done
	c.finish(false)
}

// reset ends the connection with an RST to both ends; byLink counts it in
// Stats.Resets, if the connection had not ended already.
func (c *conn) reset(byLink bool) {
	if c.finish(true) && byLink {
		c.l.resets.Add(1)
	}
}

// finish closes both ends, with an RST if abrupt, else with a FIN; true if
// this call ended the connection, false if it had ended already.
func (c *conn) finish(abrupt bool) bool {
	first := false
	c.end.Do(func() {
		first = true
		c.cancel()
		if abrupt {
			_ = c.client.SetLinger(0)
			_ = c.upstream.SetLinger(0)
			if k := c.l.kernel; k != nil {
				k.Abort(c.upstream.LocalAddr().String()) // the reset may be lost in a full queue
			}
		}
		_ = c.client.Close()
		_ = c.upstream.Close()
	})
	return first
}

// pipe carries one direction of a connection: a reader that stamps each
// chunk with the time it may be delivered, and a writer that delivers it
// then.
type pipe struct {
	c          *conn
	dir, other *direction
	src, dst   *net.TCPConn
	q          chan piece
	rng        *rand.Rand // the reader's only
	due        time.Time  // the last piece's due: the next is never earlier
	passed     int64      // bytes read so far (ResetAfterBytes)
	failed     bool       // the reader ended on an error, not a FIN
}

// run reads in this goroutine and writes in another until both end.
func (p *pipe) run() {
	p.q = make(chan piece, queueLen)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.write()
	}()
	p.read()
	<-done
}

// read takes chunks from the sender and queues them, until the sender
// finishes, fails, or the connection ends.
func (p *pipe) read() {
	defer close(p.q)
	for {
		buf := p.c.l.bufs.Get().(*buffer)
		buf.refs.Store(1)
		n, err := p.src.Read(buf.b)
		ok := true
		if n > 0 {
			// The conditions of the moment the chunk was read, taken
			// before it counts as read (so Set after Stats shows it read
			// does not change it).
			c := p.dir.cond.Load()
			p.dir.read.Add(int64(n))
			ok = p.push(c, buf, buf.b[:n])
		}
		p.release(buf)
		if !ok {
			return
		}
		if err != nil {
			p.failed = !errors.Is(err, io.EOF)
			return
		}
	}
}

// push cuts a chunk into pieces (by the bandwidth's bucket and at lost
// segments), stamps each, and queues them; false if the connection ended or
// is to be reset after them.
func (p *pipe) push(c *Conditions, buf *buffer, data []byte) bool {
	reset := false
	if c.ResetAfterBytes > 0 {
		left := max(c.ResetAfterBytes-p.passed, 0)
		if int64(len(data)) >= left {
			data, reset = data[:left], true
		}
	}
	p.passed += int64(len(data))
	for len(data) > 0 {
		n := len(data)
		if c.Bandwidth > 0 {
			n = min(n, c.burst())
			if !p.tokens(n) {
				return false
			}
		}
		if !p.stamp(c, buf, data[:n]) {
			return false
		}
		data = data[n:]
	}
	if reset {
		p.send(piece{reset: true})
		return false
	}
	return true
}

// tokens waits until the direction's bucket lets n bytes through; false if
// the connection ended first.
func (p *pipe) tokens(n int) bool {
	for n > 0 {
		k := min(n, p.dir.lim.Burst())
		if k <= 0 { // no cap any more (Set), or a bucket being changed
			k = n
		}
		if err := p.dir.lim.WaitN(p.c.ctx, k); err != nil {
			if p.c.ctx.Err() != nil {
				return false
			}
			continue // the bucket changed size under us (Set): ask again
		}
		n -= k
	}
	return true
}

// stamp draws a piece's delay and losses and queues it: bytes behind a lost
// segment wait for its retransmission. False if the connection ended.
func (p *pipe) stamp(c *Conditions, buf *buffer, data []byte) bool {
	now := time.Now()
	base := now.Add(c.delay(p.rng))
	held, start := time.Duration(0), 0
	if c.Loss > 0 {
		rto := MinRTO + c.Delay + p.other.cond.Load().Delay
		for off := 0; off < len(data); off += SegmentSize {
			s, lost := stall(p.rng, c.Loss, rto)
			if lost == 0 {
				continue
			}
			p.dir.lost.Add(int64(lost))
			if s <= held {
				continue
			}
			if off > start {
				if !p.send(piece{data: data[start:off], buf: buf, due: base.Add(held), read: now}) {
					return false
				}
				start = off
			}
			held = s
		}
	}
	return p.send(piece{data: data[start:], buf: buf, due: base.Add(held), read: now})
}

// send queues a piece, never due before the one ahead of it.
func (p *pipe) send(pc piece) bool {
	if pc.due.Before(p.due) {
		pc.due = p.due
	}
	p.due = pc.due
	if pc.buf != nil {
		pc.buf.refs.Add(1)
	}
	select {
	case p.q <- pc:
		return true
	case <-p.c.ctx.Done():
		p.release(pc.buf)
		return false
	}
}

// release lets go of a piece's buffer.
func (p *pipe) release(buf *buffer) {
	if buf != nil && buf.refs.Add(-1) == 0 {
		p.c.l.bufs.Put(buf)
	}
}

// write delivers each queued piece when it is due and the link is not
// partitioned; at the sender's FIN it half-closes the receiver, at an error
// it resets the connection.
func (p *pipe) write() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for pc := range p.q {
		if !p.until(pc.due, timer) || !p.c.l.await(p.c.ctx) {
			p.release(pc.buf)
			return
		}
		if len(pc.data) > 0 {
			n, err := p.dst.Write(pc.data)
			p.dir.bytes.Add(int64(n))
			p.dir.held(time.Since(pc.read))
			if err != nil {
				p.release(pc.buf)
				p.c.reset(false)
				return
			}
		}
		p.release(pc.buf)
		if pc.reset {
			p.c.reset(true)
			return
		}
	}
	if p.failed {
		p.c.reset(false)
		return
	}
	if err := p.dst.CloseWrite(); err != nil {
		p.c.reset(false)
	}
}

// until waits for due; false if the connection ended first.
func (p *pipe) until(due time.Time, timer *time.Timer) bool {
	d := time.Until(due)
	if d <= 0 {
		return p.c.ctx.Err() == nil
	}
	timer.Reset(d)
	select {
	case <-timer.C:
		return true
	case <-p.c.ctx.Done():
		timer.Stop()
		return false
	}
}
