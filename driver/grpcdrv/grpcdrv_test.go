package grpcdrv

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/sample"
	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

const blocks = 300

func startSample(t *testing.T) string {
	t.Helper()
	s, err := sample.Start(context.Background(), sample.Options{Build: sample.BuildA, DataDir: t.TempDir(), Blocks: blocks, Work: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.GRPCAddr()
}

// An IPv6 literal address ([::1]:PORT) is dialed as it is, through
// reflection and calls alike.
func TestIPv6(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	ln.Close()
	s, err := sample.Start(context.Background(), sample.Options{Build: sample.BuildA, DataDir: t.TempDir(), Blocks: blocks, Work: 1,
		GRPCAddr: "[::1]:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !strings.HasPrefix(s.GRPCAddr(), "[::1]:") {
		t.Fatalf("sample listens on %s; want [::1]:PORT", s.GRPCAddr())
	}
	cn := dial(t, Options{Addr: s.GRPCAddr(), Method: "tandem.sample.v1.Ledger/GetBlock", Request: []byte(`{"height": 7}`)})
	if ans, res := cn.Ask(context.Background()); res.Status != "" || len(ans) != 1 {
		t.Errorf("GetBlock over [::1]: %q, status %q", ans, res.Status)
	}
	if res := cn.Do(context.Background(), 0, time.Now().Add(2*time.Second)); res.Status != "" || res.Units != 1 {
		t.Errorf("Do over [::1] = %+v", res)
	}
}

func dial(t *testing.T, o Options) *Conn {
	t.Helper()
	c, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	cn, err := c.DialConn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cn.Close() })
	return cn
}

func TestReflectionAndProtoFilesAgree(t *testing.T) {
	addr := startSample(t)
	viaReflection := dial(t, Options{Addr: addr, Method: "tandem.sample.v1.Ledger/GetBlock", Request: []byte(`{"height": 7}`)})
	viaFiles := dial(t, Options{Addr: addr, Method: "/tandem.sample.v1.Ledger/GetBlock", Request: []byte(`{"height": 7}`),
		Proto: []string{"ledger.proto"}, ImportPaths: []string{"testdata/protos"}})
	a, ra := viaReflection.Ask(context.Background())
	b, rb := viaFiles.Ask(context.Background())
	if ra.Status != "" || rb.Status != "" || len(a) != 1 || string(a[0]) != string(b[0]) {
		t.Fatalf("reflection %s %q, files %s %q; want the same answer", a, ra.Status, b, rb.Status)
	}
	var blk struct{ Height string }
	if err := json.Unmarshal(a[0], &blk); err != nil || blk.Height != "7" {
		t.Errorf("answer %s: height %q; want \"7\"", a[0], blk.Height)
	}
	if res := viaReflection.Do(context.Background(), 0, time.Now().Add(time.Second)); res.Status != "" || res.Units != 1 || res.First != 0 {
		t.Errorf("Do = %+v", res)
	}
}

func TestStreams(t *testing.T) {
	addr := startSample(t)
	whole := dial(t, Options{Addr: addr, Method: "tandem.sample.v1.Ledger/GetBlockRange", Request: []byte(`{"start": 0, "end": 9}`)})
	if !whole.c.Streaming() {
		t.Error("GetBlockRange not seen as server-streaming")
	}
	res := whole.Do(context.Background(), 0, time.Now().Add(5*time.Second))
	if res.Status != "" || res.Units != 10 || res.First <= 0 {
		t.Errorf("range 0–9: %+v; want 10 messages and a time to the first", res)
	}
	ans, _ := whole.Ask(context.Background())
	if len(ans) != 10 {
		t.Errorf("Ask on a stream: %d answers; want 10", len(ans))
	}
	half := dial(t, Options{Addr: addr, Method: "tandem.sample.v1.Ledger/GetBlockRange", Request: []byte(`{"start": 295, "end": 305}`)})
	if res := half.Do(context.Background(), 0, time.Now().Add(5*time.Second)); res.Status != "grpc:NOT_FOUND" || res.Units != 5 {
		t.Errorf("range past the tip: %+v; want 5 messages then grpc:NOT_FOUND", res)
	}
}

func TestErrors(t *testing.T) {
	addr := startSample(t)
	ctx := context.Background()
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"unknown method", Options{Addr: addr, Method: "tandem.sample.v1.Ledger/Nope"}, "service tandem.sample.v1.Ledger has no method Nope"},
		{"unknown service", Options{Addr: addr, Method: "no.Such/M"}, "reflection: service no.Such"},
		{"bad method name", Options{Addr: addr, Method: "NoSlash"}, "want package.Service/Method"},
		{"broken proto", Options{Addr: addr, Method: "broken.S/M", Proto: []string{"broken.proto"}, ImportPaths: []string{"testdata/protos"}}, "broken.proto:4:3"},
		{"missing proto", Options{Addr: addr, Method: "a.B/C", Proto: []string{"none.proto"}, ImportPaths: []string{"testdata/protos"}}, "none.proto"},
		{"method not in proto", Options{Addr: addr, Method: "tandem.sample.v1.Ledger/Info", Proto: []string{"ledger.proto"}, ImportPaths: []string{"testdata/protos"}}, "has no method Info"},
		{"bad request field", Options{Addr: addr, Method: "tandem.sample.v1.Ledger/GetBlock", Request: []byte(`{"hieght": 1}`)}, `unknown field "hieght"`},
		{"unreachable", Options{Addr: "127.0.0.1:1", Method: "a.B/C"}, "127.0.0.1:1"},
	}
	for _, c := range cases {
		cl, err := New(ctx, c.o)
		if err == nil {
			_, err = cl.DialConn(ctx)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want it to contain %q", c.name, err, c.want)
		}
	}
	cn := dial(t, Options{Addr: addr, Method: "tandem.sample.v1.Ledger/GetBalance", Request: []byte(`{"address": "x"}`)})
	if res := cn.Do(ctx, 0, time.Now().Add(time.Second)); res.Status != "grpc:INVALID_ARGUMENT" {
		t.Errorf("bad address: %q; want grpc:INVALID_ARGUMENT", res.Status)
	}
	if res := cn.Do(ctx, 0, time.Now().Add(-time.Second)); res.Status != "timeout" {
		t.Errorf("past deadline: %q; want timeout", res.Status)
	}
}

func TestStatusNames(t *testing.T) {
	cases := map[codes.Code]string{codes.NotFound: "grpc:NOT_FOUND", codes.InvalidArgument: "grpc:INVALID_ARGUMENT",
		codes.Unavailable: "grpc:UNAVAILABLE", codes.DeadlineExceeded: "timeout", codes.ResourceExhausted: "grpc:RESOURCE_EXHAUSTED"}
	for code, want := range cases {
		if got := Status(status.Error(code, "x")); got != want {
			t.Errorf("Status(%v) = %q; want %q", code, got, want)
		}
	}
}

func FuzzDecodeJSON(f *testing.F) {
	md := (&ledgerpb.Block{}).ProtoReflect().Descriptor()
	good, _ := proto.Marshal(&ledgerpb.Block{Height: 5, Hash: []byte{1, 2}, Txs: []*ledgerpb.Transaction{{From: "tz1000001", Outputs: []*ledgerpb.Output{{Address: "a", Amount: 3}}}}})
	f.Add(good)
	f.Add([]byte{})
	empty, _ := proto.Marshal(&emptypb.Empty{})
	f.Add(empty)
	f.Add([]byte{0x0a, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, wire []byte) {
		js, err := DecodeJSON(md, wire)
		if err == nil && !json.Valid(js) {
			t.Fatalf("DecodeJSON(%x) gave invalid JSON %s", wire, js)
		}
	})
}

// With Options.Connections the Conns of every Dial share that many
// connections in turn, calls from all of them go through at once as
// streams, and a shared connection closes with its last Conn.
func TestSharedConnections(t *testing.T) {
	addr := startSample(t)
	for _, tc := range []struct {
		name        string
		connections int
		dials       int
		distinct    int
	}{{"one each", 0, 4, 4}, {"two shared", 2, 5, 2}, {"one shared", 1, 6, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(context.Background(), Options{Addr: addr, Method: "tandem.sample.v1.Ledger/GetBlock", Request: []byte(`{"height": 3}`),
				Connections: tc.connections})
			if err != nil {
				t.Fatal(err)
			}
			var conns []*Conn
			seen := map[any]bool{}
			for range tc.dials {
				cn, err := c.DialConn(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, cn)
				seen[cn.cc] = true
			}
			if len(seen) != tc.distinct {
				t.Errorf("%d dials over %d connections: %d distinct connections; want %d", tc.dials, tc.connections, len(seen), tc.distinct)
			}
			errs := make(chan string, len(conns)*20)
			done := make(chan struct{})
			for _, cn := range conns {
				go func() {
					defer func() { done <- struct{}{} }()
					for range 20 {
						if res := cn.Do(context.Background(), 0, time.Now().Add(5*time.Second)); res.Status != "" {
							errs <- res.Status
						}
					}
				}()
			}
			for range conns {
				<-done
			}
			close(errs)
			for s := range errs {
				t.Errorf("a call failed: %s", s)
			}
			last := conns[len(conns)-1]
			for _, cn := range conns[:len(conns)-1] {
				if err := cn.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
				cn.Close() // again: released once, not twice
			}
			if res := last.Do(context.Background(), 0, time.Now().Add(5*time.Second)); res.Status != "" {
				t.Errorf("the last Conn after the others closed: %s", res.Status)
			}
			if err := last.Close(); err != nil {
				t.Errorf("close the last: %v", err)
			}
			if s := last.cc.GetState(); s != connectivity.Shutdown {
				t.Errorf("after the last Conn closed its connection is %v; want Shutdown", s)
			}
		})
	}
}
