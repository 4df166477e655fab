package driver

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/record"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// received is one request a counting server received: what it was, when, and
// over which protocol.
type received struct {
	what string
	at   time.Time
}

// counter is a pair of loopback servers, HTTP (HTTP/1.1 and h2c) and gRPC
// (health, no reflection), that note every request in the order received.
type counter struct {
	mu   sync.Mutex
	seen []received
	http string // URL
	grpc string // host:port
}

func (c *counter) note(what string) {
	c.mu.Lock()
	c.seen = append(c.seen, received{what, time.Now()})
	c.mu.Unlock()
}

func (c *counter) got() []received {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]received(nil), c.seen...)
}

func newCounter(t *testing.T) *counter {
	c := &counter{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.note(fmt.Sprintf("HTTP/%d %s %s %s auth=%q ae=%q", r.ProtoMajor, r.Method, r.URL.RequestURI(), body,
			r.Header.Get("Authorization"), r.Header.Get("Accept-Encoding")))
		switch r.URL.Path {
		case "/rpc":
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":7,"result":1}`)
		case "/missing":
			http.NotFound(w, r)
		}
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	c.http = srv.URL
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		c.note(fmt.Sprintf("grpc %s %s tenant=%q", info.FullMethod, req.(*healthpb.HealthCheckRequest).GetService(), md.Get("x-tenant")))
		return h(ctx, req)
	}))
	hs := health.NewServer()
	hs.SetServingStatus("s1", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	c.grpc = ln.Addr().String()
	return c
}

// endpoints are the counter's endpoint for each protocol.
func (c *counter) endpoints() map[record.Protocol]string {
	return map[record.Protocol]string{record.HTTP1: c.http, record.H2: c.http, record.JSONRPC: c.http, record.GRPC: c.grpc}
}

// replayed is a recording of six exchanges, written in another order than
// their requests arrived (as answers end), and what the counter notes of
// each, in the order they arrived.
func replayed(t *testing.T) (*record.Index, []string) {
	t.Helper()
	ms := time.Millisecond
	check, _ := proto.Marshal(&healthpb.HealthCheckRequest{Service: "s1"})
	grpcBody := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(check)))
	grpcBody = append(grpcBody, check...)
	rpc := `{"jsonrpc":"2.0","id":7,"method":"get","params":[1]}`
	exs := []record.Exchange{
		{Offset: 2*time.Second + 150*ms, Protocol: record.HTTP1, Method: "POST", Path: "/b?q=2", Body: []byte("two"), BodySize: 3},
		{Offset: 2 * time.Second, Protocol: record.HTTP1, Method: "GET", Path: "/a?q=1",
			Headers: http.Header{"Authorization": {record.Marker}, "Accept-Encoding": {"gzip"}}, Redacted: []string{"header Authorization"}},
		{Offset: 2*time.Second + 100*ms, Protocol: record.H2, Method: "PUT", Path: "/h2", Body: []byte("x"), BodySize: 1},
		{Offset: 2*time.Second + 300*ms, Protocol: record.GRPC, Method: "POST", Path: "/grpc.health.v1.Health/Check", Body: grpcBody,
			BodySize: int64(len(grpcBody)), Headers: http.Header{"Content-Type": {"application/grpc"}, "X-Tenant": {"t1"}}},
		{Offset: 2*time.Second + 200*ms, Protocol: record.JSONRPC, Method: "POST", Path: "/rpc", Body: []byte(rpc), BodySize: int64(len(rpc)),
			Headers: http.Header{"Content-Type": {"application/json"}}},
		{Offset: 2*time.Second + 400*ms, Protocol: record.HTTP1, Method: "GET", Path: "/last", Headers: http.Header{"Authorization": {"Bearer kept"}}},
	}
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	w, err := record.Create(path, record.Header{Upstream: "http://127.0.0.1:1", Start: time.Now(), MaxBody: 1024})
	if err != nil {
		t.Fatal(err)
	}
	for i := range exs {
		if err := w.Write(&exs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	idx, err := record.OpenIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	return idx, []string{
		`HTTP/1 GET /a?q=1  auth="" ae=""`, // redacted, and no Accept-Encoding
		`HTTP/2 PUT /h2 x auth="" ae=""`,
		`HTTP/1 POST /b?q=2 two auth="" ae=""`,
		`HTTP/1 POST /rpc ` + rpc + ` auth="" ae=""`,
		`grpc /grpc.health.v1.Health/Check s1 tenant=["t1"]`,
		`HTTP/1 GET /last  auth="Bearer kept" ae=""`,
	}
}

// offsets are the replayed recording's arrivals from its first, in order.
var offsets = []time.Duration{0, 100 * time.Millisecond, 150 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond}

// TestReplayLoadOnTimetable: an open loop on a recording's timetable sends
// exactly the recorded requests, in the order they arrived, none before
// its offset ÷ speed from the start of the run.
func TestReplayLoadOnTimetable(t *testing.T) {
	for _, speed := range []float64{1, 4} {
		t.Run(fmt.Sprint("speed ", speed), func(t *testing.T) {
			c := newCounter(t)
			idx, want := replayed(t)
			rl, err := NewReplayLoad(idx, c.endpoints(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard only
			defer cancel()
			before := time.Now()
			s, err := load.Open{Schedule: load.Recorded{Arrivals: idx, Speed: speed}, Connections: 1}.Run(ctx, rl)
			if err != nil {
				t.Fatal(err)
			}
			got := c.got()
			if s.Requests != int64(len(want)) || s.OK != s.Requests || s.Dropped != 0 || len(got) != len(want) {
				t.Fatalf("%d requests, %d ok, %d dropped, %d received; want %d, all ok: %v", s.Requests, s.OK, s.Dropped, len(got), len(want), s.Errors)
			}
			for k, g := range got {
				if g.what != want[k] {
					t.Errorf("request %d: %s; want %s", k, g.what, want[k])
				}
				due := before.Add(time.Duration(float64(offsets[k]) / speed))
				if g.at.Before(due) {
					t.Errorf("request %d received %v before its time (offset %v ÷ %g)", k, due.Sub(g.at), offsets[k], speed)
				}
			}
		})
	}
}

// TestReplayLoadLoops: a looped timetable sends the recording again and
// again, request k exchange k mod 6, every arrival before the run's end;
// a closed loop sends the exchanges in the same order, as fast as it goes.
func TestReplayLoadLoops(t *testing.T) {
	c := newCounter(t)
	idx, want := replayed(t)
	rl, err := NewReplayLoad(idx, c.endpoints(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// a pass is 400 ms + 80 ms (one mean gap); at speed 4, 120 ms: in
	// 300 ms, arrivals at 0 25 37.5 50 75 100 | 120 … 220 | 240 … 290
	sch := load.Recorded{Arrivals: idx, Speed: 4, Loop: true}
	arrivals := 0
	for k := int64(0); ; k++ {
		if off, ok := sch.Offset(k); !ok || off >= 300*time.Millisecond {
			break
		}
		arrivals++
	}
	if arrivals != 16 {
		t.Fatalf("the timetable has %d arrivals in 300 ms; want 16", arrivals)
	}
	s, err := load.Open{Schedule: sch, Connections: 1, Duration: 300 * time.Millisecond}.Run(ctx, rl)
	if err != nil {
		t.Fatal(err)
	}
	got := c.got()
	if s.Requests != int64(arrivals) || s.OK != s.Requests || s.Dropped != 0 || len(got) != arrivals {
		t.Fatalf("%d requests, %d ok, %d dropped, %d received; want %d, all ok", s.Requests, s.OK, s.Dropped, len(got), arrivals)
	}
	for k, g := range got {
		if g.what != want[k%len(want)] {
			t.Errorf("request %d: %s; want %s", k, g.what, want[k%len(want)])
		}
	}
	// closed: two passes, in order
	before := len(got)
	s, err = load.Closed{Concurrency: 1, Requests: 12}.Run(ctx, rl)
	if err != nil || s.Requests != 12 || s.OK != 12 {
		t.Fatalf("closed: %v, %d requests, %d ok; want 12", err, s.Requests, s.OK)
	}
	got = c.got()[before:]
	for k, g := range got {
		if g.what != want[k%len(want)] {
			t.Errorf("closed request %d: %s; want %s", k, g.what, want[k%len(want)])
		}
	}
}

// TestReplayLoadStatuses: what cannot be sent as recorded is not sent; a
// target's failures are statuses.
func TestReplayLoadStatuses(t *testing.T) {
	c := newCounter(t)
	exs := []record.Exchange{
		{Protocol: record.HTTP1, Method: "POST", Path: "/cut", Body: []byte("part"), BodySize: 100},
		{Offset: 1, Protocol: record.HTTP1, Method: "GET", Path: "/missing"},
		{Offset: 2, Protocol: record.JSONRPC, Method: "POST", Path: "/rpc", Body: []byte(`{"jsonrpc":"2.0","id":8,"method":"m"}`), BodySize: 37},
		{Offset: 3, Protocol: record.GRPC, Method: "POST", Path: "/grpc.health.v1.Health/Check", Body: []byte{1, 0, 0, 0, 0}, BodySize: 5},
	}
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	w, err := record.Create(path, record.Header{Upstream: "http://127.0.0.1:1", Start: time.Now(), MaxBody: 1024})
	if err != nil {
		t.Fatal(err)
	}
	for i := range exs {
		w.Write(&exs[i])
	}
	w.Close()
	idx, err := record.OpenIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if _, err := NewReplayLoad(idx, map[record.Protocol]string{record.HTTP1: c.http}, Options{}); err == nil || !strings.Contains(err.Error(), "jsonrpc") {
		t.Errorf("a protocol without an endpoint: %v", err)
	}
	rl, err := NewReplayLoad(idx, c.endpoints(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cn, err := rl.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	want := []string{load.StatusRequest, "http:404", "protocol", load.StatusRequest} // the id answered is 7, not 8; a compressed message
	for i, st := range want {
		if res := cn.Do(context.Background(), uint64(i), time.Now().Add(10*time.Second)); res.Status != st {
			t.Errorf("exchange %d: status %q; want %q", i, res.Status, st)
		}
	}
	if got := c.got(); len(got) != 2 {
		t.Errorf("the server received %d requests; want 2 (not the cut one, not the compressed one)", len(got))
	}
}
