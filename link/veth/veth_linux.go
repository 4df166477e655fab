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
	// base counts the packets seen and dropped by rules replaced since.
	base Flow
}

// Path is a TCP path through a veth pair between two namespaces of its own
// to an upstream address. Its methods are safe for concurrent use.
type Path struct {
	upstream string
	near     end // dials; its veth's way out is up, its way in down
	far      end // relays; its way out is down, its way in up
	ln       net.Listener
	relayCtx context.Context
	stop     context.CancelFunc
	wg       sync.WaitGroup

	mu     sync.Mutex // guards what follows and serialises Set
	up     Shape
	down   Shape
	conns  map[net.Conn]struct{}
	closed bool
}

// Probe makes a Path with a cap and a loss rule and closes it: nil if
// this process may use the kernel's path here, else why not.
func Probe() error {
	p, err := New(context.Background(), "127.0.0.1:1", Shape{Loss: 0.01, Bandwidth: 1 << 20}, Shape{Loss: 0.01, Bandwidth: 1 << 20})
	if err != nil {
		return err
	}
	return p.Close()
}

// New makes the namespaces, the pair, the up and down shapes and the
// relay, which forwards every connection dialled through the Path to
// upstream (dialled from tandem's own namespace).
func New(ctx context.Context, upstream string, up, down Shape) (p *Path, err error) {
	if err := up.Validate(); err != nil {
		return nil, fmt.Errorf("veth: up: %w", err)
	}
	if err := down.Validate(); err != nil {
		return nil, fmt.Errorf("veth: down: %w", err)
	}
	p = &Path{upstream: upstream, conns: map[net.Conn]struct{}{}}
	defer func() {
		if err != nil {
			p.teardown()
		}
	}()
	for _, e := range []*end{&p.near, &p.far} {
		if e.ns, err = newNamespace(); err != nil {
			return nil, fmt.Errorf("veth: a network namespace: %w", err)
		}
		if e.nl, err = netlink.NewHandleAt(e.ns); err != nil {
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
	if err := p.apply(up, down); err != nil {
		return nil, err
	}
	if p.ln, err = listenIn(ctx, p.far.ns, net.JoinHostPort(farIP, "0")); err != nil {
		return nil, fmt.Errorf("veth: the relay's listener: %w", err)
	}
	p.relayCtx, p.stop = context.WithCancel(context.WithoutCancel(ctx))
	p.wg.Add(1)
	go p.relay()
	return p, nil
}

// setUp addresses the end's veth and brings it up, and makes its loss
// table.
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

// newNamespace makes a network namespace and returns a handle to it; the
// calling thread goes back to its own (or, if it cannot, ends with the
// goroutine rather than serve others in the wrong namespace).
func newNamespace() (netns.NsHandle, error) {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return netns.None(), err
	}
	defer orig.Close()
	ns, err := netns.New()
	if err != nil {
		runtime.UnlockOSThread()
		return netns.None(), err
	}
	if err := netns.Set(orig); err != nil {
		ns.Close()
		return netns.None(), err // the thread stays locked: it ends with this goroutine
	}
	runtime.UnlockOSThread()
	return ns, nil
}

// in runs f on a thread in namespace ns: a socket f makes is ns's.
func in(ns netns.NsHandle, f func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	if err := netns.Set(ns); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	ferr := f()
	if err := netns.Set(orig); err != nil {
		return errors.Join(ferr, err) // the thread stays locked: it ends with this goroutine
	}
	runtime.UnlockOSThread()
	return ferr
}

// listenIn listens on addr in namespace ns.
func listenIn(ctx context.Context, ns netns.NsHandle, addr string) (ln net.Listener, err error) {
	err = in(ns, func() error {
		var lc net.ListenConfig
		ln, err = lc.Listen(ctx, "tcp4", addr)
		return err
	})
	return ln, err
}

// Dial opens a connection through the path: its packets cross the pair,
// and the relay forwards its bytes to the upstream.
func (p *Path) Dial(ctx context.Context) (c net.Conn, err error) {
	err = in(p.near.ns, func() error {
		var d net.Dialer
		c, err = d.DialContext(ctx, "tcp4", p.ln.Addr().String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("veth: dial through the pair: %w", err)
	}
	return c, nil
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
	var d net.Dialer
	u, err := d.DialContext(p.relayCtx, "tcp", p.upstream)
	if err != nil {
		abort(c)
		return
	}
	if !p.track(c, u) {
		abort(c)
		abort(u)
		return
	}
	defer p.untrack(c, u)
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

func (p *Path) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Path) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
		_ = c.Close()
	}
}

// Set changes both directions' shapes, on open connections too.
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
	return p.apply(up, down)
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

// setRate puts a token bucket of s's rate on the end's way out, or takes
// it away.
func (e *end) setRate(s Shape) error {
	attrs := netlink.QdiscAttrs{LinkIndex: e.link.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
	if s.Bandwidth == 0 {
		err := e.nl.QdiscDel(&netlink.Tbf{QdiscAttrs: attrs})
		if err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("veth: remove the rate cap: %w", err)
		}
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
	if seen, err := e.counts(); err == nil {
		e.base.Packets += seen.Packets
		e.base.Dropped += seen.Dropped
	}
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
	return nil
}

// counts reads the end's rules' counters, since they were last replaced.
func (e *end) counts() (Flow, error) {
	rules, err := e.nft.GetRules(e.table, e.chain)
	if err != nil {
		return Flow{}, err
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
	return f, nil
}

// Stats count each direction's packets as they arrived at the far end and
// those the loss rule dropped, since New.
func (p *Path) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	flow := func(e *end) Flow {
		f, _ := e.counts()
		return Flow{Packets: e.base.Packets + f.Packets, Dropped: e.base.Dropped + f.Dropped}
	}
	if p.closed {
		return Stats{Up: p.far.base, Down: p.near.base}
	}
	return Stats{Up: flow(&p.far), Down: flow(&p.near)}
}

// Close resets every relayed connection, stops the relay and removes the
// namespaces (and with them the pair, its qdiscs and rules).
func (p *Path) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	for _, e := range []*end{&p.far, &p.near} { // the final counts, for Stats
		if f, err := e.counts(); err == nil {
			e.base.Packets += f.Packets
			e.base.Dropped += f.Dropped
		}
	}
	p.closed = true
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	if p.stop != nil {
		p.stop()
	}
	var err error
	if p.ln != nil {
		err = p.ln.Close()
	}
	for _, c := range conns {
		abort(c)
	}
	p.wg.Wait()
	return errors.Join(err, p.teardown())
}

// teardown closes the namespaces' handles: the kernel removes a namespace,
// its pair end, qdiscs and rules once nothing refers to it.
func (p *Path) teardown() error {
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
