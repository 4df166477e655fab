package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime"
	"time"
	"unsafe"

	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/internal/rawclock"
	"github.com/tandem-bench/tandem/results"
	"golang.org/x/sys/unix"
)

// The event loop: one goroutine on one OS thread owns every connection
// (raw non-blocking sockets and an epoll set, outside Go's netpoller). It
// sleeps until the next arrival (clock_nanosleep, absolute, on
// CLOCK_MONOTONIC), collects what answers came in meanwhile, and sends the
// arrivals that are due. When no arrival waits for a connection it does
// not wake up for answers at all: the kernel stamps each answer's arrival
// (SO_TIMESTAMPING, software receive timestamps), so reading it later
// loses nothing. One wake-up per arrival, where a goroutine per connection
// costs two (the arrival's and the answer's) plus the runtime's hand-offs.
// The blocking waits are raw system calls, so the runtime does not hand
// the thread's P around on every wait.

// maxWait caps one blocking wait, so cancellation and timeouts are seen.
const maxWait = 10 * time.Millisecond

// A closed loop polls for answers without blocking for up to spinMax
// before it sleeps in epoll_wait (see eventLoop.await): about the time a
// loopback answer takes, so that a loop with one request in flight seldom
// sleeps (twice the requests a second of one that sleeps for each answer).
// It polls only while that pays (eventLoop.spins): with at most
// spinInFlight requests in flight, and while answers come on average
// within twice spinMax; otherwise it sleeps at once, as wrk does.
const (
	spinMax      = 50 * time.Microsecond
	spinInFlight = 4
)

// loopConn is one connection: its socket, its protocol state, the bytes
// read and not yet framed and those to send.
type loopConn struct {
	fd     int
	wc     WireConn
	serial bool      // one request at a time (Serial): a late answer closes it
	rx     time.Time // the kernel's stamp of the latest bytes read
	buf    []byte
	out    []byte // to send: while its answers are read (hold), sends wait here
	hold   bool
	tls    *tls.Conn // over raw, when the wire is Secure
	raw    *rawConn
	busy   int // slots in flight on it
	// closing: the server takes no more requests on it (Frame.Close);
	// it is closed once those in flight are answered, its slots wait in
	// parked meanwhile, and those it will not answer are sent again
	closing bool
}

// loopSlot is a request in flight, or the room for one: a client of a
// closed loop, one of an open loop's connections. It is carried on one
// connection.
type loopSlot struct {
	conn     int
	busy     bool
	seq      uint64    // the number of the request in flight
	intended time.Time // of the request in flight
	sent     time.Time
	answered time.Time // when the last answer arrived (closed loop: think time)
	first    time.Time // when the first message of a stream's answer arrived
	retry    bool      // its connection is going away unanswered: sent again on the next
	held     bool      // in flight but not sent: its connection is full (ErrFull)
}

type eventLoop struct {
	timeout time.Duration
	w       Wire
	tlsCfg  *tls.Config // the wire's (Secure), nil for plain TCP
	ep      int
	conns   []*loopConn
	slots   []loopSlot
	free    []int // the slots free
	parked  []int // the slots free of connections closing
	held    int   // the slots held back by full connections (ErrFull)
	rec     *recorder
	series  *series
	live    *Live
	stamped bool // the kernel stamps received bytes
	rbuf    []byte
	oob     []byte
	events  []unix.EpollEvent
	inUse   int
	start   time.Time
	end     time.Time   // the run's end (zero: none): nothing ends later and is recorded
	slack   int         // the thread's timer slack before the loop set it; -1: not set
	polled  time.Time   // the last poll for answers
	msg     unix.Msghdr // recvmsg's, over rbuf and oob
	iov     unix.Iovec
	refill  func()        // a closed loop's: send on the connection an answer freed
	cpu0    time.Duration // the thread's CPU time when the run began
	spun    time.Duration // time spent polling for answers that had not come
	waitAvg time.Duration // how long a closed loop's answers take to come, on average (see spins)
	// due is the first timeout among the requests in flight, or earlier
	// (one answered since): expire scans for timeouts from then on only.
	due time.Time
}

// loopSetup is what an event loop is set up with.
type loopSetup struct {
	conns   int
	slots   int           // requests in flight at most, slot k on connection k mod conns (0: conns)
	timeout time.Duration // of each request
	live    *Live
	tap     *Tap
	open    bool // an open loop (else closed)
	quantum time.Duration
	// length is from the run's start to its end, after which nothing is
	// recorded; zero or less: no end.
	length time.Duration
}

// newEventLoop locks the calling goroutine to its thread, dials the
// connections into a new epoll set and starts the run's clock, end,
// series and recorder (open: an open loop's three distributions; else a
// closed loop's think time). With a quantum it sets the thread's timer
// slack to 1 ns, so that the few wake-ups land on the quantum's grid (by
// default the kernel may end a sleep up to 50 µs late, which lets it spend
// less on the many wake-ups of a loop without one). close undoes it all.
func newEventLoop(ctx context.Context, w Wire, o loopSetup) (*eventLoop, error) {
	runtime.LockOSThread()
	slack := -1
	if o.quantum > 0 {
		if old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil {
			slack = old
			unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		}
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		restoreSlack(slack)
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("epoll: %w", err)
	}
	l := &eventLoop{timeout: o.timeout, w: w, ep: ep, stamped: true, rbuf: make([]byte, 64<<10), oob: make([]byte, 128),
		events: make([]unix.EpollEvent, 256), live: o.live, slack: slack, tlsCfg: tlsConfigOf(w)}
	for i := range o.conns {
		// A connection that cannot be opened now is dialed again by its
		// first request, which fails with the dial's status if it still
		// cannot (as the worker engine's lazy dialers count it).
		l.conns = append(l.conns, &loopConn{fd: -1})
		if err := l.dial(i); err != nil && !isTransport(err) {
			l.close()
			return nil, fmt.Errorf("dial connection %d of %d: %w", i+1, o.conns, err)
		}
	}
	slots := max(o.slots, o.conns)
	for k := range slots {
		l.slots = append(l.slots, loopSlot{conn: k % o.conns})
		l.free = append(l.free, slots-1-k) // taken from the end: slot 0 first
	}
	start, err := o.tap.begin(ctx)
	if err != nil {
		l.close()
		return nil, err
	}
	l.start, l.cpu0 = start, threadCPU()
	if o.length > 0 {
		l.end = l.start.Add(o.length)
	}
	l.series = newSeries(l.start)
	o.live.start(l.series)
	l.rec = newRecorder(o.open, l.series)
	if ps, ok := partsOf(w); ok {
		l.rec.split(ps, o.open)
	}
	if !o.open {
		l.rec.think = hdr.New()
	}
	o.tap.attach(l.start, o.open, l.series, l.rec)
	return l, nil
}

// restoreSlack gives the thread back the timer slack newEventLoop found
// (-1: it set none).
func restoreSlack(slack int) {
	if slack >= 0 {
		unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(slack), 0, 0, 0)
	}
}

// runLoop is Open.Run on the event loop.
func (o Open) runLoop(ctx context.Context, w Wire) (results.Sample, error) {
	setup := loopSetup{conns: o.Connections, timeout: o.Timeout, live: o.Live, tap: o.Tap, open: true, quantum: o.Quantum}
	if o.Duration > 0 {
		setup.length = o.Duration + o.Drain // in flight or waiting: Drain past the end, then cut
	}
	l, err := newEventLoop(ctx, w, setup)
	if err != nil {
		return results.Sample{}, err
	}
	defer l.close()
	start, hard := l.start, l.end
	tt := timetable{Schedule: o.Schedule, start: start, requests: o.Requests, duration: o.Duration}
	// The arrivals due and not yet sent are the range [first, next) of the
	// timetable: two counts, whatever the rate, so the loop's memory does
	// not grow with the arrivals it is offered or drops, and each turn
	// takes the arrivals due by a search (dueThrough), not one by one.
	var first, next, dropped int64
	for {
		if ctx.Err() != nil {
			break
		}
		now := time.Now()
		if !hard.IsZero() && !now.Before(hard) {
			break
		}
		next = tt.dueThrough(now, next)
		if over := next - first - int64(o.MaxWaiting); over > 0 {
			dropped += over // the oldest beyond MaxWaiting
			first += over
		}
		l.expire(now)
		for first < next && len(l.free) > 0 {
			due, _ := tt.due(first)
			l.send(due, uint64(first)) // arrival k is request k
			first++
		}
		nextDue, more := tt.due(next)
		if !more && first == next && l.inUse == 0 {
			break
		}
		// Wake at the next arrival (on a quantum's grid: every arrival due
		// by then goes in that wake-up, late by up to the quantum), the
		// earliest deadline in flight or the hard end.
		var until time.Time
		if more {
			until = nextDue
			if q := o.Quantum; q > 0 {
				until = start.Add((nextDue.Sub(start) + q - 1) / q * q)
			}
		}
		until = l.deadlines(until, hard)
		if l.stamped && first == next && more {
			// Nothing waits for a connection: sleep through the answers,
			// and read them only when the next arrival needs their
			// connection (or every maxWait, for the live counts): one
			// epoll_wait per round of the connections, not per arrival.
			sleepTo(ctx, until)
			if len(l.free) == 0 || time.Since(l.polled) >= maxWait {
				l.poll(0)
			}
			continue
		}
		l.poll(waitFor(now, until))
	}
	l.poll(0) // answers that came but were not read yet (see the lazy reads above)
	elapsed, busy := time.Since(start), l.busyNs()
	// Arrivals due but never sent (the run was cut short) were dropped;
	// requests still in flight when it was cut were sent: unfinished.
	// The arrivals offered are those due by the run's end (cancelled or
	// not), and those due but never taken were dropped too.
	dropped += next - first
	l.cutInFlight()
	scheduled := tt.dueNow(next)
	dropped += scheduled - next
	s := tt.sample(l.rec, elapsed, o.Unit, scheduled, dropped)
	s.EngineCPUNs = busy
	return s, nil
}

// runLoop is Closed.Run on the event loop: each connection sends its next
// request as soon as its answer is read. With a quantum, when no answer has
// arrived the loop sleeps to the next boundary of the quantum's grid
// instead of waking for the first answer, and reads what came meanwhile
// (a quantum without any answer: it waits for the next one); each answer's
// time is the kernel's stamp, so service time stays exact and the wait
// shows in think time (see Closed.Quantum).
func (c Closed) runLoop(ctx context.Context, w Wire) (results.Sample, error) {
	conns := c.Concurrency
	if sh, ok := w.(Shared); ok && sh.Connections() > 0 {
		conns = min(conns, sh.Connections())
	}
	l, err := newEventLoop(ctx, w, loopSetup{conns: conns, slots: c.Concurrency, timeout: c.Timeout, live: c.Live, tap: c.Tap, quantum: c.Quantum, length: c.Duration})
	if err != nil {
		return results.Sample{}, err
	}
	defer l.close()
	start, end := l.start, l.end
	var issued int64 // the requests sent so far, and so the next one's number
	// each answer read frees its connection for the next request at once,
	// not after every other answer of the poll has been read
	l.refill = func() {
		if !end.IsZero() && !time.Now().Before(end) {
			return // the run is over: a request now would only be cut off
		}
		if len(l.free) > 0 && (c.Requests <= 0 || issued < c.Requests) {
			l.send(time.Time{}, uint64(issued))
			issued++
		}
	}
	idle := false // a quantum went by without an answer
	for ctx.Err() == nil {
		now := time.Now()
		if !end.IsZero() && !now.Before(end) {
			break // requests in flight are cut off, not counted
		}
		l.expire(now)
		failed := false // a request could not be sent: the target is down
		for len(l.free) > 0 && (c.Requests <= 0 || issued < c.Requests) && !failed {
			failed = !l.send(time.Time{}, uint64(issued))
			issued++
		}
		if l.inUse == 0 {
			if !failed {
				break // every request was answered
			}
			// nothing in flight, the target refuses: try again in a
			// millisecond (each attempt a failed request), not at once
			until := now.Add(time.Millisecond)
			if !end.IsZero() && end.Before(until) {
				until = end
			}
			sleepTo(ctx, until)
			continue
		}
		until := l.deadlines(time.Time{}, end)
		if q := c.Quantum; q > 0 && l.stamped && !idle {
			if l.poll(0) == 0 {
				// nothing has arrived: sleep to the grid, not to the first
				// answer; if a whole quantum brings none, wait for it
				at := start.Add((now.Sub(start)/q + 1) * q)
				if until.IsZero() || at.Before(until) {
					until = at
				}
				sleepTo(ctx, until)
				idle = l.poll(0) == 0
			}
			continue
		}
		idle = false
		l.await(now, until)
	}
	l.cutInFlight()
	elapsed, busy := time.Since(start), l.busyNs()
	s := l.rec.sample(elapsed, elapsed, c.Unit, 0, 0)
	s.EngineCPUNs = busy
	return s, nil
}

// dial opens connection i: a blocking connect (loopback answers at once),
// then non-blocking, TCP_NODELAY, receive timestamps, in the epoll set.
func (l *eventLoop) dial(i int) error {
	c := l.conns[i]
	a := l.w.Addr()
	ip4 := a.IP.To4()
	if ip4 == nil {
		return errors.New("the event loop speaks IPv4 only")
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	sa := &unix.SockaddrInet4{Port: a.Port}
	copy(sa.Addr[:], ip4)
	// a blocking connect, bounded by the request timeout (a target whose
	// backlog is full drops the handshake: the kernel would retry for
	// minutes)
	tv := unix.NsecToTimeval(int64(max(l.timeout, time.Millisecond)))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	if err := unix.Connect(fd, sa); err != nil {
		if err == unix.EINPROGRESS { // the send timeout ran out
			err = unix.ETIMEDOUT
		}
		unix.Close(fd)
		return &net.OpError{Op: "dial", Net: "tcp", Addr: a, Err: err}
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if l.stamped {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPING_NEW,
			unix.SOF_TIMESTAMPING_RX_SOFTWARE|unix.SOF_TIMESTAMPING_SOFTWARE); err != nil {
			l.stamped = false // answers are then read as they come, stamped on reading
		}
	}
	if l.tlsCfg != nil {
		tc, raw, err := handshake(fd, l.tlsCfg, max(l.timeout, time.Millisecond))
		if err != nil {
			unix.Close(fd)
			return &net.OpError{Op: "tls", Net: "tcp", Addr: a, Err: err}
		}
		c.tls, c.raw = tc, raw
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(i)}); err != nil {
		unix.Close(fd)
		c.tls, c.raw = nil, nil
		return err
	}
	c.fd, c.buf, c.out = fd, c.buf[:0], c.out[:0]
	c.wc = l.w.NewConn()
	_, c.serial = c.wc.(*serial)
	if c.out = c.wc.Greeting(c.out); len(c.out) > 0 {
		err := c.write(c.out, time.Now().Add(l.timeout))
		c.out = c.out[:0]
		if err != nil {
			l.drop(i)
			return err
		}
	}
	return nil
}

func (l *eventLoop) close() {
	for _, c := range l.conns {
		if c.fd >= 0 {
			unix.Close(c.fd)
		}
	}
	unix.Close(l.ep)
	restoreSlack(l.slack)
	runtime.UnlockOSThread()
}

// send sends request number seq, one arrival, in a free slot; false if it
// could not (the request is recorded as failed and its slot is free
// again). On a connection whose answers are being read, the request waits
// in its out buffer for the read's end (one write for all it frees).
func (l *eventLoop) send(intended time.Time, seq uint64) bool {
	k := l.free[len(l.free)-1]
	l.free = l.free[:len(l.free)-1]
	s := &l.slots[k]
	c := l.conns[s.conn]
	sent := time.Now()
	if intended.IsZero() {
		intended = sent // a closed loop
		if !s.answered.IsZero() {
			l.rec.recordThink(sent.Sub(s.answered))
		}
	}
	s.intended, s.sent, s.seq, s.first = intended, sent, seq, time.Time{}
	if c.fd < 0 {
		if err := l.dial(s.conn); err != nil {
			l.finish(k, sent, Result{Status: TransportStatus(err)})
			return false
		}
	}
	out, err := c.wc.AppendRequest(c.out, seq, k)
	switch {
	case err == ErrFull:
		s.held = true // sent by unhold when a request on c ends
		l.held++
	case err == ErrSpent:
		s.retry = true // sent on the connection's next (spent, below)
	case err != nil:
		l.finish(k, time.Now(), Result{Status: StatusRequest})
		return false
	default:
		c.out = out
	}
	s.busy = true
	c.busy++
	l.inUse++
	if l.due.IsZero() {
		l.due = sent.Add(l.timeout) // the others in flight were sent earlier
	}
	if err == ErrSpent {
		l.spent(s.conn)
	}
	if !c.hold {
		l.flush(s.conn)
	}
	return s.busy
}

// flush sends what connection i has to send; if it cannot, the connection
// is closed and its requests in flight fail.
func (l *eventLoop) flush(i int) {
	c := l.conns[i]
	if len(c.out) == 0 {
		return
	}
	err := c.write(c.out, time.Now().Add(l.timeout))
	c.out = c.out[:0]
	if err != nil {
		l.broken(i, time.Now(), TransportStatus(err))
	}
}

// writeAll writes b, waiting for room in the socket's buffer if it must.
func writeAll(fd int, b []byte, deadline time.Time) error {
	for len(b) > 0 {
		n, err := rawWrite(fd, b)
		if n > 0 {
			b = b[n:]
		}
		switch {
		case err == unix.EAGAIN:
			ms := int(time.Until(deadline).Milliseconds())
			if ms <= 0 {
				return context.DeadlineExceeded
			}
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			unix.Poll(fds, min(ms, 100))
		case err == unix.EINTR:
		case err != nil:
			return &net.OpError{Op: "write", Net: "tcp", Err: err}
		}
	}
	return nil
}

// cutInFlight counts the requests still in flight as cut: the run is over.
func (l *eventLoop) cutInFlight() {
	for _, s := range l.slots {
		if s.busy {
			l.rec.cutReq(s.seq)
		}
	}
}

// finish records the request in slot k as ended at end with res (unless
// that is at or after the run's end: an answer read late, stamped after
// it, is cut off like one still in flight) and frees the slot.
func (l *eventLoop) finish(k int, end time.Time, res Result) {
	s := &l.slots[k]
	if !s.first.IsZero() && res.First == 0 {
		res.First = max(s.first.Sub(s.sent), 1) // a stream's first message
	}
	if !l.end.IsZero() && !end.Before(l.end) {
		l.rec.cutReq(s.seq)
	} else {
		l.rec.recordReq(s.seq, s.intended, s.sent, end, res)
		l.live.count(res)
	}
	if s.held {
		s.held = false
		l.held--
	}
	s.answered, s.retry = end, false
	c := l.conns[s.conn]
	if s.busy {
		s.busy = false
		c.busy--
		l.inUse--
	}
	if c.closing {
		l.parked = append(l.parked, k)
	} else {
		l.free = append(l.free, k)
	}
}

// closing marks connection i as taking no more requests (Frame.Close):
// the requests the protocol says it will not answer are to be sent again,
// and its free slots wait until it is closed (drained).
func (l *eventLoop) closing(i int) {
	c := l.conns[i]
	c.closing = true
	if u, ok := c.wc.(interface{ Unanswered() []int }); ok {
		for _, k := range u.Unanswered() {
			if k >= 0 && k < len(l.slots) && l.slots[k].busy && l.slots[k].conn == i {
				l.slots[k].retry = true
			}
		}
	}
	for k := range l.slots {
		if s := &l.slots[k]; s.conn == i && s.held {
			s.held, s.retry = false, true // never sent: the next connection's
			l.held--
		}
	}
	l.move(&l.free, &l.parked, i)
}

// spent retires connection i, which carries no more requests (ErrSpent):
// as if the server went away having answered every request sent, so the
// requests that found it spent go on a new connection once the others are
// answered (at once if none is in flight; at the read's end if it is
// being read).
func (l *eventLoop) spent(i int) {
	if l.conns[i].closing {
		return
	}
	l.closing(i)
	if !l.conns[i].hold {
		l.drained(i)
	}
}

// drained closes connection i, going away, once none of the requests it
// will answer is in flight: its slots are free again, and the requests it
// would not answer are sent again on a new connection.
func (l *eventLoop) drained(i int) {
	c := l.conns[i]
	if !c.closing {
		return
	}
	for _, s := range l.slots {
		if s.conn == i && s.busy && !s.retry {
			return
		}
	}
	c.closing = false
	if c.fd >= 0 {
		l.drop(i)
	}
	l.unpark(i)
	l.resend(i)
}

// resend sends again, on a new connection i, the requests its last one
// went away without answering; past the run's end it dials nothing, and
// they are cut off with the others in flight.
func (l *eventLoop) resend(i int) {
	c := l.conns[i]
	now := time.Now()
	if !l.end.IsZero() && !now.Before(l.end) {
		return
	}
	for k := range l.slots {
		s := &l.slots[k]
		if s.conn != i || !s.retry {
			continue
		}
		s.retry, s.first = false, time.Time{}
		if c.fd < 0 {
			if err := l.dial(i); err != nil {
				l.finish(k, now, Result{Status: TransportStatus(err)})
				continue
			}
		}
		out, err := c.wc.AppendRequest(c.out, s.seq, k)
		switch {
		case err == ErrFull:
			s.held = true
			l.held++
		case err != nil:
			l.finish(k, now, Result{Status: StatusRequest})
		default:
			c.out = out
		}
	}
	if c.fd >= 0 && !c.hold {
		l.flush(i)
	}
}

// unhold sends the requests held back on connection i (ErrFull) that it
// now takes, after one in flight on it ended.
func (l *eventLoop) unhold(i int) {
	c := l.conns[i]
	for k := range l.slots {
		s := &l.slots[k]
		if s.conn != i || !s.held || c.fd < 0 {
			continue
		}
		out, err := c.wc.AppendRequest(c.out, s.seq, k)
		switch {
		case err == ErrFull:
			return
		case err == ErrSpent:
			s.held, s.retry = false, true
			l.held--
			l.spent(i)
			return
		case err != nil:
			l.finish(k, time.Now(), Result{Status: StatusRequest})
		default:
			s.held, c.out = false, out
			l.held--
		}
	}
}

// unpark frees the slots of connection i that waited for it to close.
func (l *eventLoop) unpark(i int) { l.move(&l.parked, &l.free, i) }

// move moves the slots of connection i from one list to another.
func (l *eventLoop) move(from, to *[]int, i int) {
	kept := (*from)[:0]
	for _, k := range *from {
		if l.slots[k].conn == i {
			*to = append(*to, k)
		} else {
			kept = append(kept, k)
		}
	}
	*from = kept
}

// broken closes connection i: the requests in flight on it end at end
// with status (its next request dials again), but those a server going
// away said it would not answer, which are sent again.
func (l *eventLoop) broken(i int, end time.Time, status string) {
	l.conns[i].closing = false
	l.unpark(i)
	for k := range l.slots {
		if s := &l.slots[k]; s.busy && s.conn == i && !s.retry {
			l.finish(k, end, Result{Status: status})
		}
	}
	if l.conns[i].fd >= 0 {
		l.drop(i)
	}
	l.resend(i) // those the server said it would not answer, going away
}

// timedOut ends the request in slot k, past its timeout: the protocol
// abandons it (HTTP/2: the stream is reset) or its connection is closed.
func (l *eventLoop) timedOut(k int, now time.Time) {
	i := l.slots[k].conn
	c := l.conns[i]
	out, ok := c.wc.Cancel(c.out, k)
	c.out = out
	l.finish(k, now, Result{Status: "timeout"})
	switch {
	case !ok:
		l.broken(i, now, "timeout")
	case c.closing:
		l.drained(i)
	default:
		if l.held > 0 {
			l.unhold(i) // the stream reset made room
		}
		if !c.hold {
			l.flush(i)
		}
	}
}

// deadlines is the earliest of t, end and the first timeout among the
// requests in flight, or an earlier time (l.due; a zero time is none).
func (l *eventLoop) deadlines(t, end time.Time) time.Time {
	for _, u := range [2]time.Time{end, l.due} {
		if !u.IsZero() && (t.IsZero() || u.Before(t)) {
			t = u
		}
	}
	return t
}

// waitFor is how long a poll at now may block to wake by until (zero:
// no bound), at most maxWait so that cancellation is seen.
func waitFor(now, until time.Time) time.Duration {
	if until.IsZero() {
		return maxWait
	}
	return max(0, min(maxWait, until.Sub(now)))
}

// sleepTo sleeps until t without reading answers (the kernel stamps them),
// in slices of at most maxWait so that cancellation is seen.
func sleepTo(ctx context.Context, t time.Time) {
	for ctx.Err() == nil {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		rawclock.SleepUntil(rawclock.Now() + min(d, maxWait))
	}
}

// expire ends the requests in flight past their timeout, after reading
// the answers that came (an answer the loop has not read yet, stamped in
// time, is not a timeout).
func (l *eventLoop) expire(now time.Time) {
	if l.due.IsZero() || now.Before(l.due) {
		return // no request in flight is due yet: none is scanned for
	}
	for _, s := range l.slots {
		if s.busy && now.Sub(s.sent) >= l.timeout {
			l.read(s.conn, 0) // an answer that came in time is not a timeout
		}
	}
	l.due = time.Time{}
	for k := range l.slots {
		s := &l.slots[k]
		if !s.busy {
			continue
		}
		if due := s.sent.Add(l.timeout); !now.Before(due) {
			l.timedOut(k, now)
		} else if l.due.IsZero() || due.Before(l.due) {
			l.due = due
		}
	}
}

// await reads the next answers of a closed loop: it polls for them
// without blocking for up to spinMax from now when that is likely to pay
// (spins), then sleeps until they come or until, and keeps the average
// wait. A thread blocked in epoll_wait is woken by the answer's sender,
// inside the sender's write (on loopback: the server's core pays for the
// generator's wake-up); one that polls is not, but a poll that finds
// nothing is the generator's CPU spent.
func (l *eventLoop) await(now, until time.Time) {
	if l.spins() {
		n, began, cpu := 0, time.Now(), threadCPU()
		for n == 0 && (l.polled.Before(began) || l.polled.Sub(now) < spinMax) {
			n = l.poll(0)
		}
		// waiting, not work: left out of busyNs (the thread's own CPU
		// time, not the wall clock's: a busy machine preempts the polls)
		l.spun += threadCPU() - cpu
		if n > 0 {
			l.waited(l.polled.Sub(now))
			return
		}
	}
	if l.poll(waitFor(now, until)) > 0 {
		l.waited(l.polled.Sub(now))
	}
}

// spins reports whether await polls before it sleeps: with few requests
// in flight (spinInFlight; with more, the server has the others to serve
// while the generator wakes, and a poll costs the generator's CPU without
// adding answers) and answers that come, on average, within twice spinMax
// (a slow server's would cost a poll each and still need a sleep).
func (l *eventLoop) spins() bool {
	return l.inUse <= spinInFlight && l.waitAvg <= 2*spinMax
}

// waited adds how long the latest answers took to come to the average
// wait (an exponentially weighted one: the newest an eighth).
func (l *eventLoop) waited(d time.Duration) { l.waitAvg += (d - l.waitAvg) / 8 }

// busyNs is the loop thread's CPU time so far, less what it spent polling
// for answers that had not come: the generator's work, which a run that
// keeps the loop busy all the time is limited by.
func (l *eventLoop) busyNs() int64 {
	return max(0, int64(threadCPU()-l.cpu0-l.spun))
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// poll waits up to wait for answers (0: only what is there) and reads
// them; it returns the number of connections that had something.
func (l *eventLoop) poll(wait time.Duration) int {
	n := epollWait(l.ep, l.events, wait)
	l.polled = time.Now()
	for _, ev := range l.events[:n] {
		l.read(int(ev.Fd), ev.Events)
	}
	return n
}

// read reads what connection i has, records the answers it completes and
// sends what they call for (replies, a closed loop's next requests) in
// one write.
func (l *eventLoop) read(i int, events uint32) {
	c := l.conns[i]
	if c.fd < 0 {
		return
	}
	ended := "" // the connection ended, after what came before is framed
	for ended == "" {
		n, oobn, err := l.recvmsg(c.fd)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			break
		}
		if err != nil || n == 0 {
			ended = "eof"
			if err != nil {
				ended = TransportStatus(&net.OpError{Op: "read", Net: "tcp", Err: err})
			}
			break
		}
		c.rx = l.stamp(oobn)
		if c.tls != nil {
			c.raw.add(l.rbuf[:n])
		} else {
			c.buf = append(c.buf, l.rbuf[:n]...)
		}
		if n < len(l.rbuf) {
			break
		}
	}
	if c.tls != nil {
		if err := c.decrypt(); err != nil && ended == "" {
			ended = TransportStatus(err) // a close_notify: io.EOF with the last records
		}
	}
	c.hold = true
	status := l.frames(i)
	c.hold = false
	if status != "" {
		c.out = c.out[:0]
		l.broken(i, c.rx, status)
		return
	}
	if ended != "" {
		c.out = c.out[:0]
		l.broken(i, time.Now(), ended)
		return
	}
	l.flush(i)
	if c.closing {
		l.drained(i)
	}
}

// frames frames what connection i has read and records the answers; a
// status says the connection is done (the requests in flight on it end
// with it).
func (l *eventLoop) frames(i int) (status string) {
	c := l.conns[i]
	off := 0
	defer func() { c.buf = c.buf[:copy(c.buf, c.buf[off:])] }()
	for off < len(c.buf) {
		f, out, err := c.wc.Next(c.buf[off:], c.out)
		c.out = out
		if err != nil {
			return "protocol"
		}
		if f.N == 0 {
			return ""
		}
		off += f.N
		if f.Slot >= 0 {
			if f.Slot >= len(l.slots) || !l.slots[f.Slot].busy || l.slots[f.Slot].conn != i {
				return "protocol" // an answer nobody asked for: the connection is no use
			}
			if f.Progress {
				if s := &l.slots[f.Slot]; s.first.IsZero() {
					s.first = c.rx
				}
				continue
			}
			res := f.Result
			if c.rx.Sub(l.slots[f.Slot].sent) >= l.timeout { // came, but after its timeout
				res = Result{Status: "timeout"}
				f.Close = f.Close || c.serial
			}
			l.finish(f.Slot, c.rx, res)
			if l.held > 0 {
				l.unhold(i)
			}
		}
		if f.Close {
			l.closing(i)
			if c.serial {
				return "" // the server closes it: nothing after the answer is read
			}
		}
		if f.Slot >= 0 && l.refill != nil && !c.closing && (!c.serial || off == len(c.buf)) {
			l.refill() // the slot is the last free one
		}
	}
	return ""
}

// drop closes a connection (the server closed it, or it is no use).
func (l *eventLoop) drop(i int) {
	c := l.conns[i]
	unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, c.fd, nil)
	unix.Close(c.fd)
	c.fd, c.buf, c.out, c.tls, c.raw = -1, c.buf[:0], c.out[:0], nil, nil
}

// stamp is the kernel's receive time from a recvmsg's control data, or
// now. It walks the control messages in place (no allocation per answer).
func (l *eventLoop) stamp(oobn int) time.Time {
	b := l.oob[:oobn]
	for len(b) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		if h.Len < unix.SizeofCmsghdr || int(h.Len) > len(b) {
			break
		}
		data := b[unix.SizeofCmsghdr:h.Len]
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPING_NEW && len(data) >= 16 {
			// struct scm_timestamping64: the first timespec64 is the
			// software stamp
			sec := *(*int64)(unsafe.Pointer(&data[0]))
			nsec := *(*int64)(unsafe.Pointer(&data[8]))
			if sec != 0 || nsec != 0 {
				return time.Unix(sec, nsec)
			}
		}
		next := unix.CmsgSpace(int(h.Len) - unix.SizeofCmsghdr)
		if next > len(b) {
			break
		}
		b = b[next:]
	}
	return time.Now()
}

// sysEpollPwait2 is epoll_pwait2(2) (Linux 5.11): a timeout in
// nanoseconds, where epoll_wait's is in milliseconds.
const sysEpollPwait2 = 441

// epollWait waits up to d for events, as a raw system call (see above);
// EINTR (the runtime's preemption signal) ends the wait early.
func epollWait(ep int, events []unix.EpollEvent, d time.Duration) int {
	ts := unix.NsecToTimespec(int64(d))
	n, _, e := unix.RawSyscall6(sysEpollPwait2, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
	if e == unix.ENOSYS {
		ms := int((d + time.Millisecond - 1) / time.Millisecond)
		n, _, e = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)),
			uintptr(ms), 0, 0)
	}
	if e != 0 {
		return 0
	}
	return int(n)
}

// isTransport says a dial failed on the way to the target (refused, reset,
// unreachable), not for want of a socket: a request can try it again.
func isTransport(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}

// The loop's reads and writes are raw system calls on non-blocking sockets
// (they never block), so the runtime does not hand the thread's P around
// for each (see above).

// recvmsg reads what fd has into rbuf, its control data (the kernel's
// receive stamp) into oob, without allocating.
func (l *eventLoop) recvmsg(fd int) (n, oobn int, err error) {
	l.iov.Base = &l.rbuf[0]
	l.iov.SetLen(len(l.rbuf))
	l.msg.Iov = &l.iov
	l.msg.SetIovlen(1)
	l.msg.Control = &l.oob[0]
	l.msg.SetControllen(len(l.oob))
	r, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&l.msg)), unix.MSG_DONTWAIT)
	if e != 0 {
		return 0, 0, e
	}
	return int(r), int(l.msg.Controllen), nil
}

// rawWrite is write(2) as a raw system call.
func rawWrite(fd int, b []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return int(r), e
	}
	return int(r), nil
}
