package link

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// hang bounds every wait of these tests: a guard against hanging, not a
// timing goal.
const hang = 20 * time.Second

// server is a real TCP server on 127.0.0.1:0 that answers each connection
// with serve and records how each ended.
type server struct {
	ln    net.Listener
	ended chan error // one value per connection: serve's error (nil at a clean end)
	wg    sync.WaitGroup
}

func newServer(t *testing.T, serve func(net.Conn) error) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{ln: ln, ended: make(chan error, 100)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				err := serve(c)
				c.Close()
				s.ended <- err
			}()
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *server) addr() string { return s.ln.Addr().String() }

func (s *server) close() {
	s.ln.Close()
	s.wg.Wait()
}

// echo answers every byte with itself and half-closes at the client's FIN.
func echo(c net.Conn) error {
	if _, err := io.Copy(c, c); err != nil {
		return err
	}
	return c.(*net.TCPConn).CloseWrite()
}

func newLink(t *testing.T, o Options) *Link {
	t.Helper()
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	l, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return l
}

func dial(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, hang)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(hang))
	return c.(*net.TCPConn)
}

// roundTrip sends msg and reads as many bytes back; it returns them and the
// time from before the write to after the last byte.
func roundTrip(t *testing.T, c net.Conn, msg []byte) ([]byte, time.Duration) {
	t.Helper()
	start := time.Now()
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("after %d bytes sent: %v", len(msg), err)
	}
	return got, time.Since(start)
}

// eventually polls cond until it holds (or fails the test at the hang guard).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// dialReset dials addr and fails the test unless the connection is reset,
// at once (the dial) or at the first read.
func dialReset(t *testing.T, addr, what string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, hang)
	if err == nil {
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(hang))
		_, err = c.Read(make([]byte, 1))
	}
	if !isReset(err) {
		t.Errorf("%s: %v, want a reset", what, err)
	}
}

// isReset reports whether err is a connection reset by the peer.
func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

func TestDelayIsAFloorOnTheRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name     string
		up, down Conditions
		floor    time.Duration
	}{
		{"25ms each way", Conditions{Delay: 25 * time.Millisecond}, Conditions{Delay: 25 * time.Millisecond}, 50 * time.Millisecond},
		{"one way only", Conditions{Delay: 40 * time.Millisecond}, Conditions{}, 40 * time.Millisecond},
		{"uniform jitter", Conditions{Delay: 30 * time.Millisecond, Jitter: 10 * time.Millisecond},
			Conditions{Delay: 30 * time.Millisecond, Jitter: 10 * time.Millisecond}, 40 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, echo)
			l := newLink(t, Options{Upstream: srv.addr(), Up: tc.up, Down: tc.down, Seed: 1})
			c := dial(t, l.Addr())
			sent := 0
			for i := range 8 {
				msg := []byte(fmt.Sprintf("request %d of a small exchange", i))
				got, rtt := roundTrip(t, c, msg)
				sent += len(msg)
				if !bytes.Equal(got, msg) {
					t.Fatalf("exchange %d: got %q, want %q", i, got, msg)
				}
				if rtt < tc.floor {
					t.Errorf("exchange %d: round trip %v, below the floor %v", i, rtt, tc.floor)
				}
			}
			// A byte is counted just after it is written: wait for the count.
			eventually(t, "every byte counted", func() bool {
				st := l.Stats()
				return st.Up.Bytes >= int64(sent) && st.Down.Bytes >= int64(sent)
			})
			st := l.Stats()
			if st.Up.Read != int64(sent) || st.Up.Bytes != int64(sent) || st.Down.Bytes != int64(sent) {
				t.Errorf("stats %+v: want %d bytes read and delivered each way", st, sent)
			}
			if st.Accepted != 1 || st.Open != 1 {
				t.Errorf("stats %+v: want 1 connection accepted and open", st)
			}
			// every piece was held at least its direction's delay, less
			// the jitter: the mean and the longest are floored by it
			for _, d := range []struct {
				f    Flow
				c    Conditions
				name string
			}{{st.Up, tc.up, "up"}, {st.Down, tc.down, "down"}} {
				floor := d.c.Delay - d.c.Jitter
				if d.f.Pieces < 8 || d.f.MeanHeld() < floor || time.Duration(d.f.MaxHeldNs) < d.f.MeanHeld() {
					t.Errorf("%s: %d pieces, held %v on average, %v at most; want 8 or more, each %v or more",
						d.name, d.f.Pieces, d.f.MeanHeld(), time.Duration(d.f.MaxHeldNs), floor)
				}
			}
		})
	}
}

// A large stream crosses whole and in order under every condition.
func TestStreamArrivesWholeAndInOrder(t *testing.T) {
	const size = 1 << 20
	for _, tc := range []struct {
		name string
		cond Conditions
	}{
		{"no conditions", Conditions{}},
		{"delay", Conditions{Delay: 5 * time.Millisecond}},
		{"uniform jitter wider than the delay", Conditions{Delay: 2 * time.Millisecond, Jitter: 6 * time.Millisecond}},
		{"normal jitter wider than the delay", Conditions{Delay: 2 * time.Millisecond, Jitter: 6 * time.Millisecond, Distribution: Normal}},
		{"loss", Conditions{Loss: 0.02}},
		{"bandwidth", Conditions{Bandwidth: 8 << 20, Burst: 5000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, echo)
			l := newLink(t, Options{Upstream: srv.addr(), Up: tc.cond, Down: tc.cond, Seed: 7})
			c := dial(t, l.Addr())
			msg := randomBytes(t, size)
			errc := make(chan error, 1)
			go func() {
				_, err := c.Write(msg)
				if err == nil {
					err = c.CloseWrite()
				}
				errc <- err
			}()
			got, err := io.ReadAll(c)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, msg) {
				t.Fatalf("got %d bytes back, want the %d sent, unchanged", len(got), len(msg))
			}
			eventually(t, "connection closed", func() bool { return l.Stats().Open == 0 })
			st := l.Stats()
			for _, f := range []Flow{st.Up, st.Down} {
				if f.Read != size || f.Bytes != size {
					t.Errorf("flow %+v: want %d read and delivered", f, size)
				}
			}
		})
	}
}

// Many small writes through a wide jitter arrive in the order sent.
func TestJitterNeverReorders(t *testing.T) {
	for _, d := range []Distribution{Uniform, Normal} {
		t.Run(d.String(), func(t *testing.T) {
			srv := newServer(t, echo)
			cond := Conditions{Delay: 3 * time.Millisecond, Jitter: 10 * time.Millisecond, Distribution: d}
			l := newLink(t, Options{Upstream: srv.addr(), Up: cond, Down: cond, Seed: 3})
			c := dial(t, l.Addr())
			const n = 300
			go func() {
				for i := range n {
					if _, err := fmt.Fprintf(c, "%06d\n", i); err != nil {
						return
					}
					if i%10 == 0 {
						time.Sleep(time.Millisecond) // let reads split the stream
					}
				}
				c.CloseWrite()
			}()
			got, err := io.ReadAll(c)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
			if len(lines) != n {
				t.Fatalf("got %d records back, want %d", len(lines), n)
			}
			for i, line := range lines {
				if want := fmt.Sprintf("%06d", i); line != want {
					t.Fatalf("record %d is %q, want %q: reordered or changed", i, line, want)
				}
			}
		})
	}
}

func TestSetChangesConditionsOfOpenConnections(t *testing.T) {
	srv := newServer(t, echo)
	l := newLink(t, Options{Upstream: srv.addr()})
	c := dial(t, l.Addr())
	roundTrip(t, c, []byte("before"))

	slow := Conditions{Delay: 40 * time.Millisecond}
	if err := l.Set(slow, slow); err != nil {
		t.Fatal(err)
	}
	if up, down := l.Conditions(); up != slow || down != slow {
		t.Fatalf("Conditions() = %+v, %+v; want what Set gave", up, down)
	}
	if _, rtt := roundTrip(t, c, []byte("after")); rtt < 80*time.Millisecond {
		t.Errorf("round trip after Set %v, below the 80 ms it set", rtt)
	}

	// A chunk read before Set keeps the delay it drew: nothing leaves early.
	if err := l.Set(Conditions{Delay: 300 * time.Millisecond}, Conditions{}); err != nil {
		t.Fatal(err)
	}
	before := l.Stats().Up.Read
	msg := []byte("held for 300 ms")
	start := time.Now()
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the link read the chunk", func() bool { return l.Stats().Up.Read == before+int64(len(msg)) })
	if err := l.Set(Conditions{}, Conditions{}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(start); rtt < 300*time.Millisecond {
		t.Errorf("a chunk read under a 300 ms delay came back after %v: Set released it early", rtt)
	}

	if err := l.Set(Conditions{Loss: 1}, Conditions{}); err == nil || !strings.Contains(err.Error(), "loss") {
		t.Errorf("Set with loss 1: error %v, want one naming loss", err)
	}
}

// The bandwidth cap is an upper bound on what crosses: at most the cap per
// second plus one bucket, over a 2 s transfer, on any machine.
func TestBandwidthNeverExceedsCapPlusBucket(t *testing.T) {
	for _, tc := range []struct {
		name string
		cond Conditions
	}{
		{"default bucket", Conditions{Bandwidth: 200_000}},
		{"large bucket", Conditions{Bandwidth: 100_000, Burst: 60_000}},
		{"with delay", Conditions{Bandwidth: 150_000, Delay: 10 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, func(c net.Conn) error {
				// A large answer: more than the cap lets through in 2 s.
				buf := make([]byte, 64<<10)
				for range 32 {
					if _, err := c.Write(buf); err != nil {
						return nil // the client hung up after its 2 s
					}
				}
				return nil
			})
			l := newLink(t, Options{Upstream: srv.addr(), Down: tc.cond})
			start := time.Now()
			c := dial(t, l.Addr())
			_ = c.SetReadDeadline(start.Add(2 * time.Second))
			n, err := io.Copy(io.Discard, c)
			elapsed := time.Since(start)
			var ne net.Error
			if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
				t.Fatal(err)
			}
			bucket := float64(tc.cond.burst())
			limit := bucket + float64(tc.cond.Bandwidth)*elapsed.Seconds()
			if float64(n) > limit {
				t.Errorf("%d bytes in %v through a cap of %d B/s with a bucket of %.0f: more than %.0f",
					n, elapsed, tc.cond.Bandwidth, bucket, limit)
			}
			if n == 0 {
				t.Error("no byte crossed in 2 s")
			}
		})
	}
}

// cutResets cuts l and holds that c, open through it, and the upstream's
// end of it (srv's) were reset.
func cutResets(t *testing.T, l *Link, c net.Conn, srv *server) {
	t.Helper()
	l.Cut()
	if l.State() != Disconnected {
		t.Fatalf("state %v after Cut, want disconnected", l.State())
	}
	if _, err := c.Read(make([]byte, 1)); !isReset(err) {
		t.Errorf("read on an open connection after Cut: %v, want a reset", err)
	}
	select {
	case err := <-srv.ended:
		if !isReset(err) {
			t.Errorf("the upstream's end of the cut connection: %v, want a reset", err)
		}
	case <-time.After(hang):
		t.Fatal("the upstream's connection did not end after Cut")
	}
}

func TestCutResetsOpenConnectionsAndRefusesNewOnes(t *testing.T) {
	srv := newServer(t, echo)
	l := newLink(t, Options{Upstream: srv.addr(), Up: Conditions{Delay: time.Millisecond}})
	c := dial(t, l.Addr())
	roundTrip(t, c, []byte("hello"))

	cutResets(t, l, c, srv)

	dialReset(t, l.Addr(), "a connection made while cut")
	eventually(t, "the refused connection counted", func() bool { return l.Stats().Refused == 1 })

	l.Restore()
	c3 := dial(t, l.Addr())
	if got, _ := roundTrip(t, c3, []byte("back")); string(got) != "back" {
		t.Errorf("after Restore: got %q", got)
	}
	st := l.Stats()
	if st.Accepted != 3 || st.Resets != 1 || st.Refused != 1 || st.Open != 1 {
		t.Errorf("stats %+v: want 3 accepted, 1 reset, 1 refused, 1 open", st)
	}
}

func TestPartitionHoldsEverythingUntilRestore(t *testing.T) {
	srv := newServer(t, echo)
	l := newLink(t, Options{Upstream: srv.addr()})
	c := dial(t, l.Addr())
	roundTrip(t, c, []byte("hello"))
	eventually(t, "the first bytes counted", func() bool { return l.Stats().Down.Bytes == 5 })

	l.Partition()
	msg := []byte("sent while partitioned")
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the link read the chunk", func() bool { return l.Stats().Up.Read == int64(5+len(msg)) })
	c2 := dial(t, l.Addr())
	if _, err := c2.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the held connection accepted", func() bool { return l.Stats().Accepted == 2 })
	if st := l.Stats(); st.Up.Bytes != 5 || st.Down.Bytes != 5 || st.Open != 1 {
		t.Fatalf("stats %+v while partitioned: want nothing more delivered (5 bytes) and the new connection not forwarded", st)
	}

	l.Restore()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("held bytes after Restore: %q, %v", got, err)
	}
	got2 := make([]byte, 3)
	if _, err := io.ReadFull(c2, got2); err != nil || string(got2) != "new" {
		t.Fatalf("held connection after Restore: %q, %v", got2, err)
	}
	if st := l.Stats(); st.Resets != 0 || st.Open != 2 {
		t.Errorf("stats %+v: want no reset, 2 open", st)
	}
}

func TestResetAfterBytesDeliversThemThenResets(t *testing.T) {
	answer := randomBytes(t, 100_000)
	srv := newServer(t, func(c net.Conn) error {
		if _, err := c.Read(make([]byte, 1)); err != nil {
			return err
		}
		_, err := c.Write(answer)
		return err
	})
	const limit = 10_000
	l := newLink(t, Options{Upstream: srv.addr(), Down: Conditions{ResetAfterBytes: limit}})
	c := dial(t, l.Addr())
	if _, err := c.Write([]byte("?")); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if !isReset(err) {
		t.Errorf("read: %v, want a reset", err)
	}
	if len(got) > limit || !bytes.Equal(got, answer[:len(got)]) {
		t.Errorf("got %d bytes: want at most %d, the start of the answer", len(got), limit)
	}
	eventually(t, "the reset counted", func() bool { return l.Stats().Resets == 1 })
	if st := l.Stats(); st.Down.Bytes != limit {
		t.Errorf("delivered %d bytes downstream, want exactly %d", st.Down.Bytes, limit)
	}
}

func TestResetAfterResetsNotBefore(t *testing.T) {
	srv := newServer(t, echo)
	const after = 150 * time.Millisecond
	l := newLink(t, Options{Upstream: srv.addr(), Up: Conditions{ResetAfter: time.Hour}, Down: Conditions{ResetAfter: after}})
	start := time.Now()
	c := dial(t, l.Addr())
	roundTrip(t, c, []byte("hello"))
	_, err := c.Read(make([]byte, 1))
	if !isReset(err) {
		t.Fatalf("read: %v, want a reset", err)
	}
	if d := time.Since(start); d < after {
		t.Errorf("reset %v after dialling, before the %v asked", d, after)
	}
	eventually(t, "the reset counted", func() bool { return l.Stats().Resets == 1 })
}

// Every exchange during which a segment was lost took at least MinRTO, and
// the bytes still arrive whole.
func TestLossStallsEachExchangeItHits(t *testing.T) {
	srv := newServer(t, echo)
	cond := Conditions{Loss: 0.1}
	l := newLink(t, Options{Upstream: srv.addr(), Up: cond, Down: cond, Seed: 11})
	c := dial(t, l.Addr())
	hit := 0
	for i := range 40 {
		before := l.Stats()
		msg := []byte(fmt.Sprintf("exchange %02d", i))
		got, rtt := roundTrip(t, c, msg)
		if !bytes.Equal(got, msg) {
			t.Fatalf("exchange %d: got %q", i, got)
		}
		after := l.Stats()
		if after.Up.Lost+after.Down.Lost == before.Up.Lost+before.Down.Lost {
			continue
		}
		hit++
		if rtt < MinRTO {
			t.Errorf("exchange %d lost a segment yet took %v, less than the %v retransmission timeout", i, rtt, MinRTO)
		}
	}
	if hit == 0 {
		t.Error("no segment lost in 80 at 10 %")
	}
}

// A client's FIN reaches the upstream after its bytes, and the answer still
// comes back (toxiproxy v2.12.0 drops it).
func TestHalfCloseKeepsTheAnswer(t *testing.T) {
	srv := newServer(t, echo)
	cond := Conditions{Delay: 5 * time.Millisecond}
	l := newLink(t, Options{Upstream: srv.addr(), Up: cond, Down: cond})
	for i := range 5 {
		c := dial(t, l.Addr())
		msg := []byte(fmt.Sprintf("ping %d", i))
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		if err := c.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(c)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("connection %d: got %q, %v; want %q then EOF", i, got, err, msg)
		}
	}
	eventually(t, "every connection closed", func() bool { return l.Stats().Open == 0 })
}

func TestDialErrorResetsTheClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	l := newLink(t, Options{Upstream: gone})
	dialReset(t, l.Addr(), "a connection whose upstream is gone")
	eventually(t, "the dial error counted", func() bool { return l.Stats().DialErrors == 1 })
}

// Close ends every goroutine and the listener, whatever its connections are
// doing: forwarding, held by a partition, or idle.
func TestCloseLeavesNoGoroutineNorListener(t *testing.T) {
	srv := newServer(t, echo)
	keep := goleak.IgnoreCurrent()
	l, err := New(context.Background(), Options{Listen: "127.0.0.1:0", Upstream: srv.addr(),
		Down: Conditions{Delay: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	idle := dial(t, l.Addr())
	roundTripStart := make([]byte, 4)
	if _, err := idle.Write(roundTripStart); err != nil { // its echo is held for an hour
		t.Fatal(err)
	}
	eventually(t, "a connection open", func() bool { return l.Stats().Down.Read == 4 })
	l.Partition()
	dial(t, l.Addr()) // held
	eventually(t, "the held connection accepted", func() bool { return l.Stats().Accepted == 2 })

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := idle.Read(make([]byte, 1)); err == nil {
		t.Error("a connection through the closed link still reads")
	}
	if c, err := net.DialTimeout("tcp", l.Addr(), hang); err == nil {
		c.Close()
		t.Error("the closed link still accepts connections")
	}
	srv.close() // its connections' goroutines end as the link's did
	goleak.VerifyNone(t, keep)
}

func TestContextEndClosesTheLink(t *testing.T) {
	srv := newServer(t, echo)
	ctx, cancel := context.WithCancel(context.Background())
	l, err := New(ctx, Options{Listen: "127.0.0.1:0", Upstream: srv.addr()})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, l.Addr())
	roundTrip(t, c, []byte("hi"))
	cancel()
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("a connection still reads after the link's context ended")
	}
	eventually(t, "the listener closed", func() bool {
		c, err := net.Dial("tcp", l.Addr())
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	if err := l.Close(); err != nil {
		t.Errorf("Close after the context ended: %v", err)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no upstream", Options{Listen: "127.0.0.1:0"}, "no upstream"},
		{"bad listen", Options{Listen: "127.0.0.1:x", Upstream: "127.0.0.1:1"}, "listen"},
		{"bad up", Options{Listen: "127.0.0.1:0", Upstream: "127.0.0.1:1", Up: Conditions{Delay: -1}}, "up: delay"},
		{"bad down", Options{Listen: "127.0.0.1:0", Upstream: "127.0.0.1:1", Down: Conditions{Jitter: -1}}, "down: jitter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(context.Background(), tc.o)
			if err == nil {
				l.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
}
