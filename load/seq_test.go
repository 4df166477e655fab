package load_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
)

// seqServer is a loopback HTTP/1.1 server that answers every request with
// a fixed answer and records the number in each request's path (GET /N).
type seqServer struct {
	addr *net.TCPAddr
	mu   sync.Mutex
	seen []uint64
}

// seqAnswer is every answer: its length frames it.
const seqAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

func newSeqServer(t *testing.T) *seqServer {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &seqServer{addr: ln.Addr().(*net.TCPAddr)}
	go func() {
		for {
			cn, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(cn)
		}
	}()
	return s
}

func (s *seqServer) serve(cn net.Conn) {
	defer cn.Close()
	br := bufio.NewReader(cn)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		n, err := strconv.ParseUint(strings.TrimPrefix(req.URL.Path, "/"), 10, 64)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.seen = append(s.seen, n)
		s.mu.Unlock()
		if _, err := io.WriteString(cn, seqAnswer); err != nil {
			return
		}
	}
}

// numbers are the request numbers the server saw, sorted.
func (s *seqServer) numbers() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(slices.Values(s.seen))
}

// seqDialer's connections send GET /N for request number N, on the worker
// engine (Conn) and on the event loop (its Wire).
type seqDialer struct{ s *seqServer }

func (d seqDialer) Dial(ctx context.Context) (load.Conn, error) {
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, "tcp", d.s.addr.String())
	if err != nil {
		return nil, err
	}
	return &seqConn{nc: nc, br: bufio.NewReader(nc)}, nil
}

func (d seqDialer) Wire() (load.Wire, bool) { return seqWire{d.s.addr}, true }

type seqConn struct {
	nc net.Conn
	br *bufio.Reader
}

func (c *seqConn) Do(_ context.Context, i uint64, deadline time.Time) load.Result {
	c.nc.SetDeadline(deadline)
	if _, err := fmt.Fprintf(c.nc, "GET /%d HTTP/1.1\r\nHost: t\r\n\r\n", i); err != nil {
		return load.Result{Status: load.TransportStatus(err)}
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return load.Result{Status: load.TransportStatus(err)}
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return load.Result{Units: 1}
}

func (c *seqConn) Close() error { return c.nc.Close() }

type seqWire struct{ addr *net.TCPAddr }

func (w seqWire) Addr() *net.TCPAddr     { return w.addr }
func (w seqWire) NewConn() load.WireConn { return load.Serial(seqWireConn{}) }

// seqWireConn is the event loop's side of seqConn.
type seqWireConn struct{}

func (seqWireConn) AppendRequest(b []byte, i uint64) ([]byte, error) {
	return fmt.Appendf(b, "GET /%d HTTP/1.1\r\nHost: t\r\n\r\n", i), nil
}

func (seqWireConn) Response(b []byte) (int, load.Result, bool, error) {
	if len(b) < len(seqAnswer) {
		return 0, load.Result{}, false, nil
	}
	if string(b[:len(seqAnswer)]) != seqAnswer {
		return 0, load.Result{}, false, fmt.Errorf("not the answer: %q", b)
	}
	return len(seqAnswer), load.Result{Units: 1}, false, nil
}

// Every executor numbers a run's requests as the package says: a closed
// loop 0 to Requests−1, each once; an open loop's arrival k is request k,
// and with nothing dropped its Requests arrivals are 0 to Requests−1; a
// batched loop's request n of period p on connection c is
// (p·Connections + c)·PerPeriod + n. What the server saw is the account:
// each number sent once, none outside the run's.
func TestRequestNumbers(t *testing.T) {
	const n = 240
	batched := load.Batched{Connections: 2, PerPeriod: 3, Period: 100 * time.Millisecond, Duration: 400 * time.Millisecond}
	cases := []struct {
		name  string
		loop  bool
		run   func(load.Dialer) (results.Sample, error)
		slots uint64 // the numbers the run may give: 0 to slots−1
	}{
		{"closed workers", false, func(d load.Dialer) (results.Sample, error) {
			return load.Closed{Concurrency: 4, Requests: n, Engine: load.EngineWorkers}.Run(context.Background(), d)
		}, n},
		{"closed loop", true, func(d load.Dialer) (results.Sample, error) {
			return load.Closed{Concurrency: 4, Requests: n, Engine: load.EngineLoop}.Run(context.Background(), d)
		}, n},
		{"open workers", false, func(d load.Dialer) (results.Sample, error) {
			return load.Open{Schedule: load.Constant{Rate: 4000}, Connections: 4, Requests: n, Engine: load.EngineWorkers}.Run(context.Background(), d)
		}, n},
		{"open loop", true, func(d load.Dialer) (results.Sample, error) {
			return load.Open{Schedule: load.Constant{Rate: 4000}, Connections: 4, Requests: n, Engine: load.EngineLoop}.Run(context.Background(), d)
		}, n},
		{"batched", false, func(d load.Dialer) (results.Sample, error) {
			return batched.Run(context.Background(), d)
		}, uint64(batched.Expected())},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.loop && runtime.GOOS != "linux" {
				t.Skip("the event loop runs on Linux only")
			}
			srv := newSeqServer(t)
			s, err := tc.run(seqDialer{srv})
			if err != nil {
				t.Fatal(err)
			}
			got := srv.numbers()
			sent := uint64(s.Requests + s.Unfinished)
			if uint64(len(got)) != sent || sent+uint64(s.Dropped) != tc.slots {
				t.Fatalf("server saw %d requests; the sample says %d sent, %d dropped, of %d", len(got), sent, s.Dropped, tc.slots)
			}
			for k, num := range got {
				if num >= tc.slots || k > 0 && got[k-1] == num {
					t.Fatalf("request number %d: outside 0..%d or sent twice (%v)", num, tc.slots-1, got)
				}
			}
			if s.Dropped == 0 && (got[0] != 0 || got[len(got)-1] != tc.slots-1) {
				t.Fatalf("numbers %d..%d; want 0..%d", got[0], got[len(got)-1], tc.slots-1)
			}
		})
	}
}
