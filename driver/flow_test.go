package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"github.com/tandem-bench/tandem/study"
)

// kvServer is a loopback key-value store that checks a flow's users: POST
// /put/N makes a key of its own and answers it ({"key": …} and the header
// X-Key), kept with the client's address; GET /get/KEY answers 200 only to
// the client that wrote KEY (409 to another, 404 for none). With lossy,
// put N answers no key when N mod 4 = 3 and 500 when N mod 4 = 1.
type kvServer struct {
	srv   *httptest.Server
	lossy bool
	mu    sync.Mutex
	next  int
	owner map[string]string
	puts  int
	gets  map[int]int // by status
}

func newKVServer(t *testing.T, lossy bool) *kvServer {
	kv := &kvServer{lossy: lossy, owner: map[string]string{}, gets: map[int]int{}}
	kv.srv = httptest.NewServer(http.HandlerFunc(kv.serve))
	t.Cleanup(kv.srv.Close)
	return kv
}

func (kv *kvServer) serve(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	kv.mu.Lock()
	defer kv.mu.Unlock()
	route, arg, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch {
	case route == "put" && r.Method == http.MethodPost:
		n, err := strconv.Atoi(arg)
		if err != nil {
			http.Error(w, "bad number", http.StatusBadRequest)
			return
		}
		kv.puts++
		switch {
		case kv.lossy && n%4 == 3:
			fmt.Fprintf(w, `{"n":%d}`, n)
			return
		case kv.lossy && n%4 == 1:
			http.Error(w, "no room", http.StatusInternalServerError)
			return
		}
		kv.next++
		key := fmt.Sprintf("k%d", kv.next)
		kv.owner[key] = r.RemoteAddr
		w.Header().Set("X-Key", key)
		fmt.Fprintf(w, `{"n":%d,"key":%q}`, n, key)
	case route == "get":
		status := http.StatusOK
		switch owner, ok := kv.owner[arg]; {
		case !ok:
			status = http.StatusNotFound
		case owner != r.RemoteAddr:
			status = http.StatusConflict
		}
		kv.gets[status]++
		w.WriteHeader(status)
	default:
		http.Error(w, "no such route", http.StatusNotFound)
	}
}

// flowOf builds the Flow of the study's first scenario at endpoint.
func flowOf(t *testing.T, s *study.Study, endpoint string) *Flow {
	t.Helper()
	sc := &s.Scenarios[0]
	var steps []FlowStep
	for k, st := range sc.Flow {
		call, err := s.StepCall(sc, k)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := NewFlowStep(st, call, caller(t, s, call, endpoint))
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, fs)
	}
	f, err := NewFlow(steps)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

const kvCalls = `  put:
    http: {method: POST, path: "/put/${n}", body: x}
    values: {n: {seq: {}}}
  get: {http: {path: "/get/${key}"}}
`

// A flow put → get: every user reads back the key it wrote, captured from
// the answer's JSON or its header (in any case), never another user's
// (the server checks by the connection that wrote it); each step is
// recorded apart, the run's requests are the passes.
func TestFlowPutGet(t *testing.T) {
	for _, capture := range []string{"key", "header:x-key"} {
		t.Run(capture, func(t *testing.T) {
			s := studyOf(t, kvCalls, fmt.Sprintf(`  - name: wr
    flow: [{call: put, capture: {key: %q}}, {call: get}]
    load: {concurrency: 4}
`, capture))
			kv := newKVServer(t, false)
			const n = 400
			sample, err := load.Closed{Concurrency: 4, Requests: n}.Run(context.Background(), flowOf(t, s, kv.srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			if sample.OK != n || len(sample.Parts) != 2 || sample.Parts[0].OK != n || sample.Parts[1].OK != n {
				t.Fatalf("%d passes ok, parts ok %v, errors %v; want %d each", sample.OK, partOKs(sample), sample.Errors, n)
			}
			kv.mu.Lock()
			defer kv.mu.Unlock()
			if kv.puts != n || kv.gets[http.StatusOK] != n || len(kv.gets) != 1 {
				t.Errorf("server: %d puts, gets by status %v; want %d puts and %d gets of the writer's own key", kv.puts, kv.gets, n, n)
			}
			if p := sample.Parts[1].LatencyNs; p.P50 <= 0 || sample.LatencyNs.P50 < p.Min {
				t.Errorf("get's latency %+v, the pass's %+v", p, sample.LatencyNs)
			}
		})
	}
}

// A capture that finds nothing fails its step and the rest of the pass as
// capture failures; a step that fails ends the pass, the rest skipped;
// every one is counted, by step and for the flow, and nothing is sent
// after either.
func TestFlowFailures(t *testing.T) {
	s := studyOf(t, kvCalls, `  - name: wr
    flow: [{call: put, capture: {key: key}}, {call: get}]
    load: {concurrency: 3}
`)
	kv := newKVServer(t, true)
	const n = 400 // put N: N mod 4 = 3 answers no key, 1 fails
	sample, err := load.Closed{Concurrency: 3, Requests: n}.Run(context.Background(), flowOf(t, s, kv.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	put, get := sample.Parts[0], sample.Parts[1]
	want := map[string]int64{StatusCapture: n / 4, "http:500": n / 4}
	if sample.Requests != n || sample.OK != n/2 || !maps.Equal(sample.Errors, want) {
		t.Errorf("flow: %d passes, %d ok, errors %v; want %d, %d, %v", sample.Requests, sample.OK, sample.Errors, n, n/2, want)
	}
	if put.Requests != n || put.OK != n/2 || !maps.Equal(put.Errors, want) {
		t.Errorf("put: %d, %d ok, errors %v; want %d, %d, %v", put.Requests, put.OK, put.Errors, n, n/2, want)
	}
	wantGet := map[string]int64{StatusCapture: n / 4, StatusSkipped: n / 4}
	if get.Requests != n || get.OK != n/2 || !maps.Equal(get.Errors, wantGet) {
		t.Errorf("get: %d, %d ok, errors %v; want %d, %d, %v", get.Requests, get.OK, get.Errors, n, n/2, wantGet)
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if kv.puts != n || kv.gets[http.StatusOK] != n/2 || len(kv.gets) != 1 {
		t.Errorf("server: %d puts, gets %v; want %d, %d ok", kv.puts, kv.gets, n, n/2)
	}
}

// heightsLedger answers GetBlock with the block above the one asked for,
// and records each height asked.
type heightsLedger struct {
	ledgerpb.UnimplementedLedgerServer
	mu      sync.Mutex
	heights []uint64
}

func (l *heightsLedger) GetBlock(_ context.Context, req *ledgerpb.BlockRequest) (*ledgerpb.Block, error) {
	l.mu.Lock()
	l.heights = append(l.heights, req.GetHeight())
	l.mu.Unlock()
	return &ledgerpb.Block{Height: req.GetHeight() + 1}, nil
}

// A gRPC flow captures a field of the answer (a uint64, which protobuf's
// JSON writes as a string) into the next step's request: the server is
// asked h, then h + 1, then h + 2, on one channel per user.
func TestFlowGRPC(t *testing.T) {
	s := studyOf(t, `  first:
    grpc: {method: tandem.sample.v1.Ledger/GetBlock, request: {height: "${h}"}}
    values: {h: {seq: {from: 1000}}}
  next: {grpc: {method: tandem.sample.v1.Ledger/GetBlock, request: {height: "${up}"}}}
`, `  - name: climb
    flow:
      - {call: first, capture: {up: height}}
      - {call: next, capture: {up: height}}
      - {call: next}
    load: {concurrency: 2}
`)
	l := &heightsLedger{}
	addr, ln := grpcLedger(t, l)
	const n = 100
	sample, err := load.Closed{Concurrency: 2, Requests: n}.Run(context.Background(), flowOf(t, s, addr))
	if err != nil || sample.OK != n {
		t.Fatalf("%d ok, errors %v, %v", sample.OK, sample.Errors, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	asked, want := map[uint64]int{}, map[uint64]int{}
	for _, h := range l.heights {
		asked[h]++
	}
	for i := range uint64(n) { // pass i asks 1000+i, then the block above, then the one above that
		want[1000+i]++
		want[1001+i]++
		want[1002+i]++
	}
	if !maps.Equal(asked, want) {
		t.Errorf("heights asked %v; want %v", asked, want)
	}
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if ln.n > 2+1 {
		t.Errorf("%d connections for 2 users", ln.n)
	}
}

// A JSON-RPC step's captures read its result.
func TestFlowJSONRPC(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage
			Method string
			Params []any
		}
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		defer mu.Unlock()
		if req.Method == "login" {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"token":"t-%v"}}`, req.ID, req.Params[0])
			return
		}
		got[fmt.Sprint(req.Params...)]++
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":true}`, req.ID)
	}))
	defer srv.Close()
	s := studyOf(t, `  login:
    jsonrpc: {method: login, params: ["${u}"]}
    values: {u: {seq: {}}}
  whoami: {jsonrpc: {method: whoami, params: ["${token}"]}}
`, `  - name: session
    flow: [{call: login, capture: {token: token}}, {call: whoami}]
    load: {concurrency: 2}
`)
	sample, err := load.Closed{Concurrency: 2, Requests: 50}.Run(context.Background(), flowOf(t, s, srv.URL))
	if err != nil || sample.OK != 50 {
		t.Fatalf("%d ok, errors %v, %v", sample.OK, sample.Errors, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range 50 {
		if got[fmt.Sprintf("t-%d", i)] != 1 {
			t.Fatalf("token of pass %d sent %d times (%v)", i, got[fmt.Sprintf("t-%d", i)], got)
		}
	}
}
