package driver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/values"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
)

// valuesCall parses a study of one call with values and returns the call
// and a fresh Values of it (seed 7) for every run asked; files are written
// beside the study first.
func valuesCall(t *testing.T, call string, files map[string]string) (*study.Call, func() *Values) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := "version: 1\nname: v\nseed: 7\ntargets: [{name: a, endpoints: {http: \"http://127.0.0.1:1/\", grpc: \"127.0.0.1:1\", ws: \"ws://127.0.0.1:1/\", tcp: \"127.0.0.1:1\"}}]\ncalls:\n  c:\n" + call
	file := filepath.Join(dir, "study.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Calls["c"]
	return c, func() *Values {
		set, err := values.Open(context.Background(), s.Seed, c.ValueSpecs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { set.Close() })
		return NewValues(set)
	}
}

// users is a CSV feeder of 100 rows: user u0 … u99, id 1000 … 1099.
func users() string {
	var b strings.Builder
	b.WriteString("name,id\n")
	for i := range 100 {
		fmt.Fprintf(&b, "u%d,%d\n", i, 1000+i)
	}
	return b.String()
}

// recorder is a loopback HTTP server that records each request's target,
// X-N header and body, in the order they came.
type recorder struct {
	mu   sync.Mutex
	got  []string
	srv  *httptest.Server
	rpcs bool // answer as JSON-RPC, echoing the id
	h2   atomic.Int64
}

func newRecorder(t *testing.T, rpc bool) *recorder {
	rec := &recorder{rpcs: rpc}
	rec.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.ProtoMajor == 2 {
			rec.h2.Add(1)
		}
		rec.mu.Lock()
		rec.got = append(rec.got, r.URL.RequestURI()+" "+r.Header.Get("X-N")+" "+string(body))
		rec.mu.Unlock()
		if rec.rpcs {
			var req struct{ ID json.RawMessage }
			json.Unmarshal(body, &req)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":true}`, req.ID)
		}
	}))
	rec.srv.Config.Protocols = new(http.Protocols)
	rec.srv.Config.Protocols.SetHTTP1(true)
	rec.srv.Config.Protocols.SetUnencryptedHTTP2(true) // h2c too, for calls with http2
	rec.srv.Start()
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorder) take() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	got := rec.got
	rec.got = nil
	return got
}

// engines are the load engines an HTTP call runs on here: the worker
// engine, and the event loop where it runs.
func engines() []string {
	if runtime.GOOS == "linux" {
		return []string{load.EngineWorkers, load.EngineLoop}
	}
	return []string{load.EngineWorkers}
}

// An HTTP call's values reach the server in its path (percent-encoded),
// a header and its JSON body, request i's the same on the event loop and
// on the worker engine: one client sends them in the order of their
// numbers, three send the same requests in another order. A random feeder
// of 100 rows gives ≥ 90 of them in 300 requests; the count of request
// numbers rendered is the run's.
func TestHTTPValues(t *testing.T) {
	call, fresh := valuesCall(t, `    http:
      method: POST
      path: "/u/${users.name}/${slash}?k=${k}"
      headers: {X-N: "${n}"}
      body: {n: "${n}", id: "${users.id}", k: "${k}"}
    values:
      n: {seq: {from: 1}}
      k: {zipf: {n: 50, s: 1.1}}
      slash: {choice: ["a/b"]}
      users: {csv: users.csv, order: random}
`, map[string]string{"users.csv": users()})
	rec := newRecorder(t, false)
	const n = 300
	var first []string
	h2 := *call // the same call over HTTP/2 (h2c), on the worker engine
	h2.HTTP = &study.HTTPCall{}
	*h2.HTTP = *call.HTTP
	h2.HTTP.HTTP2 = true
	for _, variant := range append(engines(), "h2c") {
		for _, clients := range []int{1, 3} {
			vals := fresh()
			engine, cl := variant, call
			if variant == "h2c" {
				engine, cl = load.EngineWorkers, &h2
			}
			c, err := New(context.Background(), cl, rec.srv.URL+"/", Options{Timeout: 10 * time.Second, Values: vals})
			if err != nil {
				t.Fatal(err)
			}
			s, err := load.Closed{Concurrency: clients, Requests: n, Engine: engine}.Run(context.Background(), c)
			if err != nil || s.OK != n {
				t.Fatalf("%s, %d clients: %d of %d ok (%v), %v", engine, clients, s.OK, n, s.Errors, err)
			}
			got := rec.take()
			if h2s := rec.h2.Swap(0); (h2s == n) != (variant == "h2c") {
				t.Errorf("%s: %d of %d requests over HTTP/2", variant, h2s, n)
			}
			engine = variant
			if vals.Requests() != n {
				t.Errorf("%s: %d request numbers rendered; want %d", engine, vals.Requests(), n)
			}
			if clients > 1 { // the same requests, in the order the clients took their numbers
				got = slices.Sorted(slices.Values(got))
				want := slices.Sorted(slices.Values(first))
				if !slices.Equal(got, want) {
					t.Errorf("%s, %d clients: the server got other requests than one client sends", engine, clients)
				}
				continue
			}
			if first == nil {
				first = got
				checkHTTPValues(t, got)
				continue
			}
			if !slices.Equal(got, first) {
				t.Errorf("%s: request sequence differs from the first engine's:\n%q\n%q", engine, got[:3], first[:3])
			}
		}
	}
}

// checkHTTPValues checks one client's 300 requests: request i has n = i+1
// in its header and body, its user's id matches its name, a value's '/'
// is escaped in the path, and the random feeder gave ≥ 90 users.
func checkHTTPValues(t *testing.T, got []string) {
	t.Helper()
	names := map[string]bool{}
	for i, g := range got {
		target, rest, _ := strings.Cut(g, " ")
		header, body, _ := strings.Cut(rest, " ")
		var b struct {
			N, K int64
			ID   string
		}
		if err := json.Unmarshal([]byte(body), &b); err != nil {
			t.Fatalf("request %d: body %q: %v", i, body, err)
		}
		if header != strconv.Itoa(i+1) || b.N != int64(i+1) || b.K < 0 || b.K >= 50 {
			t.Fatalf("request %d: header %q, body %q; want n = %d, 0 ≤ k < 50", i, header, body, i+1)
		}
		user, ok := strings.CutPrefix(target, "/u/")
		name, tail, _ := strings.Cut(user, "/")
		idx, err := strconv.Atoi(strings.TrimPrefix(name, "u"))
		if !ok || err != nil || b.ID != strconv.Itoa(1000+idx) || !strings.HasPrefix(tail, "a%2Fb?k="+strconv.FormatInt(b.K, 10)) {
			t.Fatalf("request %d: %q; want /u/uI/a%%2Fb?k=K with id 1000+I", i, g)
		}
		names[name] = true
	}
	if len(names) < 90 {
		t.Errorf("%d distinct users of 100 in %d requests; want ≥ 90", len(names), len(got))
	}
}

// A JSON-RPC call's params keep each value's type, on both engines: a
// generated number is a JSON number, a CSV cell a string, a JSONL number
// a number.
func TestJSONRPCValuesTyped(t *testing.T) {
	call, fresh := valuesCall(t, `    jsonrpc:
      method: get
      params: ["${n}", "${users.id}", "${rows.h}", "n=${n}"]
    values:
      n: {seq: {}}
      users: {csv: users.csv}
      rows: {jsonl: rows.jsonl}
`, map[string]string{"users.csv": users(), "rows.jsonl": "{\"h\": 5}\n{\"h\": 6.5}\n"})
	rec := newRecorder(t, true)
	for _, engine := range engines() {
		c, err := New(context.Background(), call, rec.srv.URL+"/", Options{Timeout: 10 * time.Second, Values: fresh()})
		if err != nil {
			t.Fatal(err)
		}
		if s, err := (load.Closed{Concurrency: 1, Requests: 4, Engine: engine}).Run(context.Background(), c); err != nil || s.OK != 4 {
			t.Fatalf("%s: %d of 4 ok (%v), %v", engine, s.OK, s.Errors, err)
		}
		for i, g := range rec.take() {
			_, body, _ := strings.Cut(strings.SplitN(g, " ", 2)[1], " ")
			d := json.NewDecoder(strings.NewReader(body))
			d.UseNumber()
			var req struct{ Params []any }
			if err := d.Decode(&req); err != nil {
				t.Fatalf("%s: request %d: %q: %v", engine, i, body, err)
			}
			want := []any{json.Number(strconv.Itoa(i)), strconv.Itoa(1000 + i), json.Number([]string{"5", "6.5"}[i%2]), "n=" + strconv.Itoa(i)}
			if fmt.Sprintf("%#v", req.Params) != fmt.Sprintf("%#v", want) {
				t.Errorf("%s: request %d: params %#v; want %#v", engine, i, req.Params, want)
			}
		}
	}
}

// heightLedger is a gRPC Ledger server that records each GetBlock's height and
// x-n metadata.
type heightLedger struct {
	ledgerpb.UnimplementedLedgerServer
	mu  sync.Mutex
	got []string
}

func (l *heightLedger) GetBlock(ctx context.Context, req *ledgerpb.BlockRequest) (*ledgerpb.Block, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	l.mu.Lock()
	l.got = append(l.got, fmt.Sprintf("%d %s %s %s", req.GetHeight(), strings.Join(md.Get("x-n"), ","), strings.Join(md.Get("x-fixed"), ","),
		strings.Join(md.Get("x-b-bin"), ",")))
	l.mu.Unlock()
	return &ledgerpb.Block{Height: req.GetHeight()}, nil
}

// A gRPC call's request and metadata take each request's values: the
// server gets request i's height (a Zipf key, as a protobuf uint64) and
// its number, in order, with the reused message reset between requests;
// the event loop sends the same requests as the worker engine (grpc-go),
// and with three clients the same set.
func TestGRPCValues(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	l := &heightLedger{}
	ledgerpb.RegisterLedgerServer(srv, l)
	reflection.Register(srv)
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	call, fresh := valuesCall(t, `    grpc:
      method: tandem.sample.v1.Ledger/GetBlock
      request: {height: "${h}"}
      metadata: {x-n: "${n}", x-fixed: "f", x-b-bin: "b${n}"}
    values:
      h: {zipf: {n: 2000, s: 1.1}}
      n: {seq: {}}
`, nil)
	const n = 200
	var first []string
	for _, engine := range engines() {
		for _, clients := range []int{1, 3} {
			vals := fresh()
			c, err := New(context.Background(), call, ln.Addr().String(), Options{Timeout: 10 * time.Second, Values: vals})
			if err != nil {
				t.Fatal(err)
			}
			s, err := (load.Closed{Concurrency: clients, Requests: n, Engine: engine}).Run(context.Background(), c)
			if err != nil || s.OK != n || s.Engine != engine {
				t.Fatalf("%s, %d clients: %d of %d ok (%v) on %s, %v", engine, clients, s.OK, n, s.Errors, s.Engine, err)
			}
			l.mu.Lock()
			got := l.got
			l.got = nil
			l.mu.Unlock()
			switch {
			case first == nil:
				first = got
				checkGRPCValues(t, call, vals, got)
			case clients == 1 && !slices.Equal(got, first):
				t.Errorf("%s: request sequence differs from the first engine's:\n%q\n%q", engine, got[:3], first[:3])
			case clients > 1 && !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(first))):
				t.Errorf("%s, %d clients: the server got other requests than one client sends", engine, clients)
			}
		}
	}
}

// checkGRPCValues checks one client's requests against what the call's
// own templates render for each: the height as a protobuf uint64, the
// number in the metadata beside the fixed value, and in binary metadata
// (base64 on the wire, as grpc-go sends it).
func checkGRPCValues(t *testing.T, call *study.Call, vals *Values, got []string) {
	t.Helper()
	resolved, _, _ := call.ResolveEnv(os.LookupEnv)
	tm, err := resolved.Compile(vals.Set())
	if err != nil {
		t.Fatal(err)
	}
	r := vals.Set().NewRenderer()
	heights := map[string]bool{}
	for i, g := range got {
		js, _ := tm.Body.Append(nil, r, uint64(i), time.Time{})
		var req struct{ Height uint64 }
		json.Unmarshal(js, &req)
		if want := fmt.Sprintf("%d %d f b%d", req.Height, i, i); g != want || !bytes.HasPrefix(js, []byte(`{"height":`)) || bytes.Contains(js, []byte(`"height":"`)) {
			t.Fatalf("request %d: server got %q; want %q (from %s)", i, g, want, js)
		}
		heights[strings.Fields(g)[0]] = true
	}
	if len(got) != 200 || len(heights) < 10 {
		t.Errorf("%d requests, %d distinct heights; want 200 requests, many heights", len(got), len(heights))
	}
}

// A WebSocket call's params and a TCP call's bytes take each request's
// values.
func TestWSAndTCPValues(t *testing.T) {
	var mu sync.Mutex
	var got []string
	ws := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, msg, err := c.Read(r.Context())
			if err != nil {
				return
			}
			var req struct {
				ID     int64
				Params json.RawMessage
			}
			json.Unmarshal(msg, &req)
			mu.Lock()
			got = append(got, string(req.Params))
			mu.Unlock()
			c.Write(r.Context(), websocket.MessageText, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{}}`, req.ID))
		}
	}))
	t.Cleanup(ws.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			cn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer cn.Close()
				br := bufio.NewReader(cn)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					mu.Lock()
					got = append(got, strings.TrimSpace(line))
					mu.Unlock()
					io.WriteString(cn, "+OK\r\n")
				}
			}()
		}
	}()
	for _, tc := range []struct {
		call, endpoint string
		want           func(i int) string
	}{
		{"    ws: {method: m, params: {n: \"${n}\", s: \"x${n}\"}}\n    values: {n: {seq: {from: 5}}}\n",
			"ws" + strings.TrimPrefix(ws.URL, "http") + "/", func(i int) string { return fmt.Sprintf(`{"n":%d,"s":"x%d"}`, 5+i, 5+i) }},
		{"    tcp: {send: \"GET key:${n}\\r\\n\"}\n    values: {n: {seq: {from: 5}}}\n",
			ln.Addr().String(), func(i int) string { return fmt.Sprintf("GET key:%d", 5+i) }},
	} {
		call, fresh := valuesCall(t, tc.call, nil)
		c, err := New(context.Background(), call, tc.endpoint, Options{Timeout: 10 * time.Second, Values: fresh()})
		if err != nil {
			t.Fatal(err)
		}
		if s, err := (load.Closed{Concurrency: 1, Requests: 20}).Run(context.Background(), c); err != nil || s.OK != 20 {
			t.Fatalf("%s: %d of 20 ok (%v), %v", call.Protocol(), s.OK, s.Errors, err)
		}
		mu.Lock()
		for i, g := range got {
			if g != tc.want(i) {
				t.Errorf("%s: request %d: %q; want %q", call.Protocol(), i, g, tc.want(i))
			}
		}
		got = nil
		mu.Unlock()
	}
}

// A call with values has no Caller without its set: it would send its
// placeholders as written.
func TestValuesNeedTheirSet(t *testing.T) {
	call, _ := valuesCall(t, "    http: {path: \"/${n}\"}\n    values: {n: {seq: {}}}\n", nil)
	if _, err := New(context.Background(), call, "http://127.0.0.1:1/", Options{}); err == nil || !strings.Contains(err.Error(), "no set of them is open") {
		t.Fatalf("New without Values: %v; want an error", err)
	}
}
