//go:build linux

package veth_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/link/veth"
)

// server answers each connection's request, an 8-byte size followed by
// that many bytes, with the SHA-256 of what it read followed by size bytes
// of its own.
func server(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				var n uint64
				if binary.Read(c, binary.BigEndian, &n) != nil {
					return
				}
				h := sha256.New()
				if _, err := io.CopyN(h, c, int64(n)); err != nil {
					return
				}
				c.Write(h.Sum(nil))
				io.CopyN(c, rand.NewChaCha8([32]byte{}), int64(n))
			}()
		}
	}()
	return ln.Addr().String()
}

// exchange sends n random bytes through c and reads the answer: it fails
// unless the server saw exactly what was sent and n bytes come back.
func exchange(t *testing.T, c net.Conn, n int) {
	t.Helper()
	out := make([]byte, n)
	rand.NewChaCha8([32]byte{1}).Read(out)
	go func() {
		binary.Write(c, binary.BigEndian, uint64(n))
		c.Write(out)
	}()
	sum := make([]byte, sha256.Size)
	if _, err := io.ReadFull(c, sum); err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	if want := sha256.Sum256(out); !bytes.Equal(sum, want[:]) {
		t.Fatal("the server did not read what was sent")
	}
	got, err := io.Copy(io.Discard, io.LimitReader(c, int64(n)))
	if err != nil || got != int64(n) {
		t.Fatalf("read %d of %d answer bytes: %v", got, n, err)
	}
}

// newPath makes a Path for o, closed when the test ends.
func newPath(t *testing.T, o veth.Options) *veth.Path {
	t.Helper()
	p, err := veth.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// dialPath dials through p, the connection closed when the test ends and
// its deadline a hang guard of within.
func dialPath(t *testing.T, p *veth.Path, within time.Duration) net.Conn {
	t.Helper()
	c, err := p.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(within))
	return c
}

// retransmits is the kernel's count of segments the connection sent again.
func retransmits(t *testing.T, c net.Conn) uint32 {
	t.Helper()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info *unix.TCPInfo
	raw.Control(func(fd uintptr) { info, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) })
	if err != nil {
		t.Fatal(err)
	}
	return info.Total_retrans
}

// With 10 % loss each way the bytes still arrive whole, the kernel
// retransmits, and the rules drop about a tenth of the packets; set to no
// loss, packets are counted and none is dropped.
func TestLoss(t *testing.T) {
	tooltest.Kernel(t)
	t.Parallel()
	p := newPath(t, veth.Options{Upstream: server(t), Up: veth.Shape{Loss: 0.1}, Down: veth.Shape{Loss: 0.1}})
	c := dialPath(t, p, 5*time.Minute)
	exchange(t, c, 1<<20)
	if r := retransmits(t, c); r == 0 {
		t.Error("no retransmission on a path that loses 10 %")
	}
	c.Close()
	st := p.Stats()
	for _, d := range []struct {
		name string
		f    veth.Flow
	}{{"up", st.Up}, {"down", st.Down}} {
		share := float64(d.f.Dropped) / float64(d.f.Packets)
		t.Logf("%s: %d of %d packets dropped (%.3f)", d.name, d.f.Dropped, d.f.Packets, share)
		if d.f.Packets < 500 || share < 0.06 || share > 0.14 {
			t.Errorf("%s: %d of %d packets dropped (%.3f); want about 0.1 of 500 or more", d.name, d.f.Dropped, d.f.Packets, share)
		}
	}
	if err := p.Set(veth.Shape{}, veth.Shape{}); err != nil {
		t.Fatal(err)
	}
	before := p.Stats()
	c = dialPath(t, p, time.Minute)
	exchange(t, c, 256<<10) // (a busy machine may still make TCP probe a late ACK: no count of retransmissions here)
	c.Close()
	after := p.Stats()
	if after.Up.Dropped != before.Up.Dropped || after.Down.Dropped != before.Down.Dropped || after.Down.Packets <= before.Down.Packets {
		t.Errorf("after loss 0: %+v, before %+v; want packets counted and no more dropped", after, before)
	}
}

// A cap of 2 MB/s down holds a 3 MB answer to the cap (never above it by
// more than the bucket's burst); the way up is not capped.
func TestBandwidth(t *testing.T) {
	tooltest.Kernel(t)
	t.Parallel()
	const rate, n, burst = 2_000_000, 3_000_000, 40_000
	p := newPath(t, veth.Options{Upstream: server(t), Down: veth.Shape{Bandwidth: rate, Burst: burst}})
	c := dialPath(t, p, 5*time.Minute)
	t0 := time.Now()
	exchange(t, c, n)
	took := time.Since(t0)
	t.Logf("%d bytes in %v: %.0f B/s through a %d B/s cap", n, took, n/took.Seconds(), rate)
	// n bytes at the rate, less a burst the bucket starts with
	if floor := time.Duration(float64(n-burst) / rate * float64(time.Second)); took < floor {
		t.Errorf("%d bytes in %v through a %d B/s cap; want %v or more", n, took, rate, floor)
	}
}

// Close resets the relayed connections and removes the namespaces: a
// connection open at Close ends, and Dial fails.
func TestClose(t *testing.T) {
	tooltest.Kernel(t)
	t.Parallel()
	p, err := veth.New(context.Background(), veth.Options{Upstream: server(t), Up: veth.Shape{}, Down: veth.Shape{}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	exchange(t, c, 1000)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("a connection open at Close still reads")
	}
	if c, err := p.Dial(context.Background()); err == nil {
		c.Close()
		t.Error("Dial after Close succeeded")
	}
	if err := p.Set(veth.Shape{}, veth.Shape{}); err == nil {
		t.Error("Set after Close succeeded")
	}
}

func TestShapeValidate(t *testing.T) {
	for _, s := range []veth.Shape{{Loss: -0.1}, {Loss: 1}, {Bandwidth: -1}, {Burst: -1}} {
		if s.Validate() == nil {
			t.Errorf("%+v validated", s)
		}
	}
	if err := (veth.Shape{Loss: 0.5, Bandwidth: 1, Burst: 1}).Validate(); err != nil {
		t.Error(err)
	}
}

// With the upstream down, a connection through the path is reset and the
// relay counts the failed dial; Abort resets the relay's side of an open
// connection (as when the dialling side's reset is lost).
func TestUpstreamDownAndAbort(t *testing.T) {
	tooltest.Kernel(t)
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close() // nothing listens there now
	p := newPath(t, veth.Options{Upstream: down, DialTimeout: 2 * time.Second})
	// the relay resets the connection at once: the dial itself may see it
	if c, err := p.Dial(context.Background()); err == nil {
		c.SetDeadline(time.Now().Add(time.Minute))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Error("a connection to a dead upstream reads")
		}
		c.Close()
	}
	deadline := time.Now().Add(time.Minute)
	for p.Stats().DialErrors == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if st := p.Stats(); st.DialErrors != 1 {
		t.Errorf("stats %+v; want 1 dial error", st)
	}

	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	q := newPath(t, veth.Options{Upstream: echo.Addr().String()})
	c := dialPath(t, q, time.Minute)
	buf := make([]byte, 2)
	if _, err := c.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hi" {
		t.Fatalf("echo %q, %v", buf, err)
	}
	// the relay has the connection once it answered; abort it from there
	q.Abort(c.LocalAddr().String())
	if _, err := c.Read(buf); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("read after Abort: %v; want a reset", err)
	}
}
