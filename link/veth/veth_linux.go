//go:build linux

package veth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The pair's ends: near is in the namespace where connections are dialled,
// far in the one where the relay listens. Each Path has namespaces of its
// own, so every Path uses the same names and addresses.
const (
	nearName = "tandem0"
	farName  = "tandem1"
	nearAddr = "10.250.0.1/30"
	farIP    = "10.250.0.2"
	farAddr  = farIP + "/30"
)

// A full frame on the pair (Ethernet header and 1,500-byte MTU) and the
// stream bytes it carries (less IPv4, TCP and its timestamps option).
const (
	frameBytes   = 1514
	segmentBytes = 1448
)

// lossModulus is the numgen rule's range: loss is set to a millionth.
const lossModulus = 1_000_000

// end is one namespace of a Path and what tandem set in it.
type end struct {
	ns    netns.NsHandle
	nl    *netlink.Handle
	nft   *nftables.Conn
	link  netlink.Link
	table *nftables.Table
	chain *nftables.Chain
	// base counts what rules and qdiscs since replaced or removed saw.
	base Flow
}

// Path is a TCP path through a veth pair between two namespaces of its own
// to an upstream address. Its methods are safe for concurrent use.
type Path struct {
	o        Options
	ln       net.Listener
	relayCtx context.Context
	stop     context.CancelFunc
	wg       sync.WaitGroup
	dialErrs atomic.Int64

	// nsMu is held for reading while a thread is in one of the
	// namespaces, and for writing while their handles are closed.
	nsMu sync.RWMutex
	near end // dials; its veth's way out is up, its way in down
	far  end // relays; its way out is down, its way in up

	mu     sync.Mutex // guards what follows and serialises Set
	up     Shape
	down   Shape
	peers  map[string]relayed // by the dialling socket's address
	closed bool
}

// relayed is one connection the relay forwards: its end of the pair and
// its connection to the upstream.
type relayed struct{ pair, upstream net.Conn }

// Probe makes a Path with a cap and a loss rule and closes it: nil if
// this process may use the kernel's path here, else why not.
func Probe() error {
	sh := Shape{Loss: 0.01, Bandwidth: 1 << 20}
	p, err := New(context.Background(), Options{Upstream: "127.0.0.1:1", Up: sh, Down: sh})
	if err != nil {
		return err
	}
	return p.Close()
}

// New makes the namespaces, the pair, the up and down shapes and the
// relay, which forwards every connection dialled through the Path to the
// upstream.
func New(ctx context.Context, o Options) (p *Path, err error) {
	if err := o.Up.Validate(); err != nil {
		return nil, fmt.Errorf("veth: up: %w", err)
	}
	if err := o.Down.Validate(); err != nil {
		return nil, fmt.Errorf("veth: down: %w", err)
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 5 * time.Second
	}
	p = &Path{o: o, peers: map[string]relayed{}}
	p.near.ns, p.far.ns = netns.None(), netns.None()
	defer func() {
		if err != nil {
			p.teardown()
		}
	}()
	for _, e := range []*end{&p.near, &p.far} {
		if e.ns, err = newNamespace(); err != nil {
			return nil, fmt.Errorf("veth: a network namespace: %w", err)
		}
		if e.nl, err = netlink.NewHandleAt(e.ns, unix.NETLINK_ROUTE); err != nil {
			return nil, fmt.Errorf("veth: netlink in a namespace: %w", err)
		}
		if e.nft, err = nftables.New(nftables.WithNetNSFd(int(e.ns))); err != nil {
			return nil, fmt.Errorf("veth: nftables in a namespace: %w", err)
		}
	}
	// One segment per packet (no GSO super-packets), so that a drop
	// loses one segment, as on a wire.
	pair := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: nearName, MTU: 1500, GSOMaxSegs: 1},
		PeerName: farName, PeerNamespace: netlink.NsFd(int(p.far.ns))}
	if err := p.near.nl.LinkAdd(pair); err != nil {
		return nil, fmt.Errorf("veth: a veth pair: %w", err)
	}
	for _, s := range []struct {
		e          *end
		name, addr string
	}{{&p.near, nearName, nearAddr}, {&p.far, farName, farAddr}} {
		if err := s.e.setUp(s.name, s.addr); err != nil {
			return nil, err
		}
	}
	if err := p.apply(o.Up, o.Down); err != nil {
		return nil, err
	}
	if p.ln, err = p.listen(ctx); err != nil {
		return nil, fmt.Errorf("veth: the relay's listener: %w", err)
	}
	p.relayCtx, p.stop = context.WithCancel(context.WithoutCancel(ctx))
	p.wg.Add(1)
	go p.relay()
	return p, nil
}

// setUp addresses the end's veth and brings it up, and makes its table of
// arrival rules.
func (e *end) setUp(name, addr string) error {
	lk, err := e.nl.LinkByName(name)
	if err != nil {
		return fmt.Errorf("veth: %s: %w", name, err)
	}
	e.link = lk
	if lk.Attrs().GSOMaxSegs != 1 {
		if err := e.nl.LinkSetGSOMaxSegs(lk, 1); err != nil {
			return fmt.Errorf("veth: %s: one segment per packet: %w", name, err)
		}
	}
	a, err := netlink.ParseAddr(addr)
	if err != nil {
		return err
	}
	if err := e.nl.AddrAdd(lk, a); err != nil {
		return fmt.Errorf("veth: %s: address %s: %w", name, addr, err)
	}
	if err := e.nl.LinkSetUp(lk); err != nil {
		return fmt.Errorf("veth: %s: up: %w", name, err)
	}
	e.table = e.nft.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: "tandem"})
	e.chain = e.nft.AddChain(&nftables.Chain{Name: "arrivals", Table: e.table, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityRaw})
	if err := e.nft.Flush(); err != nil {
		return fmt.Errorf("veth: nftables table: %w", err)
	}
	return nil
}

// onThread runs f on a goroutine locked to a thread of its own and
// returns f's error. If f leaves the thread in another namespace than the
// one it started in (keep false), the goroutine ends still locked, and Go
// then ends the thread rather than run other goroutines on it.
func onThread(f func() (keep bool, err error)) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		keep, err := f()
		if keep {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}

// newNamespace makes a network namespace and returns a handle to it.
func newNamespace() (ns netns.NsHandle, err error) {
	ns = netns.None()
	err = onThread(func() (bool, error) {
		orig, err := netns.Get()
		if err != nil {
			return true, err
		}
		defer orig.Close()
		if ns, err = netns.New(); err != nil {
			return false, err
		}
		if err := netns.Set(orig); err != nil {
			return false, err
		}
		return true, nil
	})
	if err != nil && ns.IsOpen() {
		ns.Close()
		ns = netns.None()
	}
	return ns, err
}

// in runs f on a thread in namespace ns (a socket f makes is ns's), with
// the namespaces kept open meanwhile; it fails once the Path is closed.
func (p *Path) in(e *end, f func() error) error {
	p.nsMu.RLock()
	defer p.nsMu.RUnlock()
	if !e.ns.IsOpen() {
		return errors.New("veth: closed")
	}
	return onThread(func() (bool, error) {
		orig, err := netns.Get()
		if err != nil {
			return true, err
		}
		defer orig.Close()
		if err := netns.Set(e.ns); err != nil {
			return netns.Set(orig) == nil, err
		}
		ferr := f()
		if err := netns.Set(orig); err != nil {
			return false, errors.Join(ferr, err)
		}
		return true, ferr
	})
}

// listen listens for the relay on the far end's address.
func (p *Path) listen(ctx context.Context) (ln net.Listener, err error) {
	err = p.in(&p.far, func() error {
		var lc net.ListenConfig
		ln, err = lc.Listen(ctx, "tcp4", net.JoinHostPort(farIP, "0"))
		return err
	})
	return ln, err
}

// Dial opens a connection through the path: its packets cross the pair,
// and the relay forwards its bytes to the upstream.
func (p *Path) Dial(ctx context.Context) (c net.Conn, err error) {
	err = p.in(&p.near, func() error {
		var d net.Dialer
		c, err = d.DialContext(ctx, "tcp4", p.ln.Addr().String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("veth: dial through the pair: %w", err)
	}
	return c, nil
}

// Abort resets the relay's side of the connection dialled from local (a
// connection's LocalAddr): a reset the dialling side sent may be lost in
// a full queue, and would leave it open.
func (p *Path) Abort(local string) {
	p.mu.Lock()
	r, ok := p.peers[local]
	p.mu.Unlock()
	if ok {
		abort(r.pair)
		abort(r.upstream)
	}
}

// relay accepts the pair's connections and forwards each to the upstream.
func (p *Path) relay() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Add(1)
		go p.forward(c)
	}
}

// forward copies a relayed connection's bytes to and from the upstream
// until both directions end; a reset on one side resets the other.
func (p *Path) forward(c net.Conn) {
	defer p.wg.Done()
	d := net.Dialer{Timeout: p.o.DialTimeout}
	u, err := d.DialContext(p.relayCtx, "tcp", p.o.Upstream)
	if err != nil {
		if p.relayCtx.Err() == nil {
			p.dialErrs.Add(1)
		}
		abort(c)
		return
	}
	key := c.RemoteAddr().String()
	if !p.track(key, relayed{c, u}) {
		abort(c)
		abort(u)
		return
	}
	defer p.untrack(key)
	done := make(chan struct{})
	go func() {
		pipe(u, c)
		close(done)
	}()
	pipe(c, u)
	<-done
}

// pipe copies from src to dst, then passes on src's end: a close as a
// close of dst's writing side, a reset (or any error) as a reset of dst.
func pipe(dst, src net.Conn) {
	_, err := io.Copy(dst, src)
	if err != nil {
		abort(dst)
		abort(src)
		return
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// abort resets a connection.
func abort(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

func (p *Path) track(key string, r relayed) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.peers[key] = r
	return true
}

func (p *Path) untrack(key string) {
	p.mu.Lock()
	r := p.peers[key]
	delete(p.peers, key)
	p.mu.Unlock()
	if r.pair != nil {
		_ = r.pair.Close()
		_ = r.upstream.Close()
	}
}

// Set changes both directions' shapes, on open connections too. If the
// kernel refuses a change, the shapes of before are set back.
func (p *Path) Set(up, down Shape) error {
	if err := up.Validate(); err != nil {
		return fmt.Errorf("veth: up: %w", err)
	}
	if err := down.Validate(); err != nil {
		return fmt.Errorf("veth: down: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("veth: closed")
	}
	before, beforeDown := p.up, p.down
	if err := p.apply(up, down); err != nil {
		return errors.Join(err, p.apply(before, beforeDown))
	}
	return nil
}

// Shapes are the shapes New or Set gave last.
func (p *Path) Shapes() (up, down Shape) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.up, p.down
}

// apply sets up's cap on the near end's way out and its loss on the far
// end's way in, and down's the other way round.
func (p *Path) apply(up, down Shape) error {
	if err := p.near.setRate(up); err != nil {
		return err
	}
	if err := p.far.setRate(down); err != nil {
		return err
	}
	if err := p.far.setLoss(up.Loss); err != nil {
		return err
	}
	if err := p.near.setLoss(down.Loss); err != nil {
		return err
	}
	p.up, p.down = up, down
	return nil
}

// qdisc is the end's rate cap as it stands (with its counters), or nil.
func (e *end) qdisc() *netlink.Tbf {
	qs, err := e.nl.QdiscList(e.link)
	if err != nil {
		return nil
	}
	for _, q := range qs {
		if t, ok := q.(*netlink.Tbf); ok && t.Attrs().Parent == netlink.HANDLE_ROOT {
			return t
		}
	}
	return nil
}

// overflow is how many packets the end's rate cap dropped, its queue full.
func (e *end) overflow() int64 {
	if q := e.qdisc(); q != nil && q.Statistics != nil && q.Statistics.Queue != nil {
		return int64(q.Statistics.Queue.Drops)
	}
	return 0
}

// setRate puts a token bucket of s's rate on the end's way out, or takes
// it away.
func (e *end) setRate(s Shape) error {
	attrs := netlink.QdiscAttrs{LinkIndex: e.link.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
	if s.Bandwidth == 0 {
		if e.qdisc() == nil {
			return nil
		}
		drops := e.overflow()
		if err := e.nl.QdiscDel(&netlink.Tbf{QdiscAttrs: attrs}); err != nil {
			return fmt.Errorf("veth: remove the rate cap: %w", err)
		}
		e.base.Overflow += drops
		return nil
	}
	burst := s.burst()
	// The qdisc counts whole frames; the cap is of the bytes a stream
	// carries: a full frame of 1,514 bytes carries 1,448.
	rate := uint64(s.Bandwidth) * frameBytes / segmentBytes
	// The queue holds 100 ms of the rate beyond the bucket, as tc's
	// "latency 100ms" would; more waits are drops, as on a real link.
	limit := int64(rate)/10 + burst
	tbf := &netlink.Tbf{QdiscAttrs: attrs, Rate: rate, Limit: uint32(min(limit, 1<<31)),
		Buffer: netlink.Xmittime(rate, uint32(burst))}
	if err := e.nl.QdiscReplace(tbf); err != nil {
		return fmt.Errorf("veth: the rate cap (tbf): %w", err)
	}
	return nil
}

// setLoss replaces the end's arrival rules: every TCP packet counted, and
// with loss > 0 a share of them (never a reset, which would otherwise
// leave a relayed connection open) dropped and counted.
func (e *end) setLoss(loss float64) error {
	seen, counted := e.counts()
	e.nft.FlushChain(e.chain)
	tcp := []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
	}
	e.nft.AddRule(&nftables.Rule{Table: e.table, Chain: e.chain, UserData: []byte("seen"),
		Exprs: append(append([]expr.Any{}, tcp...), &expr.Counter{})})
	if n := uint32(loss * lossModulus); n > 0 {
		drop := append(append([]expr.Any{}, tcp...),
			// the TCP header's flags byte, reset bit clear
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 13, Len: 1},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 1, Mask: []byte{0x04}, Xor: []byte{0}},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{0}},
			// a random number below n of lossModulus; numgen writes it in
			// host order, the comparison reads network order
			&expr.Numgen{Register: 1, Modulus: lossModulus, Type: unix.NFT_NG_RANDOM},
			&expr.Byteorder{SourceRegister: 1, DestRegister: 1, Op: expr.ByteorderHton, Len: 4, Size: 4},
			&expr.Cmp{Op: expr.CmpOpLt, Register: 1, Data: binaryutil.BigEndian.PutUint32(n)},
			&expr.Counter{},
			&expr.Verdict{Kind: expr.VerdictDrop})
		e.nft.AddRule(&nftables.Rule{Table: e.table, Chain: e.chain, UserData: []byte("dropped"), Exprs: drop})
	}
	if err := e.nft.Flush(); err != nil {
		return fmt.Errorf("veth: the loss rule (nftables): %w", err)
	}
	if counted {
		e.base.Packets += seen.Packets
		e.base.Dropped += seen.Dropped
	}
	return nil
}

// counts reads the end's rules' counters, since they were last replaced;
// false if they could not be read.
func (e *end) counts() (Flow, bool) {
	rules, err := e.nft.GetRules(e.table, e.chain)
	if err != nil {
		return Flow{}, false
	}
	var f Flow
	for _, r := range rules {
		for _, x := range r.Exprs {
			c, ok := x.(*expr.Counter)
			if !ok {
				continue
			}
			switch string(r.UserData) {
			case "seen":
				f.Packets += int64(c.Packets)
			case "dropped":
				f.Dropped += int64(c.Packets)
			}
		}
	}
	return f, true
}

// Stats count each direction's packets as they arrived at the far end,
// those the loss rule dropped and those the rate cap's full queue dropped,
// and the relay's failed dials, since New.
func (p *Path) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Stats{Up: p.far.base, Down: p.near.base, DialErrors: p.dialErrs.Load()}
	if !p.closed {
		st.Up, st.Down = p.flow(&p.far, &p.near), p.flow(&p.near, &p.far)
	}
	return st
}

// flow is a direction's counts now: its arrivals at in, its way out of
// out; p.mu is held.
func (p *Path) flow(in, out *end) Flow {
	f, _ := in.counts()
	f.Dropped += in.base.Dropped
	f.Packets += in.base.Packets
	f.Overflow = out.base.Overflow + out.overflow()
	return f
}

// Close resets every relayed connection, stops the relay and removes the
// namespaces (and with them the pair, its qdiscs and rules).
func (p *Path) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	up, down := p.flow(&p.far, &p.near), p.flow(&p.near, &p.far) // the final counts, for Stats
	p.far.base, p.near.base = up, down
	p.closed = true
	conns := make([]relayed, 0, len(p.peers))
	for _, r := range p.peers {
		conns = append(conns, r)
	}
	p.mu.Unlock()
	if p.stop != nil {
		p.stop()
	}
	var err error
	if p.ln != nil {
		err = p.ln.Close()
	}
	for _, r := range conns {
		abort(r.pair)
		abort(r.upstream)
	}
	p.wg.Wait()
	return errors.Join(err, p.teardown())
}

// teardown closes the namespaces' handles, once no thread is in them: the
// kernel removes a namespace, its pair end, qdiscs and rules once nothing
// refers to it.
func (p *Path) teardown() error {
	p.nsMu.Lock()
	defer p.nsMu.Unlock()
	var errs []error
	for _, e := range []*end{&p.near, &p.far} {
		if e.nft != nil {
			errs = append(errs, e.nft.CloseLasting())
		}
		if e.nl != nil {
			e.nl.Close()
		}
		if e.ns.IsOpen() {
			errs = append(errs, e.ns.Close())
		}
	}
	return errors.Join(errs...)
}
