package load_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/load"
)

// muxServer speaks a line protocol that carries several requests at once
// on a connection, as HTTP/2 does: a connection opens with "HELLO"; each
// request is "R TAG N" and is answered "A TAG N", in the reverse order of
// the requests read together (answers out of order); after every third
// answer the server sends "PING" and wants "PONG" back before its next
// answer; "C TAG" abandons a request. A request whose N is in hang is never
// answered.
type muxServer struct {
	addr *net.TCPAddr
	hang map[uint64]bool
	// bye, if positive: no pings; after bye answers on a connection the
	// server sends "BYE T", T the last tag it read (all answered), and
	// answers nothing more on it (a GOAWAY)
	bye int
	mu  sync.Mutex
	// what the server saw: connections, greetings, requests, pongs, cancels
	conns, hellos, requests, pongs, cancels int
	bad                                     []string // lines out of protocol
	most                                    int      // the most requests unanswered at once on a connection
	served                                  sync.WaitGroup
}

// seen waits for the connections to close (the run closes them at its
// end) and locks the counts; unlock with s.mu.Unlock.
func (s *muxServer) seen(t *testing.T) {
	done := make(chan struct{})
	go func() { s.served.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the server's connections were not closed within a minute of the run's end")
	}
	s.mu.Lock()
}

func newMuxServer(t *testing.T, bye int, hang ...uint64) *muxServer {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &muxServer{addr: ln.Addr().(*net.TCPAddr), hang: map[uint64]bool{}, bye: bye}
	for _, n := range hang {
		s.hang[n] = true
	}
	go func() {
		for {
			cn, err := ln.Accept()
			if err != nil {
				return
			}
			s.served.Add(1)
			go s.serve(cn)
		}
	}()
	return s
}

func (s *muxServer) count(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

func (s *muxServer) serve(cn net.Conn) {
	defer s.served.Done()
	defer cn.Close()
	s.count(func() { s.conns++ })
	br := bufio.NewReader(cn)
	answered, pinged, gone := 0, false, false
	open := 0 // requests read and not answered
	var batch []string
	lastTag := ""
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		f := bytes.Fields([]byte(line))
		switch {
		case len(f) == 1 && string(f[0]) == "HELLO":
			s.count(func() { s.hellos++ })
		case len(f) == 1 && string(f[0]) == "PONG" && pinged:
			pinged = false
			s.count(func() { s.pongs++ })
		case len(f) == 2 && string(f[0]) == "C":
			s.count(func() { s.cancels++ })
		case len(f) == 3 && string(f[0]) == "R" && gone:
			continue // not answered: the server went away
		case len(f) == 3 && string(f[0]) == "R":
			s.count(func() { s.requests++ })
			lastTag = string(f[1])
			open++
			s.count(func() { s.most = max(s.most, open) })
			if n, _ := strconv.ParseUint(string(f[2]), 10, 64); !s.hang[n] {
				batch = append(batch, fmt.Sprintf("A %s %s\n", f[1], f[2]))
			}
		default:
			s.count(func() { s.bad = append(s.bad, line) })
			return
		}
		if br.Buffered() > 0 || pinged {
			continue // answer what came together, in reverse; none before a pong
		}
		var out []byte
		for k := len(batch) - 1; k >= 0; k-- {
			out = append(out, batch[k]...)
			open--
			if answered++; answered%3 == 0 && s.bye == 0 {
				out = append(out, "PING\n"...)
				pinged = true
				batch = batch[:k]
				break
			}
		}
		if !pinged {
			batch = batch[:0]
		}
		if s.bye > 0 && answered >= s.bye && !gone {
			out = fmt.Appendf(out, "BYE %s\n", lastTag)
			gone = true
		}
		if _, err := cn.Write(out); err != nil {
			return
		}
	}
}

// muxDialer offers the event loop only: conns connections shared by the
// clients.
type muxDialer struct {
	s     *muxServer
	conns int
	limit int // requests in flight a connection takes at once (0: any)
	spent int // requests a connection carries in all (0: any)
}

func (d muxDialer) Dial(context.Context) (load.Conn, error) {
	return nil, fmt.Errorf("the mux protocol is the event loop's only")
}

func (d muxDialer) Wire() (load.Wire, bool) { return muxWire(d), true }

type muxWire muxDialer

func (w muxWire) Addr() *net.TCPAddr { return w.s.addr }
func (w muxWire) Connections() int   { return w.conns }
func (w muxWire) NewConn() load.WireConn {
	return &muxConn{tags: map[string]muxReq{}, limit: w.limit, spent: w.spent}
}

type muxReq struct {
	slot int
	n    uint64
}

// muxConn tags each request with a number of its own and keeps which slot
// and request number each tag stands for.
type muxConn struct {
	next       int
	tags       map[string]muxReq
	unanswered []int
	limit      int
	spent      int
}

// Unanswered are the slots of the requests a BYE left unanswered.
func (c *muxConn) Unanswered() []int {
	u := c.unanswered
	c.unanswered = nil
	return u
}

func (c *muxConn) Greeting(b []byte) []byte { return append(b, "HELLO\n"...) }

func (c *muxConn) AppendRequest(b []byte, i uint64, s int) ([]byte, error) {
	if c.spent > 0 && c.next >= c.spent {
		return b, load.ErrSpent
	}
	if c.limit > 0 && len(c.tags) >= c.limit {
		return b, load.ErrFull
	}
	c.next++
	tag := strconv.Itoa(c.next)
	c.tags[tag] = muxReq{slot: s, n: i}
	return fmt.Appendf(b, "R %s %d\n", tag, i), nil
}

func (c *muxConn) Next(b, out []byte) (load.Frame, []byte, error) {
	end := bytes.IndexByte(b, '\n')
	if end < 0 {
		return load.Frame{Slot: -1}, out, nil
	}
	f := bytes.Fields(b[:end])
	switch {
	case len(f) == 1 && string(f[0]) == "PING":
		return load.Frame{N: end + 1, Slot: -1}, append(out, "PONG\n"...), nil
	case len(f) == 2 && string(f[0]) == "BYE":
		last, _ := strconv.Atoi(string(f[1]))
		for tag, r := range c.tags {
			if n, _ := strconv.Atoi(tag); n > last {
				c.unanswered = append(c.unanswered, r.slot)
				delete(c.tags, tag)
			}
		}
		return load.Frame{N: end + 1, Slot: -1, Close: true}, out, nil
	case len(f) == 3 && string(f[0]) == "A":
		r, ok := c.tags[string(f[1])]
		if !ok {
			return load.Frame{N: end + 1, Slot: -1}, out, nil // abandoned
		}
		delete(c.tags, string(f[1]))
		res := load.Result{Units: 1}
		if string(f[2]) != strconv.FormatUint(r.n, 10) {
			res = load.Result{Status: "mismatch"}
		}
		return load.Frame{N: end + 1, Slot: r.slot, Result: res}, out, nil
	}
	return load.Frame{}, out, fmt.Errorf("not the protocol: %q", b[:end])
}

func (c *muxConn) Cancel(out []byte, s int) ([]byte, bool) {
	for tag, r := range c.tags {
		if r.slot == s {
			delete(c.tags, tag)
			return fmt.Appendf(out, "C %s\n", tag), true
		}
	}
	return out, true
}

// The event loop carries a closed loop's clients over fewer connections
// when the wire shares them: each connection greeted once, answers matched
// to their requests out of order, the server's pings answered, nothing
// dialed again.
func TestLoopShared(t *testing.T) {
	s := newMuxServer(t, 0)
	c := load.Closed{Concurrency: 8, Requests: 600, Timeout: 10 * time.Second, Engine: load.EngineLoop}
	smp, err := c.Run(context.Background(), muxDialer{s: s, conns: 2})
	if err != nil {
		t.Fatal(err)
	}
	if smp.OK != 600 || smp.Requests != 600 || len(smp.Errors) != 0 {
		t.Fatalf("ok %d of %d, errors %v; want 600 ok", smp.OK, smp.Requests, smp.Errors)
	}
	s.seen(t)
	defer s.mu.Unlock()
	if s.conns != 2 || s.hellos != 2 || s.requests != 600 || len(s.bad) != 0 {
		t.Errorf("server saw %d connections, %d greetings, %d requests, lines out of protocol %q; want 2, 2, 600, none",
			s.conns, s.hellos, s.requests, s.bad)
	}
	if s.pongs < 600/3/2-2 {
		t.Errorf("%d pings answered, want about one every three answers (%d)", s.pongs, 600/3)
	}
}

// A request past its timeout on a shared connection is abandoned in the
// protocol (a cancel sent), not by closing the connection: the requests
// beside it carry on.
func TestLoopSharedTimeout(t *testing.T) {
	s := newMuxServer(t, 0, 5, 17)
	c := load.Closed{Concurrency: 4, Requests: 200, Timeout: 300 * time.Millisecond, Engine: load.EngineLoop}
	smp, err := c.Run(context.Background(), muxDialer{s: s, conns: 1})
	if err != nil {
		t.Fatal(err)
	}
	if smp.OK != 198 || smp.Errors["timeout"] != 2 || smp.Requests != 200 {
		t.Fatalf("ok %d of %d, errors %v; want 198 ok and 2 timeouts", smp.OK, smp.Requests, smp.Errors)
	}
	s.seen(t)
	defer s.mu.Unlock()
	if s.conns != 1 || s.cancels != 2 || len(s.bad) != 0 {
		t.Errorf("server saw %d connections, %d cancels, lines out of protocol %q; want 1, 2, none", s.conns, s.cancels, s.bad)
	}
}

// A server going away (a GOAWAY: "BYE" after 50 answers a connection)
// answers what it read; the loop sends what it did not answer again on a
// new connection, and waits for the rest before it closes the old one:
// every request answered once, none failed.
func TestLoopSharedGoingAway(t *testing.T) {
	s := newMuxServer(t, 50)
	c := load.Closed{Concurrency: 8, Requests: 600, Timeout: 10 * time.Second, Engine: load.EngineLoop}
	smp, err := c.Run(context.Background(), muxDialer{s: s, conns: 2})
	if err != nil {
		t.Fatal(err)
	}
	if smp.OK != 600 || smp.Requests != 600 || len(smp.Errors) != 0 {
		t.Fatalf("ok %d of %d, errors %v; want 600 ok", smp.OK, smp.Requests, smp.Errors)
	}
	s.seen(t)
	defer s.mu.Unlock()
	if s.conns < 600/50 || len(s.bad) != 0 {
		t.Errorf("server saw %d connections, lines out of protocol %q; want at least %d (one a 50 answers), none", s.conns, s.bad, 600/50)
	}
}

// A connection that takes fewer requests at once than the clients it
// carries (ErrFull) holds the rest back and sends them as answers make
// room: every request answered once, never more in flight than it takes.
func TestLoopSharedFull(t *testing.T) {
	s := newMuxServer(t, 0)
	c := load.Closed{Concurrency: 8, Requests: 600, Timeout: 10 * time.Second, Engine: load.EngineLoop}
	smp, err := c.Run(context.Background(), muxDialer{s: s, conns: 2, limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if smp.OK != 600 || smp.Requests != 600 || len(smp.Errors) != 0 {
		t.Fatalf("ok %d of %d, errors %v; want 600 ok", smp.OK, smp.Requests, smp.Errors)
	}
	s.seen(t)
	defer s.mu.Unlock()
	if s.conns != 2 || s.requests != 600 || s.most > 2 || len(s.bad) != 0 {
		t.Errorf("server saw %d connections, %d requests, at most %d at once on one, lines out of protocol %q; want 2, 600, 2, none",
			s.conns, s.requests, s.most, s.bad)
	}
}

// A connection that can carry no more requests (ErrSpent: HTTP/2's stream
// ids ran out) is retired as if its server went away having answered all
// it was sent: the request that found it spent goes on a new connection
// once the others are answered. Every request answered once, none failed,
// none sent twice; also with connections that are full meanwhile.
func TestLoopSharedSpent(t *testing.T) {
	for _, limit := range []int{0, 3} {
		s := newMuxServer(t, 0)
		c := load.Closed{Concurrency: 8, Requests: 600, Timeout: 10 * time.Second, Engine: load.EngineLoop}
		smp, err := c.Run(context.Background(), muxDialer{s: s, conns: 2, limit: limit, spent: 40})
		if err != nil {
			t.Fatal(err)
		}
		if smp.OK != 600 || smp.Requests != 600 || len(smp.Errors) != 0 {
			t.Fatalf("limit %d: ok %d of %d, errors %v; want 600 ok", limit, smp.OK, smp.Requests, smp.Errors)
		}
		s.seen(t)
		if s.conns < 600/40 || s.requests != 600 || len(s.bad) != 0 {
			t.Errorf("limit %d: server saw %d connections, %d requests, lines out of protocol %q; want at least %d, 600, none",
				limit, s.conns, s.requests, s.bad, 600/40)
		}
		s.mu.Unlock()
	}
}

// An open loop's arrivals go on new connections as theirs are spent.
func TestLoopOpenSpent(t *testing.T) {
	s := newMuxServer(t, 0)
	o := load.Open{Schedule: load.Constant{Rate: 2000}, Connections: 2, Requests: 300, MaxWaiting: 1000, Timeout: 10 * time.Second, Engine: load.EngineLoop}
	smp, err := o.Run(context.Background(), muxDialer{s: s, conns: 2, spent: 25})
	if err != nil {
		t.Fatal(err)
	}
	if smp.OK != 300 || smp.Requests != 300 || len(smp.Errors) != 0 {
		t.Fatalf("ok %d of %d, errors %v; want 300 ok", smp.OK, smp.Requests, smp.Errors)
	}
	s.seen(t)
	defer s.mu.Unlock()
	if s.conns < 300/25 || s.requests != 300 {
		t.Errorf("server saw %d connections, %d requests; want at least %d, 300", s.conns, s.requests, 300/25)
	}
}
