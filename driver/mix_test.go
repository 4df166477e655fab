package driver

import (
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/values"
	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"
)

// mixServer is a loopback HTTP server that records, for every request,
// its number and its route: GET /r/N (a read) or POST /w/N (a write); and
// counts the TCP connections it accepted.
type mixServer struct {
	srv   *httptest.Server
	mu    sync.Mutex
	seen  map[uint64]string
	conns int
}

func newMixServer(t *testing.T) *mixServer {
	m := &mixServer{seen: map[uint64]string{}}
	m.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		route, num, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil || route != "r" && route != "w" || (route == "w") != (r.Method == http.MethodPost) {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if _, dup := m.seen[n]; dup {
			http.Error(w, "request number sent twice", http.StatusConflict)
			return
		}
		m.seen[n] = route
		w.Write([]byte("ok"))
	}))
	m.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			m.mu.Lock()
			m.conns++
			m.mu.Unlock()
		}
	}
	m.srv.Start()
	t.Cleanup(m.srv.Close)
	return m
}

// take returns what the server saw and forgets it.
func (m *mixServer) take() (map[uint64]string, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen, conns := m.seen, m.conns
	m.seen, m.conns = map[uint64]string{}, 0
	return seen, conns
}

// studyOf parses a study whose target's endpoints are placeholders (the
// tests give the driver the real ones), with the calls and scenarios given.
func studyOf(t *testing.T, calls, scenarios string) *study.Study {
	t.Helper()
	src := "version: 1\nname: m\nseed: 7\ntargets: [{name: a, endpoints: {http: \"http://127.0.0.1:1/\", grpc: \"127.0.0.1:1\"}}]\ncalls:\n" +
		calls + "scenarios:\n" + scenarios
	s, err := study.Parse("mix.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// caller builds a call's Caller at endpoint, with a fresh set of its
// values (when it has any).
func caller(t *testing.T, s *study.Study, call *study.Call, endpoint string) Caller {
	t.Helper()
	o := Options{Timeout: 10 * time.Second}
	if call.HasValues() {
		set, err := values.Open(context.Background(), s.Seed, call.ValueSpecs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { set.Close() })
		o.Values = NewValues(set)
	}
	c, err := New(context.Background(), call, endpoint, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mixOf builds the Mix of the study's first scenario at endpoint.
func mixOf(t *testing.T, s *study.Study, endpoint string) *Mix {
	t.Helper()
	sc := &s.Scenarios[0]
	var calls []MixCall
	for _, mc := range sc.Calls {
		calls = append(calls, MixCall{Name: mc.Call, Weight: mc.Weight, Caller: caller(t, s, s.Calls[mc.Call], endpoint)})
	}
	m, err := NewMix(s.Seed, sc.Name, calls)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const rwCalls = `  get:
    http: {path: "/r/${n}"}
    values: {n: {seq: {}}}
  put:
    http: {method: POST, path: "/w/${n}", body: x}
    values: {n: {seq: {}}}
`

// A 90/10 mix over 10,000 requests: the server sees each request's call
// as the mix picked it (so within a percentage point of 90/10), on the
// worker engine and the event loop alike, every call over one keep-alive
// connection per client; the run's parts are the calls, and add up to it.
// Two targets are sent the same sequence, whose digest the mix gives.
func TestMixSequence(t *testing.T) {
	s := studyOf(t, rwCalls, "  - {name: rw, calls: [{call: get, weight: 90}, {call: put, weight: 10}], load: {concurrency: 4}}\n")
	const n = 10_000
	var sequences [][]string
	var digests []values.Digest
	for _, engine := range engines() {
		for target := range 2 {
			srv := newMixServer(t)
			m := mixOf(t, s, srv.srv.URL)
			sample, err := load.Closed{Concurrency: 4, Requests: n, Engine: engine}.Run(context.Background(), m)
			if err != nil {
				t.Fatal(err)
			}
			seen, conns := srv.take()
			if sample.OK != n || len(seen) != n {
				t.Fatalf("%s, target %d: %d ok, server saw %d; want %d (errors %v)", engine, target, sample.OK, len(seen), n, sample.Errors)
			}
			if conns != 4 {
				t.Errorf("%s: the server accepted %d connections; want 4, one per client carrying both calls", engine, conns)
			}
			seq := make([]string, n)
			writes := 0
			for i := range uint64(n) {
				seq[i] = seen[i]
				want := []string{"r", "w"}[m.Pick(i)]
				if seen[i] != want {
					t.Fatalf("%s: request %d went to %q; the mix picked %q", engine, i, seen[i], want)
				}
				if seen[i] == "w" {
					writes++
				}
			}
			if share := float64(writes) / n; math.Abs(share-0.10) > 0.01 {
				t.Errorf("%s: writes are %.4f of the requests; want 0.10 ± 0.01", engine, share)
			}
			if len(sample.Parts) != 2 || sample.Parts[0].OK != int64(n-writes) || sample.Parts[1].OK != int64(writes) {
				t.Errorf("%s: parts %d, ok %v; want reads %d, writes %d", engine, len(sample.Parts), partOKs(sample), n-writes, writes)
			}
			sequences = append(sequences, seq)
			digests = append(digests, m.Sequence())
		}
	}
	for k := 1; k < len(sequences); k++ {
		if !slices.Equal(sequences[k], sequences[0]) || digests[k] != digests[0] {
			t.Fatalf("run %d's sequence (digest %v) is not run 0's (%v)", k, digests[k], digests[0])
		}
	}
	p, _ := values.NewPicker(7, "mix/rw", []float64{90, 10})
	if want := p.Digest(n); digests[0] != want {
		t.Errorf("digest %v; want the picker's over %d requests, %v", digests[0], n, want)
	}
}

func partOKs(s results.Sample) []int64 {
	var oks []int64
	for _, p := range s.Parts {
		oks = append(oks, p.OK)
	}
	return oks
}

// A mix of HTTP/2 calls shares one HTTP/2 connection per client.
func TestMixHTTP2(t *testing.T) {
	s := studyOf(t, `  get:
    http: {path: "/r/${n}", http2: true}
    values: {n: {seq: {}}}
  put:
    http: {method: POST, path: "/w/${n}", body: x, http2: true}
    values: {n: {seq: {}}}
`, "  - {name: rw, calls: [{call: get, weight: 3}, {call: put}], load: {concurrency: 2}}\n")
	srv := newMixServer(t)
	srv.srv.Close()
	srv.srv = httptest.NewUnstartedServer(srv.srv.Config.Handler)
	srv.srv.Config.Protocols = new(http.Protocols)
	srv.srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			srv.mu.Lock()
			srv.conns++
			srv.mu.Unlock()
		}
	}
	srv.srv.Start()
	defer srv.srv.Close()
	m := mixOf(t, s, srv.srv.URL)
	sample, err := load.Closed{Concurrency: 2, Requests: 400}.Run(context.Background(), m)
	if err != nil || sample.OK != 400 {
		t.Fatalf("%d ok, errors %v, %v", sample.OK, sample.Errors, err)
	}
	if _, conns := srv.take(); conns != 2 {
		t.Errorf("%d connections; want 2", conns)
	}
}

// countingLedger is a gRPC Ledger server that counts its calls by method
// and the connections it accepted.
type countingLedger struct {
	ledgerpb.UnimplementedLedgerServer
	mu           sync.Mutex
	pings, block int
}

func (l *countingLedger) Ping(context.Context, *ledgerpb.PingRequest) (*ledgerpb.PingResponse, error) {
	l.mu.Lock()
	l.pings++
	l.mu.Unlock()
	return &ledgerpb.PingResponse{}, nil
}

func (l *countingLedger) GetBlock(_ context.Context, req *ledgerpb.BlockRequest) (*ledgerpb.Block, error) {
	l.mu.Lock()
	l.block++
	l.mu.Unlock()
	return &ledgerpb.Block{Height: req.GetHeight() + 1}, nil
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	mu sync.Mutex
	n  int
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.n++
		l.mu.Unlock()
	}
	return c, err
}

func grpcLedger(t *testing.T, l ledgerpb.LedgerServer) (string, *countingListener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	srv := grpc.NewServer()
	ledgerpb.RegisterLedgerServer(srv, l)
	reflection.Register(srv)
	go srv.Serve(cl)
	t.Cleanup(srv.Stop)
	return ln.Addr().String(), cl
}

// A gRPC mix sends its methods over one channel per client: the server
// answers each call as picked and accepts one connection per client.
func TestMixGRPC(t *testing.T) {
	s := studyOf(t, `  ping: {grpc: {method: tandem.sample.v1.Ledger/Ping}}
  block: {grpc: {method: tandem.sample.v1.Ledger/GetBlock, request: {height: 3}}}
`, "  - {name: pb, calls: [{call: ping, weight: 1}, {call: block, weight: 3}], load: {concurrency: 2}}\n")
	l := &countingLedger{}
	addr, ln := grpcLedger(t, l)
	m := mixOf(t, s, addr)
	const n = 800
	sample, err := load.Closed{Concurrency: 2, Requests: n}.Run(context.Background(), m)
	if err != nil || sample.OK != n {
		t.Fatalf("%d ok, errors %v, %v", sample.OK, sample.Errors, err)
	}
	pings := 0
	for i := range uint64(n) {
		if m.Pick(i) == 0 {
			pings++
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if l.pings != pings || l.block != n-pings || sample.Parts[0].OK != int64(pings) {
		t.Errorf("server: %d pings, %d blocks; the mix picked %d pings (parts %v)", l.pings, l.block, pings, partOKs(sample))
	}
	// one connection per client, and one more for reflection's first resolve at most
	if ln.n > 2+1 {
		t.Errorf("%d connections for 2 clients", ln.n)
	}
}

// A mix picks by its own stream: a scenario of another name picks other
// calls; and it is never asked once.
func TestMixStreams(t *testing.T) {
	s := studyOf(t, rwCalls, `  - {name: rw, calls: [{call: get}, {call: put}], load: {concurrency: 1}}
  - {name: other, calls: [{call: get}, {call: put}], load: {concurrency: 1}}
`)
	a := mixOf(t, s, "http://127.0.0.1:1/")
	s.Scenarios[0], s.Scenarios[1] = s.Scenarios[1], s.Scenarios[0]
	b := mixOf(t, s, "http://127.0.0.1:1/")
	differ := 0
	for i := range uint64(100) {
		if a.Pick(i) != b.Pick(i) {
			differ++
		}
	}
	if differ == 0 {
		t.Error("two scenarios' mixes pick the same 100 calls")
	}
	if _, _, err := a.Ask(context.Background()); err == nil {
		t.Error("a mix is asked once")
	}
}
