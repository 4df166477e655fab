// Package link puts network conditions on a TCP path without netem: a proxy
// in tandem's own process, in user space, that listens on one address,
// forwards every connection to an upstream address, and makes each
// direction's bytes wait a one-way delay (with jitter), stall for lost
// segments, and squeeze through a bandwidth cap, all changeable while
// connections are open (Set), and that can cut or partition the path and
// restore it. It runs unprivileged on Linux and macOS.
//
// A Link keeps every stream whole and in order: it never drops, duplicates
// or reorders bytes, and it adds a direction's delay once per chunk,
// counted from when the chunk was read, so a request and its answer cross
// it with one delay each. docs/network.md says what each condition means,
// how closely it matches a real network, and why this package is not
// toxiproxy.
package link

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/tandem-bench/tandem/link/veth"
)

// Options say where a Link listens, where it forwards, and the conditions
// it starts with.
type Options struct {
	// Listen is the address to listen on ("127.0.0.1:0": a free port).
	Listen string
	// Upstream is the address every accepted connection is forwarded to.
	Upstream string
	// Up is what happens to bytes from the client to the upstream; Down,
	// to bytes from the upstream back to the client.
	Up, Down Conditions
	// Seed seeds the jitter and loss draws (0: a random seed; Link.Seed
	// says which). A connection's draws depend only on the seed and the
	// connection's number.
	Seed uint64
	// DialTimeout bounds dialling the upstream (0: 5 s).
	DialTimeout time.Duration
	// Kernel sends each connection to the upstream through the kernel's
	// path (package veth): loss and bandwidth are the kernel's, on real
	// packets, and the rest of the conditions stay the link's. It needs
	// what veth.Probe checks.
	Kernel bool
}

// State is whether a Link passes bytes.
type State uint8

const (
	// Passing forwards connections and their bytes.
	Passing State = iota
	// Disconnected resets every connection: those open at Cut, and each
	// new one as soon as it is accepted.
	Disconnected
	// Partitioned holds every byte and every new connection: nothing
	// crosses, nothing is reset, until Restore (or Cut, or Close).
	Partitioned
)

// String names the state.
func (s State) String() string {
	switch s {
	case Passing:
		return "passing"
	case Disconnected:
		return "disconnected"
	case Partitioned:
		return "partitioned"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Stats are a Link's counters since New.
type Stats struct {
	// Accepted counts the connections accepted on the listener.
	Accepted int64
	// Open counts the connections being forwarded now.
	Open int64
	// Refused counts connections reset as soon as they were accepted,
	// because the link was cut.
	Refused int64
	// DialErrors counts connections reset because the upstream could not
	// be dialled.
	DialErrors int64
	// Resets counts the open connections the link reset: by Cut,
	// ResetAfter or ResetAfterBytes (not a reset one end sent, nor Close).
	Resets int64
	// Up and Down count each direction's bytes and losses.
	Up, Down Flow
}

// Flow counts one direction of a Link.
type Flow struct {
	// Read counts the bytes read from the sending end.
	Read int64
	// Bytes counts the bytes written to the receiving end.
	Bytes int64
	// Lost counts lost segments: each is one retransmission, and each
	// held its stream for a retransmission timeout. Through the kernel's
	// path it counts the TCP packets the kernel dropped.
	Lost int64
	// Packets counts the TCP packets that reached the far end of the
	// kernel's path, dropped ones included (0 without it), and Overflow
	// those its rate cap dropped because its queue was full.
	Packets, Overflow int64
	// Pieces counts the pieces of the stream written to the receiving
	// end (a chunk read, cut by the bucket and by lost segments), HeldNs
	// the time they spent in the link in all, from read to written, and
	// MaxHeldNs the longest: the one-way time the link really added,
	// waits for the machine's scheduler included.
	Pieces, HeldNs, MaxHeldNs int64
}

// MeanHeld is the pieces' mean time in the link (0 with none).
func (f Flow) MeanHeld() time.Duration {
	if f.Pieces == 0 {
		return 0
	}
	return time.Duration(f.HeldNs / f.Pieces)
}

// Link is one user-space network path: a listener, an upstream, and the
// conditions of each direction. Its methods are safe for concurrent use.
type Link struct {
	ln       net.Listener
	upstream string
	dialer   net.Dialer
	seed     uint64
	ctx      context.Context // ends at Close; every connection's derives from it
	cancel   context.CancelFunc
	stop     func() bool // stops closing the link when New's ctx ends
	up, down direction
	kernel   *veth.Path // nil: the link's own loss and bandwidth
	bufs     sync.Pool  // *buffer of bufSize bytes
	nextID   atomic.Uint64
	gate     atomic.Pointer[chan struct{}] // closed unless partitioned
	wg       sync.WaitGroup                // the accept loop and each connection

	accepted, refused, dialErrors, resets, open atomic.Int64

	mu     sync.Mutex // guards what follows, and serialises Set
	state  State
	conns  map[*conn]struct{}
	closed bool
}

// direction is one direction's conditions and counters, shared by every
// connection of the link.
type direction struct {
	// given is what New or Set gave; cond what the link itself does (the
	// same, less loss and bandwidth when the kernel does those).
	given, cond       atomic.Pointer[Conditions]
	lim               *rate.Limiter
	read, bytes, lost atomic.Int64
	pieces, heldNs    atomic.Int64
	maxHeldNs         atomic.Int64
}

// held counts a piece written after d in the link.
func (d *direction) held(t time.Duration) {
	d.pieces.Add(1)
	d.heldNs.Add(int64(t))
	for m := d.maxHeldNs.Load(); int64(t) > m && !d.maxHeldNs.CompareAndSwap(m, int64(t)); m = d.maxHeldNs.Load() {
	}
}

// set makes c the direction's conditions for every chunk read from now on;
// with kernel, its loss and bandwidth are left to the kernel's path.
func (d *direction) set(c Conditions, kernel bool) {
	given := c
	d.given.Store(&given)
	if kernel {
		c.Loss, c.Bandwidth, c.Burst = 0, 0, 0
	}
	d.cond.Store(&c)
	if c.Bandwidth == 0 {
		d.lim.SetLimit(rate.Inf)
		return
	}
	d.lim.SetBurst(c.burst())
	d.lim.SetLimit(rate.Limit(c.Bandwidth))
}

func (d *direction) flow() Flow {
	return Flow{Read: d.read.Load(), Bytes: d.bytes.Load(), Lost: d.lost.Load(),
		Pieces: d.pieces.Load(), HeldNs: d.heldNs.Load(), MaxHeldNs: d.maxHeldNs.Load()}
}

// New listens on o.Listen and forwards each connection to o.Upstream under
// o.Up and o.Down, until Close or until ctx ends.
func New(ctx context.Context, o Options) (*Link, error) {
	if err := o.Up.Validate(); err != nil {
		return nil, fmt.Errorf("link: up: %w", err)
	}
	if err := o.Down.Validate(); err != nil {
		return nil, fmt.Errorf("link: down: %w", err)
	}
	if o.Upstream == "" {
		return nil, errors.New("link: no upstream address")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", o.Listen)
	if err != nil {
		return nil, fmt.Errorf("link: listen: %w", err)
	}
	l := &Link{
		ln:       ln,
		upstream: o.Upstream,
		dialer:   net.Dialer{Timeout: o.DialTimeout},
		seed:     o.Seed,
		conns:    map[*conn]struct{}{},
		bufs:     sync.Pool{New: func() any { return &buffer{b: make([]byte, bufSize)} }},
	}
	if l.dialer.Timeout == 0 {
		l.dialer.Timeout = 5 * time.Second
	}
	if o.Kernel {
		if l.kernel, err = veth.New(ctx, veth.Options{Upstream: o.Upstream, Up: shape(o.Up), Down: shape(o.Down),
			DialTimeout: l.dialer.Timeout}); err != nil {
			ln.Close()
			return nil, fmt.Errorf("link: the kernel's path: %w", err)
		}
	}
	if l.seed == 0 {
		l.seed = rand.Uint64() | 1
	}
	for _, d := range []*direction{&l.up, &l.down} {
		d.lim = rate.NewLimiter(rate.Inf, 0)
	}
	l.up.set(o.Up, l.kernel != nil)
	l.down.set(o.Down, l.kernel != nil)
	open := make(chan struct{})
	close(open)
	l.gate.Store(&open)
	l.ctx, l.cancel = context.WithCancel(context.WithoutCancel(ctx))
	l.stop = context.AfterFunc(ctx, func() { l.Close() })
	l.wg.Add(1)
	go l.serve()
	return l, nil
}

// Addr is the address the link listens on, to be dialled instead of the
// upstream.
func (l *Link) Addr() string { return l.ln.Addr().String() }

// Seed is the seed of the link's jitter and loss draws.
func (l *Link) Seed() uint64 { return l.seed }

// Set changes both directions' conditions for every chunk read from now on,
// on open connections too; a chunk already read keeps the delay it drew.
// ResetAfter applies to connections accepted from now on.
func (l *Link) Set(up, down Conditions) error {
	if err := up.Validate(); err != nil {
		return fmt.Errorf("link: up: %w", err)
	}
	if err := down.Validate(); err != nil {
		return fmt.Errorf("link: down: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kernel != nil && !l.closed {
		if err := l.kernel.Set(shape(up), shape(down)); err != nil {
			return fmt.Errorf("link: %w", err)
		}
	}
	l.up.set(up, l.kernel != nil)
	l.down.set(down, l.kernel != nil)
	return nil
}

// shape is the part of c the kernel's path does.
func shape(c Conditions) veth.Shape {
	return veth.Shape{Loss: c.Loss, Bandwidth: c.Bandwidth, Burst: c.Burst}
}

// Kernel reports whether the link's loss and bandwidth are the kernel's.
func (l *Link) Kernel() bool { return l.kernel != nil }

// Conditions are the conditions Set (or New) gave last.
func (l *Link) Conditions() (up, down Conditions) {
	return *l.up.given.Load(), *l.down.given.Load()
}

// State is whether the link passes, is cut, or is partitioned.
func (l *Link) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state
}

// Cut disconnects the path: every open connection is reset (RST to the
// client and to the upstream; bytes not yet delivered are dropped), and
// until Restore each new connection is reset as soon as it is accepted.
// The listener stays open, so the address stays the link's.
func (l *Link) Cut() {
	l.mu.Lock()
	l.state = Disconnected
	l.openGate()
	conns := l.snapshot()
	l.mu.Unlock()
	for _, c := range conns {
		c.reset(true)
	}
}

// Partition holds the path: no byte crosses in either direction and new
// connections are accepted but not forwarded, yet nothing is reset. At
// Restore the held bytes are delivered in order and the held connections
// dialled, as TCP would once a partition heals before it gives up.
func (l *Link) Partition() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.state == Partitioned {
		return
	}
	l.state = Partitioned
	held := make(chan struct{})
	l.gate.Store(&held)
}

// Restore ends a Cut or a Partition: the link passes again.
func (l *Link) Restore() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.state = Passing
	l.openGate()
}

// openGate lets held bytes and connections go; l.mu is held.
func (l *Link) openGate() {
	g := *l.gate.Load()
	select {
	case <-g:
	default:
		close(g)
	}
}

// snapshot lists the open connections; l.mu is held.
func (l *Link) snapshot() []*conn {
	conns := make([]*conn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	return conns
}

// Stats are the link's counters now.
func (l *Link) Stats() Stats {
	st := Stats{
		Accepted:   l.accepted.Load(),
		Open:       l.open.Load(),
		Refused:    l.refused.Load(),
		DialErrors: l.dialErrors.Load(),
		Resets:     l.resets.Load(),
		Up:         l.up.flow(),
		Down:       l.down.flow(),
	}
	if l.kernel != nil {
		k := l.kernel.Stats()
		st.Up.Lost, st.Up.Packets, st.Up.Overflow = k.Up.Dropped, k.Up.Packets, k.Up.Overflow
		st.Down.Lost, st.Down.Packets, st.Down.Overflow = k.Down.Dropped, k.Down.Packets, k.Down.Overflow
		st.DialErrors += k.DialErrors
	}
	return st
}

// Close stops listening, resets every open or held connection, and returns
// once every goroutine of the link has ended.
func (l *Link) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	conns := l.snapshot()
	l.mu.Unlock()
	l.stop()
	err := l.ln.Close()
	l.cancel()
	for _, c := range conns {
		c.reset(false)
	}
	l.wg.Wait()
	if l.kernel != nil {
		err = errors.Join(err, l.kernel.Close())
	}
	if err != nil {
		return fmt.Errorf("link: close: %w", err)
	}
	return nil
}

// await waits until the link is not partitioned; false if ctx ended first.
func (l *Link) await(ctx context.Context) bool {
	select {
	case <-*l.gate.Load():
		return true
	case <-ctx.Done():
		return false
	}
}

// serve accepts connections until the listener is closed.
func (l *Link) serve() {
	defer l.wg.Done()
	backoff := time.NewTimer(0)
	defer backoff.Stop()
	wait := time.Duration(0)
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || l.ctx.Err() != nil {
				return
			}
			// Out of descriptors and the like: try again later, as
			// net/http does.
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			backoff.Reset(wait)
			select {
			case <-backoff.C:
			case <-l.ctx.Done():
				return
			}
			continue
		}
		wait = 0
		l.accepted.Add(1)
		l.wg.Add(1)
		go l.handle(c.(*net.TCPConn))
	}
}

// handle forwards one accepted connection, once the link lets it through,
// and returns when both directions have ended.
func (l *Link) handle(client *net.TCPConn) {
	defer l.wg.Done()
	if !l.await(l.ctx) {
		abort(client)
		return
	}
	if l.State() == Disconnected {
		l.refused.Add(1)
		abort(client)
		return
	}
	upstream, err := l.dial()
	if err != nil {
		if l.ctx.Err() == nil {
			l.dialErrors.Add(1)
		}
		abort(client)
		return
	}
	c := l.register(client, upstream.(*net.TCPConn))
	if c == nil {
		abort(client)
		abort(upstream.(*net.TCPConn))
		return
	}
	c.run()
	l.unregister(c)
}

// dial connects to the upstream: straight, or through the kernel's path.
func (l *Link) dial() (net.Conn, error) {
	if l.kernel == nil {
		return l.dialer.DialContext(l.ctx, "tcp", l.upstream)
	}
	ctx, cancel := context.WithTimeout(l.ctx, l.dialer.Timeout)
	defer cancel()
	return l.kernel.Dial(ctx)
}

// register makes a forwarded connection of a client and its upstream
// connection; nil if the link was cut or closed meanwhile.
func (l *Link) register(client, upstream *net.TCPConn) *conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return nil
	case l.state == Disconnected:
		l.refused.Add(1)
		return nil
	}
	c := newConn(l, client, upstream)
	l.conns[c] = struct{}{}
	l.open.Add(1)
	return c
}

func (l *Link) unregister(c *conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	l.open.Add(-1)
}

// abort resets a connection that is not forwarded.
func abort(c *net.TCPConn) {
	_ = c.SetLinger(0)
	_ = c.Close()
}
