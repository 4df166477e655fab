package grpcdrv

import (
	"context"
	"fmt"
	"maps"
	"net"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/driver/internal/enginetest"
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
