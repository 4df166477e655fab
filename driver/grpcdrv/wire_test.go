package grpcdrv

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"net"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/driver/internal/enginetest"
	"github.com/tandem-bench/tandem/driver/internal/h2wire"
	"github.com/tandem-bench/tandem/internal/pong"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
)

// runBoth runs the same closed loop on both engines: the event loop's
// sample first.
func runBoth(t *testing.T, o Options, c load.Closed) (loop, workers results.Sample) {
	t.Helper()
	caller, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return enginetest.RunBoth(t, caller, c)
}

// A unary call on the event loop counts what grpc-go counts, call for
// call, on the sample service (grpc-go's server): answers, failures with
// a status, methods resolved by reflection or from .proto files, metadata,
// clients on a connection each or sharing two.
func TestLoopAgreesWithWorkers(t *testing.T) {
	addr := startSample(t)
	files := []string{"ledger.proto"}
	paths := []string{"testdata/protos"}
	for _, c := range []struct {
		name   string
		o      Options
		ok     int64
		errors map[string]int64
	}{
		{"answers", Options{Method: "tandem.sample.v1.Ledger/GetBlock", Request: []byte(`{"height": 7}`)}, 200, nil},
		{"answers, proto files", Options{Method: "tandem.sample.v1.Ledger/GetBlock", Request: []byte(`{"height": 7}`), Proto: files, ImportPaths: paths}, 200, nil},
		{"metadata", Options{Method: "tandem.sample.v1.Ledger/GetBlock", Request: []byte(`{"height": 7}`), Metadata: map[string]string{"X-Trace": "t1"}}, 200, nil},
		{"invalid", Options{Method: "tandem.sample.v1.Ledger/GetBalance", Request: []byte(`{"address": "x"}`)}, 0, map[string]int64{"grpc:INVALID_ARGUMENT": 200}},
		{"not found", Options{Method: "tandem.sample.v1.Ledger/GetBlock", Request: []byte(fmt.Sprintf(`{"height": %d}`, blocks+50))}, 0, map[string]int64{"grpc:NOT_FOUND": 200}},
	} {
		for _, conns := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/%d connections", c.name, conns), func(t *testing.T) {
				o := c.o
				o.Addr, o.Connections = addr, conns
				loop, workers := runBoth(t, o, load.Closed{Concurrency: 8, Requests: 200, Timeout: 10 * time.Second})
				if loop.Requests != 200 || workers.Requests != 200 || loop.OK != workers.OK || !maps.Equal(loop.Errors, workers.Errors) {
					t.Fatalf("loop: %d requests, %d ok, errors %v; workers: %d, %d, %v", loop.Requests, loop.OK, loop.Errors,
						workers.Requests, workers.OK, workers.Errors)
				}
				if c.errors != nil && (loop.OK != c.ok || !maps.Equal(loop.Errors, c.errors)) {
					t.Errorf("%d ok, errors %v; want %d, %v", loop.OK, loop.Errors, c.ok, c.errors)
				}
				if c.ok > 0 && loop.OK != c.ok {
					t.Errorf("%d ok; want %d", loop.OK, c.ok)
				}
			})
		}
	}
}

// A server-streaming call on the event loop counts the messages grpc-go
// counts, and times the first: whole streams, and streams that fail with
// a status after some messages.
func TestLoopStreams(t *testing.T) {
	addr := startSample(t)
	for _, c := range []struct {
		name    string
		request string
		units   int64 // messages of the successful calls
		errors  map[string]int64
	}{
		{"whole", `{"start": 0, "end": 9}`, 100 * 10, nil},
		{"past the tip", `{"start": 295, "end": 305}`, 0, map[string]int64{"grpc:NOT_FOUND": 100}},
	} {
		t.Run(c.name, func(t *testing.T) {
			loop, workers := runBoth(t, Options{Addr: addr, Method: "tandem.sample.v1.Ledger/GetBlockRange", Request: []byte(c.request), Connections: 2},
				load.Closed{Concurrency: 4, Requests: 100, Timeout: 10 * time.Second})
			for _, s := range []results.Sample{loop, workers} {
				units := int64(s.UnitsPerS*float64(s.DurationNs)/1e9 + 0.5)
				if s.Requests != 100 || !maps.Equal(s.Errors, c.errors) && len(s.Errors)+len(c.errors) > 0 || units != c.units {
					t.Errorf("%s: %d requests, %d messages, errors %v; want 100, %d, %v", s.Engine, s.Requests, units, s.Errors, c.units, c.errors)
				}
				if s.FirstMessageNs == nil || s.FirstMessageNs.Min <= 0 || s.FirstMessageNs.Max > s.LatencyNs.Max && s.OK > 0 {
					t.Errorf("%s: times to the first message %+v; want them, none longer than a call", s.Engine, s.FirstMessageNs)
				}
			}
		})
	}
}

// On the minimal server (fixed frames of empty messages): a unary call
// answered with one message, and with two (grpc-go's cardinality
// violation, INTERNAL), and a stream of ten, on both engines alike.
func TestLoopPong(t *testing.T) {
	for _, c := range []struct {
		method   string
		messages int
		ok       int64
		errors   map[string]int64
	}{
		{"Ping", 1, 1000, nil},
		{"Ping", 2, 0, map[string]int64{"grpc:INTERNAL": 1000}},
		{"GetBlockRange", 10, 1000, nil},
	} {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go pong.ServeH2(ln, pong.H2Options{GRPC: true, Messages: c.messages})
		loop, workers := runBoth(t, Options{Addr: ln.Addr().String(), Method: "tandem.sample.v1.Ledger/" + c.method, Proto: []string{"ledger.proto"},
			ImportPaths: []string{"../../sample/ledgerpb"}, Connections: 2}, load.Closed{Concurrency: 16, Requests: 1000, Timeout: 10 * time.Second})
		for _, s := range []results.Sample{loop, workers} {
			units := int64(s.UnitsPerS*float64(s.DurationNs)/1e9 + 0.5)
			if s.Requests != 1000 || s.OK != c.ok || units != c.ok*int64(c.messages) || !maps.Equal(s.Errors, c.errors) && len(s.Errors)+len(c.errors) > 0 {
				t.Errorf("%s, %d messages an answer, %s: %d requests, %d ok, %d messages, errors %v; want 1000, %d, %d, %v", c.method, c.messages, s.Engine,
					s.Requests, s.OK, units, s.Errors, c.ok, c.ok*int64(c.messages), c.errors)
			}
		}
	}
}

// FuzzData counts an answer's messages as it comes in any pieces: the
// count and the verdict never depend on where the DATA frames split it,
// and agree with a whole-buffer reading of gRPC's framing (a 5-byte
// prefix: a compressed flag, a big-endian length).
func FuzzData(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 2, 'h', 'i', 0, 0, 0, 0, 0}, uint8(3))
	f.Add([]byte{0, 0, 0, 0, 9, 1}, uint8(1))
	f.Add([]byte{1, 0, 0, 0, 0}, uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, cut uint8) {
		p := &call{w: &wire{stream: true}}
		whole := h2wire.Stream{Code: 0, Tag: 1}
		p.Data(&whole, b)
		pieces := h2wire.Stream{Code: 0, Tag: 1}
		step := int(cut%7) + 1
		for rest := b; len(rest) > 0; {
			n := min(step, len(rest))
			p.Data(&pieces, rest[:n])
			rest = rest[n:]
		}
		if whole.Units != pieces.Units || whole.Left != pieces.Left || len(whole.Body) != len(pieces.Body) {
			t.Fatalf("whole: %d messages, left %d, prefix %d; in pieces of %d: %d, %d, %d", whole.Units, whole.Left, len(whole.Body),
				step, pieces.Units, pieces.Left, len(pieces.Body))
		}
		// the reference: whole messages until the bytes end, a compressed
		// flag or a length past maxRecv
		var units int64
		for r := b; len(r) >= 5; {
			size := int(binary.BigEndian.Uint32(r[1:5]))
			if r[0] != 0 || size > maxRecv || len(r) < 5+size {
				break
			}
			units++
			r = r[5+size:]
		}
		if whole.Units != units {
			t.Fatalf("%d messages; the framing has %d", whole.Units, units)
		}
		if a := p.Answer(&whole); (a.Status == "") != (whole.Left == 0 && len(whole.Body) == 0) {
			t.Fatalf("verdict %q with %d left of a message, %d bytes of a prefix", a.Status, whole.Left, len(whole.Body))
		}
	})
}
