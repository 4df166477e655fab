package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/sample"
	"github.com/tandem-bench/tandem/study"
)

// rpcServer is a real JSON-RPC server on 127.0.0.1. answer returns the
// result, or an error code when code != 0; raw, when set, is sent as is.
func rpcServer(t *testing.T, answer func(method string, n int) (result any, code int, raw string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     int64  `json:"id"`
			Method string `json:"method"`
			Params []int  `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Params) != 1 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		res, code, raw := answer(req.Method, req.Params[0])
		if raw != "" {
			fmt.Fprint(w, raw)
			return
		}
		out := map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": res}
		if code != 0 {
			out = map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": code, "message": "no"}}
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/"
}

func parseStudy(t *testing.T, yaml string) *study.Study {
	t.Helper()
	s, err := study.Parse("compat_test.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("study: %v", err)
	}
	return s
}

func TestRunAgainstJSONRPCServers(t *testing.T) {
	var counter atomic.Int64 // a field that changes on every answer: noise
	base := func(n int) map[string]any {
		return map[string]any{"n": n, "hash": "00112233", "list": []any{1, 2, 3}, "seen": counter.Add(1), "note": "x"}
	}
	a := rpcServer(t, func(_ string, n int) (any, int, string) {
		switch {
		case n < 0:
			return nil, -32602, ""
		case n == 99:
			return nil, -8, ""
		}
		return base(n), 0, ""
	})
	b := rpcServer(t, func(_ string, n int) (any, int, string) {
		r := base(n)
		switch n {
		case -1:
			return nil, -32603, ""
		case 99:
			return nil, -8, ""
		case 1:
			r["hash"] = "33221100"
		case 2:
			r["list"] = []any{3, 1, 2}
		case 3:
			r["extra"] = true
		case 4:
			delete(r, "note")
		case 5:
			r["list"] = []any{1, 2, 3, 4}
		case 6:
			return "00112233", 0, ""
		case 7:
			r["n"] = n + 1
		case 8:
			return nil, -32603, ""
		case 10:
			return nil, 0, "this is not JSON-RPC"
		case 11:
			return strings.Repeat("x", 2<<20), 0, ""
		}
		return r, 0, ""
	})
	oracle := rpcServer(t, func(method string, n int) (any, int, string) {
		if method != "node_get" {
			return nil, -32601, ""
		}
		return map[string]any{"blockhash": "33221100", "items": []any{3, 3, 2, 1}, "height": n}, 0, ""
	})
	s := parseStudy(t, fmt.Sprintf(`
version: 1
name: compat
targets:
  - {name: a, endpoints: {http: %q}}
  - {name: b, endpoints: {http: %q}}
  - {name: c, endpoints: {http: %q}}
calls:
  get: {jsonrpc: {method: get, params: ["${n}"]}}
  node: {jsonrpc: {method: node_get, params: ["${n}"]}}
compat:
  reference: a
  noise: again
  oracles:
    node: {url: %q}
  cases:
    - call: get
      vary: {n: [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, -1, 99]}
      oracle:
        name: node
        call: node
        checks:
          - {path: hash, oracle: blockhash, rule: reversed}
          - {path: list, oracle: items, rule: set}
          - {path: n, oracle: height}
`, a, b, closedPort(t), oracle))
	eps := map[string]map[string]string{}
	for _, tg := range s.Targets {
		eps[tg.Name] = tg.Endpoints
	}
	q := driver.NewQuerier(driver.Options{MaxAnswer: 1 << 20})
	defer q.Close()
	got, err := Run(context.Background(), s, Options{Endpoints: eps, Query: q})
	if err != nil {
		t.Fatal(err)
	}
	data, err := results.Marshal(withCompat(got))
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Validate(data); err != nil {
		t.Fatalf("results do not validate: %v", err)
	}
	byN := map[int64]results.Case{}
	for _, cs := range got.Cases {
		byN[cs.Vars["n"].(int64)] = cs
	}
	answerOf := func(cs results.Case, target string) results.Answer {
		for _, a := range cs.Answers {
			if a.Target == target {
				return a
			}
		}
		t.Fatalf("case %v: no answer from %s", cs.Vars, target)
		return results.Answer{}
	}
	want := []struct {
		n                int64
		agreementB, kind string
		path             string
	}{
		{0, Identical, "", ""},
		{1, ContentDiffers, KindByteOrder, "hash"},
		{2, ContentDiffers, KindOrdering, "list"},
		{3, ContentDiffers, KindExtra, "extra"},
		{4, ContentDiffers, KindMissing, "note"},
		{5, ContentDiffers, KindSize, "list"},
		{6, ContentDiffers, KindType, ""},
		{7, ContentDiffers, KindValue, "n"},
		{8, StatusDiffers, KindStatus, ""},
		{10, StatusDiffers, KindStatus, ""},
		{11, StatusDiffers, KindStatus, ""},
		{-1, StatusDiffers, KindStatus, ""},
		{99, "both jsonrpc:-8", "", ""},
	}
	for _, w := range want {
		cs := byN[w.n]
		if a := answerOf(cs, "b"); a.Agreement != w.agreementB {
			t.Errorf("n=%d: b %s (status %s); want %s", w.n, a.Agreement, a.Status, w.agreementB)
		}
		var bDiffs []results.Difference
		for _, d := range cs.Differences {
			if d.Target == "b" {
				bDiffs = append(bDiffs, d)
			}
		}
		if w.kind == "" {
			if len(bDiffs) != 0 {
				t.Errorf("n=%d: differences %+v; want none", w.n, bDiffs)
			}
		} else if len(bDiffs) != 1 || bDiffs[0].Kind != w.kind || bDiffs[0].Path != w.path {
			t.Errorf("n=%d: differences %+v; want one %s at %q", w.n, bDiffs, w.kind, w.path)
		}
		if c := answerOf(cs, "c"); c.Status != "refused" && c.Status != "unreachable" {
			t.Errorf("n=%d: the closed port answered %s", w.n, c.Status)
		}
		if cs.Agreement != StatusDiffers {
			t.Errorf("n=%d: case agreement %s; want status differs (c is down)", w.n, cs.Agreement)
		}
	}
	if st := answerOf(byN[10], "b").Status; st != "protocol" {
		t.Errorf("garbage answer: status %s; want protocol", st)
	}
	if st := answerOf(byN[11], "b").Status; st != "too-large" {
		t.Errorf("2 MiB answer over a 1 MiB bound: status %s; want too-large", st)
	}
	// noise: "seen" changes between the reference's two answers
	if cs := byN[0]; len(cs.Noise) == 0 || cs.Noise[0].Path != "seen" {
		t.Errorf("n=0: noise %+v; want the seen field", cs.Noise)
	}
	// oracle: a's hash is the oracle's reversed, b's (n=1) is not; the
	// lists hold as sets; heights agree except b's at n=7.
	checks := map[string]bool{}
	for _, ch := range byN[1].Oracle.Checks {
		checks[ch.Target+" "+ch.Path] = ch.OK
	}
	if !checks["a hash"] || checks["b hash"] || !checks["a list"] || !checks["b list"] || !checks["a n"] {
		t.Errorf("n=1 oracle checks: %v", checks)
	}
	for _, ch := range byN[7].Oracle.Checks {
		if ch.Path == "n" && ch.Target == "b" && ch.OK {
			t.Error("n=7: b's n passed the oracle's height check")
		}
	}
	if got.Failed != len(want) {
		t.Errorf("failed %d; want %d (c is down in every case)", got.Failed, len(want))
	}
	counts := map[string]map[string]int{}
	for _, m := range got.Matrix {
		counts[m.Target] = m.Counts
	}
	if counts["b"]["content differs"] != 7 || counts["b"]["status differs"] != 4 || counts["b"]["identical"] != 1 || counts["b"]["both jsonrpc:-8"] != 1 {
		t.Errorf("matrix for b: %v", counts["b"])
	}
}

// withCompat wraps a compat outcome in an otherwise empty results value,
// for schema validation.
func withCompat(c *results.Compat) *results.Results {
	r := results.New()
	r.Tool = results.Tool{Name: "tandem", Version: "test"}
	r.Compat = c
	return r
}

func TestRunAgainstSampleBuilds(t *testing.T) {
	eps := map[string]map[string]string{}
	for _, b := range []sample.Build{sample.BuildA, sample.BuildB} {
		eps[string(b)] = map[string]string{"grpc": startSample(t, b, 50)}
	}
	s := parseStudy(t, `
version: 1
name: sample builds
targets:
  - {name: a, endpoints: {grpc: "127.0.0.1:1"}}
  - {name: b, endpoints: {grpc: "127.0.0.1:1"}}
calls:
  block: {grpc: {method: tandem.sample.v1.Ledger/GetBlock, request: {height: "${h}"}}}
  range: {grpc: {method: tandem.sample.v1.Ledger/GetBlockRange, request: {start: "${s}", end: 4}}}
  tx: {grpc: {method: tandem.sample.v1.Ledger/GetTransaction, request: {txid: "${id}"}}}
  nomethod: {grpc: {method: tandem.sample.v1.Ledger/Nope}}
compat:
  cases:
    - {call: block, vary: {h: [0, 3, -1, 50]}}
    - {call: range, vary: {s: [0, 9]}}
    - {call: tx, vary: {id: [AAAA]}}
    - {call: nomethod}
`)
	q := driver.NewQuerier(driver.Options{})
	defer q.Close()
	got, err := Run(context.Background(), s, Options{Endpoints: eps, Query: q})
	if err != nil {
		t.Fatal(err)
	}
	var summary []string
	for _, cs := range got.Cases {
		line := fmt.Sprintf("%s %v: %s", cs.Call, cs.Vars, cs.Agreement)
		for _, d := range cs.Differences[:min(1, len(cs.Differences))] {
			line += fmt.Sprintf(" [%s %s]", d.Kind, d.Path)
		}
		if cs.Error != "" {
			line += " (not sent)"
		}
		if len(cs.Answers) > 0 {
			line += fmt.Sprintf(" %d messages", cs.Answers[0].Messages)
		}
		summary = append(summary, line)
	}
	want := []string{
		"block map[h:0]: identical 1 messages", // genesis: prev_hash is all zeros both ways
		"block map[h:3]: content differs [byte-order prev_hash] 1 messages",
		"block map[h:-1]: not sent (not sent)",
		"block map[h:50]: both grpc:NOT_FOUND 0 messages",
		"range map[s:0]: content differs [byte-order [1].prev_hash] 5 messages",
		"range map[s:9]: status differs [status ] 0 messages",
		"tx map[id:AAAA]: status differs [status ] 0 messages",
		"nomethod map[]: both unreachable 0 messages",
	}
	if strings.Join(summary, "\n") != strings.Join(want, "\n") {
		t.Errorf("cases:\n%s\nwant:\n%s", strings.Join(summary, "\n"), strings.Join(want, "\n"))
	}
}

func studyParse(yaml string) (*study.Study, error) { return study.Parse("bench.yaml", []byte(yaml)) }

// A second instance of the reference supplies the noise, and an oracle can
// be a target of the study; neither is then under test.
func TestNoiseInstanceAndOracleTarget(t *testing.T) {
	var seq atomic.Int64
	ref := func(_ string, n int) (any, int, string) {
		return map[string]any{"n": n, "at": seq.Add(1), "hash": "aabbccdd"}, 0, ""
	}
	a, a2 := rpcServer(t, ref), rpcServer(t, ref)
	b := rpcServer(t, func(_ string, n int) (any, int, string) {
		return map[string]any{"n": n + 1, "at": seq.Add(1), "hash": "aabbccdd"}, 0, ""
	})
	node := rpcServer(t, func(_ string, n int) (any, int, string) {
		return map[string]any{"height": n, "h": "ddccbbaa"}, 0, ""
	})
	s := parseStudy(t, fmt.Sprintf(`
version: 1
name: noise
targets:
  - {name: a, endpoints: {http: %q}}
  - {name: a2, endpoints: {http: %q}}
  - {name: b, endpoints: {http: %q}}
  - {name: node, endpoints: {http: %q}}
calls:
  get: {jsonrpc: {method: get, params: ["${n}"]}}
compat:
  noise: a2
  oracles: {node: {target: node}}
  cases:
    - call: get
      vary: {n: [5]}
      oracle: {name: node, call: get, checks: [{path: n, oracle: height}, {path: hash, oracle: h, rule: reversed}]}
`, a, a2, b, node))
	eps := map[string]map[string]string{}
	for _, tg := range s.Targets {
		eps[tg.Name] = tg.Endpoints
	}
	q := driver.NewQuerier(driver.Options{})
	defer q.Close()
	got, err := Run(context.Background(), s, Options{Endpoints: eps, Query: q})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Targets, ",") != "a,b" {
		t.Errorf("under test: %v; want a and b only", got.Targets)
	}
	cs := got.Cases[0]
	if len(cs.Noise) != 1 || cs.Noise[0].Path != "at" || len(cs.Differences) != 1 || cs.Differences[0].Path != "n" {
		t.Errorf("noise %+v, differences %+v; want at as noise and n held", cs.Noise, cs.Differences)
	}
	ok := map[string]bool{}
	for _, ch := range cs.Oracle.Checks {
		ok[ch.Target+" "+ch.Path] = ch.OK
	}
	if !ok["a n"] || ok["b n"] || !ok["a hash"] || !ok["b hash"] {
		t.Errorf("oracle checks %v", ok)
	}
}

// startSample runs an indexed sample server of the given build and chain
// length for the test and returns its gRPC address.
func startSample(t testing.TB, b sample.Build, blocks int) string {
	t.Helper()
	srv, err := sample.Start(context.Background(), sample.Options{Build: b, DataDir: t.TempDir(), Blocks: blocks, Work: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	for deadline := time.Now().Add(time.Minute); !srv.Indexed(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("build %s: not indexed after a minute", b)
		}
	}
	return srv.GRPCAddr()
}

// TestCasesRunInListedOrder: a case reads what the case before it wrote,
// though writes are slow and the reads of one case go out in parallel.
func TestCasesRunInListedOrder(t *testing.T) {
	var mu sync.Mutex
	stored := map[int]bool{}
	url := rpcServer(t, func(method string, n int) (any, int, string) {
		if method == "put" {
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			stored[n] = true
			mu.Unlock()
			return "OK", 0, ""
		}
		mu.Lock()
		defer mu.Unlock()
		return stored[n], 0, ""
	})
	s := parseStudy(t, fmt.Sprintf(`
version: 1
name: order
targets:
  - {name: a, endpoints: {http: %q}}
calls:
  put: {jsonrpc: {method: put, params: ["${n}"]}}
  has: {jsonrpc: {method: has, params: ["${n}"]}}
compat:
  targets: [a]
  cases:
    - {call: put, vary: {n: [1, 2, 3, 4]}}
    - {call: has, vary: {n: [1, 2, 3, 4, 5]}}
scenarios: []
`, url))
	out, err := Run(context.Background(), s, Options{Endpoints: map[string]map[string]string{"a": {"http": url}}, Query: driver.NewQuerier(driver.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Cases) != 9 {
		t.Fatalf("%d cases, want 9", len(out.Cases))
	}
	// has 1…4 answer true and has 5 false: the same digest for the first
	// four, another for the fifth
	no := out.Cases[8].Answers[0].Digest
	for _, c := range out.Cases[4:8] {
		if d := c.Answers[0].Digest; d == "" || d == no {
			t.Errorf("has %v answered as has 5 did (%s): a read overtook the write listed before it", c.Vars["n"], c.Answers[0].Status)
		}
	}
}
