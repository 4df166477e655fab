package compat

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/internal/digest"
	"github.com/tandem-bench/tandem/record"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/sample"
	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"github.com/tandem-bench/tandem/study"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// writeExchanges writes a recording of exs into dir and returns its name.
func writeExchanges(t *testing.T, dir string, exs []record.Exchange) string {
	t.Helper()
	w, err := record.Create(filepath.Join(dir, "rec.jsonl"), record.Header{Upstream: "http://127.0.0.1:1", Start: time.Now(), MaxBody: 64})
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
	return "rec.jsonl"
}

// replayStudy reads a study written into dir (so its recordings resolve
// there) and returns it with its targets' endpoints.
func replayStudy(t *testing.T, dir, yaml string) (*Options, *results.Compat, error) {
	t.Helper()
	path := filepath.Join(dir, "study.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Read(path)
	if err != nil {
		t.Fatalf("study: %v", err)
	}
	eps := map[string]map[string]string{}
	for _, tg := range s.Targets {
		eps[tg.Name] = tg.Endpoints
	}
	q := driver.NewQuerier(driver.Options{Timeout: 10 * time.Second})
	t.Cleanup(q.Close)
	o := Options{Endpoints: eps, Query: q}
	got, err := Run(context.Background(), s, o)
	return &o, got, err
}

// summary is a case in one line: its exchange, label, agreement and first
// difference.
func summary(cs results.Case) string {
	line := cs.Call + ": " + cs.Agreement
	if cs.Recording != nil {
		line = fmt.Sprintf("#%d %s", cs.Recording.Exchange, line)
	}
	for _, d := range cs.Differences[:min(1, len(cs.Differences))] {
		line += fmt.Sprintf(" [%s %s]", d.Kind, d.Path)
	}
	if cs.Error != "" {
		line += " (not sent: " + cs.Error + ")"
	}
	return line
}

func TestReplayHTTPAndJSONRPC(t *testing.T) {
	var seq atomic.Int64 // a field that changes on every answer: noise
	var mu sync.Mutex
	var auths, agents []string
	protos := map[string]int{}
	server := func(build string) string {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auths = append(auths, r.Header.Values("Authorization")...)
			agents = append(agents, r.Header.Get("User-Agent"))
			protos[r.URL.Path] = r.ProtoMajor
			mu.Unlock()
			switch r.URL.Path {
			case "/text":
				fmt.Fprint(w, map[string]string{"a": "hello", "b": "hellO"}[build])
				return
			case "/":
			default:
				http.NotFound(w, r)
				return
			}
			var req struct {
				ID     json.RawMessage `json:"id"`
				Params []int           `json:"params"`
			}
			json.NewDecoder(r.Body).Decode(&req)
			n := req.Params[0]
			out := map[string]any{"jsonrpc": "2.0", "id": req.ID}
			switch {
			case n < 0 && build == "a":
				out["error"] = map[string]any{"code": -32602, "message": "bad"}
			case n < 0:
				out["error"] = map[string]any{"code": -32603, "message": "bad"}
			case n == 5 && build == "b":
				out["result"] = map[string]any{"n": n + 1, "seen": seq.Add(1)}
			default:
				out["result"] = map[string]any{"n": n, "seen": seq.Add(1)}
			}
			json.NewEncoder(w).Encode(out)
		}))
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true) // h2c, for the exchange recorded over HTTP/2
		srv.Start()
		t.Cleanup(srv.Close)
		return srv.URL + "/"
	}
	a, b := server("a"), server("b")
	rpc := func(id string, n int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":"get","params":[%d]}`, id, n)
	}
	ex := func(p record.Protocol, method, path string, body []byte) record.Exchange {
		return record.Exchange{Protocol: p, Method: method, Path: path, Body: body, BodySize: int64(len(body)), Status: 200,
			Headers: http.Header{"Content-Type": {"application/json"}, "User-Agent": {"curl/7.88.1"}}}
	}
	exs := []record.Exchange{
		ex(record.JSONRPC, "POST", "/", rpc("1", 1)),
		ex(record.JSONRPC, "POST", "/", rpc("2", 5)),
		ex(record.JSONRPC, "POST", "/", rpc("3", -1)),
		ex(record.HTTP1, "GET", "/text?q=1", nil),
		ex(record.H2, "GET", "/missing", nil),
		ex(record.JSONRPC, "POST", "/", rpc(`"abc"`, 2)),
		ex(record.HTTP1, "POST", "/cut", []byte("first part")),
	}
	exs[0].Headers.Set("Authorization", record.Marker)
	exs[0].Redacted = []string{"header Authorization"}
	exs[6].BodySize = 100 // the recording kept 10 of 100 bytes
	dir := t.TempDir()
	file := writeExchanges(t, dir, exs)
	_, got, err := replayStudy(t, dir, fmt.Sprintf(`
version: 1
name: replay
targets:
  - {name: a, endpoints: {http: %q}}
  - {name: b, endpoints: {http: %q}}
calls:
  get: {jsonrpc: {method: get, params: [1]}}
compat:
  noise: again
  recordings:
    - %s
    - {file: %s, mode: report, ignore: [n]}
`, a, b, file, file))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, cs := range got.Cases {
		lines = append(lines, summary(cs))
	}
	cut := "(not sent: request: the recording kept 10 of the body's 100 bytes)"
	want := []string{
		"#0 jsonrpc get: identical", // seen differs between two answers of a alike: noise
		"#1 jsonrpc get: content differs [value n]",
		"#2 jsonrpc get: status differs [status ]",
		"#3 http GET /text: content differs [value ]",
		"#4 http GET /missing: both http:404",
		"#5 jsonrpc get: identical",
		"#6 http POST /cut: not sent " + cut,
		"#0 jsonrpc get: identical",
		"#1 jsonrpc get: identical", // n ignored
		"#2 jsonrpc get: status differs [status ]",
		"#3 http GET /text: content differs [value ]",
		"#4 http GET /missing: both http:404",
		"#5 jsonrpc get: identical",
		"#6 http POST /cut: not sent " + cut,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("cases:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// held to equality: the first recording's three disagreements only
	if got.Failed != 3 {
		t.Errorf("failed %d; want 3 (the second recording is report only)", got.Failed)
	}
	first := got.Cases[0]
	if first.Recording == nil || first.Recording.File != file || first.Recording.Protocol != "jsonrpc" || len(first.Noise) == 0 || first.Noise[0].Path != "seen" {
		t.Errorf("first case: recording %+v, noise %+v", first.Recording, first.Noise)
	}
	if r := got.Cases[3].Recording; r.Path != "/text" || r.Method != "GET" {
		t.Errorf("recorded path %q, method %q; want /text (its query left out), GET", r.Path, r.Method)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auths) != 0 {
		t.Errorf("a redacted Authorization was sent: %q", auths)
	}
	if agents[0] != "curl/7.88.1" {
		t.Errorf("User-Agent %q; want the recorded one", agents[0])
	}
	if protos["/missing"] != 2 || protos["/text"] != 1 {
		t.Errorf("sent over HTTP/%d and HTTP/%d; want each as recorded: /missing over h2, /text over HTTP/1.1", protos["/missing"], protos["/text"])
	}
	if err := results.Validate(mustJSON(t, withCompat(got))); err != nil {
		t.Errorf("results do not validate: %v", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// grpcBody frames messages as a gRPC request body.
func grpcBody(msgs ...proto.Message) []byte {
	var b []byte
	for _, m := range msgs {
		enc, _ := proto.Marshal(m)
		b = append(b, 0)
		b = binary.BigEndian.AppendUint32(b, uint32(len(enc)))
		b = append(b, enc...)
	}
	return b
}

func grpcExchange(method string, msgs ...proto.Message) record.Exchange {
	body := grpcBody(msgs...)
	return record.Exchange{Protocol: record.GRPC, Method: "POST", Path: "/" + method, Body: body, BodySize: int64(len(body)), Status: 200,
		Headers: http.Header{"Content-Type": {"application/grpc"}, "Te": {"trailers"}, "X-Tenant": {"t1"}}, Messages: 1}
}

// Health servers without reflection: answers compared by field number.
func TestReplayGRPCWithoutReflection(t *testing.T) {
	var tenants sync.Map
	server := func(st healthpb.HealthCheckResponse_ServingStatus) string {
		srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			md, _ := metadata.FromIncomingContext(ctx)
			for _, v := range md.Get("x-tenant") {
				tenants.Store(v, true)
			}
			return h(ctx, req)
		}))
		hs := health.NewServer()
		hs.SetServingStatus("ledger", st)
		healthpb.RegisterHealthServer(srv, hs)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(ln)
		t.Cleanup(srv.Stop)
		return ln.Addr().String()
	}
	a, b := server(healthpb.HealthCheckResponse_SERVING), server(healthpb.HealthCheckResponse_NOT_SERVING)
	dir := t.TempDir()
	file := writeExchanges(t, dir, []record.Exchange{
		grpcExchange("grpc.health.v1.Health/Check", &healthpb.HealthCheckRequest{Service: "ledger"}),
		grpcExchange("grpc.health.v1.Health/Check", &healthpb.HealthCheckRequest{Service: "nope"}),
	})
	_, got, err := replayStudy(t, dir, fmt.Sprintf(`
version: 1
name: replay grpc
targets:
  - {name: a, endpoints: {grpc: %q}}
  - {name: b, endpoints: {grpc: %q}}
calls:
  check: {grpc: {method: grpc.health.v1.Health/Check}}
compat:
  recordings: [%s]
`, a, b, file))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, cs := range got.Cases {
		lines = append(lines, summary(cs))
	}
	want := []string{
		"#0 grpc grpc.health.v1.Health/Check: content differs [value 1]", // status 1 (SERVING) against 2
		"#1 grpc grpc.health.v1.Health/Check: both grpc:NOT_FOUND",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("cases:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	d := got.Cases[0].Differences[0]
	serving, _ := proto.Marshal(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
	if d.Reference != "1" || d.Value != "2" || got.Cases[0].Answers[0].Digest != digest.Of([][]byte{serving}) {
		t.Errorf("difference %+v, digest %s; want 1 against 2 and digest.Of the answer", d, got.Cases[0].Answers[0].Digest)
	}
	if _, ok := tenants.Load("t1"); !ok {
		t.Error("the recorded metadata x-tenant did not reach the servers")
	}
}

// The sample's builds serve reflection: recorded gRPC requests are
// classified as the same requests listed as cases are
// (TestRunAgainstSampleBuilds).
func TestReplayGRPCWithReflection(t *testing.T) {
	dir := t.TempDir()
	file := writeExchanges(t, dir, []record.Exchange{
		grpcExchange("tandem.sample.v1.Ledger/GetBlock", &ledgerpb.BlockRequest{Height: 3}),
		grpcExchange("tandem.sample.v1.Ledger/GetBlockRange", &ledgerpb.BlockRange{Start: 0, End: 4}),
		grpcExchange("tandem.sample.v1.Ledger/GetTransaction", &ledgerpb.TxRequest{Txid: []byte{0, 0, 0}}),
	})
	addr := map[sample.Build]string{}
	for _, bd := range []sample.Build{sample.BuildA, sample.BuildB} {
		addr[bd] = startSample(t, bd, 50)
	}
	_, got, err := replayStudy(t, dir, fmt.Sprintf(`
version: 1
name: replay sample
targets:
  - {name: a, endpoints: {grpc: %q}}
  - {name: b, endpoints: {grpc: %q}}
calls:
  info: {grpc: {method: tandem.sample.v1.Ledger/Info}}
compat:
  recordings: [%s]
`, addr[sample.BuildA], addr[sample.BuildB], file))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, cs := range got.Cases {
		lines = append(lines, fmt.Sprintf("%s %d messages", summary(cs), cs.Answers[0].Messages))
	}
	want := []string{
		"#0 grpc tandem.sample.v1.Ledger/GetBlock: content differs [byte-order prev_hash] 1 messages",
		"#1 grpc tandem.sample.v1.Ledger/GetBlockRange: content differs [byte-order [1].prev_hash] 5 messages",
		"#2 grpc tandem.sample.v1.Ledger/GetTransaction: status differs [status ] 0 messages",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("cases:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
