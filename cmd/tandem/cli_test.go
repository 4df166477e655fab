package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/sample"
)

// With TANDEM_TEST_AS_CLI=1 the test binary is tandem itself, so the demo's
// targets (${tandem} sample serve) run as real child processes.
func TestMain(m *testing.M) {
	if addr := os.Getenv("TANDEM_TEST_PONG"); addr != "" {
		os.Exit(servePong(addr))
	}
	if os.Getenv("TANDEM_TEST_AS_CLI") == "1" {
		os.Exit(mainWithSignals(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Setenv("TANDEM_TEST_AS_CLI", "1") // inherited by children only
	code := m.Run()
	os.Exit(code)
}

// smallStudy writes a study like the demo's, made small: two builds of the
// sample service on a short chain, startup once, one latency scenario of
// three rounds of a second. The tests of signals run it instead of the
// whole demo.
func smallStudy(t *testing.T) string {
	t.Helper()
	target := func(build string) string {
		return fmt.Sprintf(`
  - name: %s
    start:
      command: ["${tandem}", sample, serve, --build, %s, --blocks, "300", --work, "10", --data, "${workdir}/data",
                --grpc, "127.0.0.1:${port.grpc}", --http, "127.0.0.1:${port.http}"]
      wipe: ["${workdir}/data"]
    endpoints: {grpc: "127.0.0.1:${port.grpc}"}
    ready: {first_answer: {call: ping}, condition: {call: info, path: indexed, equals: true}, timeout: 3m}`, build, build)
	}
	path := filepath.Join(t.TempDir(), "small.yaml")
	study := `version: 1
name: small
startup: {runs: 1}
defaults: {rounds: 3, warmup: 100ms, min_duration: 1s}
targets:` + target("a") + target("b") + `
calls:
  ping: {grpc: {method: tandem.sample.v1.Ledger/Ping}}
  info: {grpc: {method: tandem.sample.v1.Ledger/Info}}
  block: {grpc: {method: tandem.sample.v1.Ledger/GetBlock, request: {height: 123}}}
scenarios:
  - {name: getblock-latency, call: block, load: {concurrency: 1}}
`
	if err := os.WriteFile(path, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func tandem(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpShowsExamples(t *testing.T) {
	for _, cmd := range []string{"demo", "run", "validate", "load", "report", "compare", "cost", "version", "sample serve", "record", "record import-har"} {
		code, out, _ := tandem(t, append(strings.Fields(cmd), "--help")...)
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "tandem "+strings.Fields(cmd)[0]) {
			t.Errorf("tandem %s --help: exit %d, output lacks an example:\n%s", cmd, code, out)
		}
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewServer(http.NotFoundHandler()) // plain HTTP, for a TLS mismatch
	defer srv.Close()
	plain := strings.TrimPrefix(srv.URL, "http://")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("version: 1\nname: x\ncolour: red\n"), 0o644)
	envStudy := filepath.Join(dir, "env.yaml")
	os.WriteFile(envStudy, []byte(`version: 1
name: env
targets:
  - name: a
    start: {command: [server, "--key=${env.TANDEM_TEST_UNSET_VARIABLE}"]}
    endpoints: {http: "http://127.0.0.1:1/"}
calls:
  ping: {http: {path: /}}
`), 0o644)
	garbage := filepath.Join(dir, "garbage.json")
	os.WriteFile(garbage, []byte(`{"schema": "tandem.results/v7"}`), 0o644)
	cases := []struct {
		args       []string
		code       int
		wantStderr string
	}{
		{[]string{"nosuch"}, exitBadInput, "unknown command"},
		{[]string{"run"}, exitBadInput, "accepts 1 arg"},
		{[]string{"run", "--bogus", "x"}, exitBadInput, "unknown flag"},
		{[]string{"run", "--roudns", "3", "x"}, exitBadInput, "unknown flag: --roudns; did you mean --rounds?"},
		{[]string{"history", "ad", "x.json"}, exitBadInput, `unknown command "ad" for "tandem history"; did you mean ack or add?`},
		{[]string{"ci", "ini"}, exitBadInput, `unknown command "ini" for "tandem ci"; did you mean init?`},
		{[]string{"record", "import-hr", "x.har"}, exitBadInput, `did you mean import-har?`},
		{[]string{"validate", bad}, exitBadInput, bad + `:3:1: colour: unknown key "colour"`},
		{[]string{"validate", filepath.Join(dir, "missing.yaml")}, exitBadInput, "no such file"},
		{[]string{"run", bad}, exitBadInput, "missing required key"},
		{[]string{"run", "--rounds", "-1", bad}, exitBadInput, "--rounds -1: want a positive count"},
		{[]string{"validate", envStudy}, exitBadInput, "TANDEM_TEST_UNSET_VARIABLE"},
		{[]string{"run", envStudy, "--out", filepath.Join(dir, "never")}, exitBadInput, "TANDEM_TEST_UNSET_VARIABLE"},
		{[]string{"report", garbage}, exitBadInput, "unsupported results schema version"},
		{[]string{"report", garbage, "--format", "pdf"}, exitBadInput, `invalid argument "pdf" for "--format" flag: want text, md, html, csv, bench or hdr (see tandem report --help)`},
		{[]string{"history", "gate", garbage, "--on-missing-baseline", "maybe"}, exitBadInput, `"--on-missing-baseline" flag: want warn or fail`},
		{[]string{"compare", garbage, "--on-inconclusive", "maybe"}, exitBadInput, `"--on-inconclusive" flag: want fail or pass (see tandem compare --help)`},
		{[]string{"compare", garbage, garbage}, exitBadInput, "unsupported"},
		{[]string{"load", "ftp://127.0.0.1/"}, exitBadInput, "want http://, https://, grpc://, ws://, wss://"},
		{[]string{"load", "http://127.0.0.1:1/", "--requests", "5"}, exitBadInput, "cannot use http://127.0.0.1:1/: the first request failed: refused"},
		{[]string{"load", "grpc://127.0.0.1:1/a.B/C", "--requests", "5", "--timeout", "1s"}, exitBadInput, "cannot reach grpc://127.0.0.1:1/a.B/C"},
		{[]string{"load", "https://" + plain + "/", "--requests", "5"}, exitBadInput, "the first request failed: tls"},
		{[]string{"load", "http://127.0.0.1:1/", "--rate", "fast"}, exitBadInput, `--rate: rate "fast": want a non-negative number`},
		{[]string{"load", "http://127.0.0.1:1/", "--rate", "-5"}, exitBadInput, `-5`},
		{[]string{"load", "http://127.0.0.1:1/", "--duration", "-1s"}, exitBadInput, "--duration -1s: want a positive duration"},
		{[]string{"load", "http://127.0.0.1:1/", "--requests", "-1"}, exitBadInput, "--requests -1: want 0 or more"},
		{[]string{"load", "http://127.0.0.1:1/", "--concurrency", "-5", "--timeout", "-1s"}, exitBadInput, "--timeout -1s: want a positive duration\n--concurrency -5: want 1 or more"},
		{[]string{"load", "http://127.0.0.1:1/", "--rate", "10", "--connections", "0", "--max-waiting", "-1"}, exitBadInput, "--max-waiting -1: want 0 or more\n--connections 0: want 1 or more"},
		{[]string{"load", "http://127.0.0.1:1/", "--concurrency", "1000000000"}, exitBadInput, "--concurrency 1000000000: more than this machine holds"},
		{[]string{"load", "http://127.0.0.1:1/", "--batch", "5", "--period", "0s"}, exitBadInput, "--period 0s: want a positive duration"},
		{[]string{"load", "http://127.0.0.1:1/", "--rate", "10", "--batch", "5"}, exitBadInput, "two load shapes"},
		{[]string{"load", "http://127.0.0.1:1/", "--rate", "10", "--concurrency", "5"}, exitBadInput, "use --connections"},
		{[]string{"load", "grpc://127.0.0.1:1/x.Y/Z", "--data", "{nope"}, exitBadInput, "--data: not valid JSON"},
		{[]string{"load", "grpc://127.0.0.1:1/x.Y/Z", "--proto", filepath.Join(dir, "none.proto"), "--requests", "1"}, exitBadInput, "compile"},
		{[]string{"sample", "serve", "--build", "q", "--data", dir}, exitBadInput, `build "q"`},
	}
	for _, c := range cases {
		code, _, stderr := tandem(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.wantStderr) {
			t.Errorf("tandem %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, stderr, c.code, c.wantStderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "never")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run refused up front created its output directory: %v", err)
	}
}

// --plan prints each phase and scenario with its estimate, and starts
// nothing: no output directory, no target.
func TestRunPlan(t *testing.T) {
	out := filepath.Join(t.TempDir(), "never")
	code, stdout, stderr := tandem(t, "run", "--plan", "../../demo/demo.yaml", "--out", out)
	if code != 0 {
		t.Fatalf("run --plan: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"nothing was started", "startup", "compat", "44 cases × 2 targets", "getblock-scaling",
		"3 levels × 2 targets × adaptive rounds (15 to 100, ≤ 2m a level) of ~500ms, calibrated", "getblock-saturation", "sweep", "total",
		"verdicts: 21 comparisons, the chance of any false alarm held at 0.0500"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the plan lacks %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--plan made %s (%v)", out, err)
	}
	code, quick, _ := tandem(t, "demo", "--plan", "--quick")
	if code != 0 || quick == stdout || !strings.Contains(quick, "total") {
		t.Errorf("demo --plan --quick: exit %d, the same plan as the full study's:\n%s", code, quick)
	}
}

// --progress json: one event per line on stderr, each step of the plan
// entered in order, and what is left shrinking to nothing.
func TestRunProgressJSON(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // waits on targets
	out := t.TempDir()
	db := filepath.Join(t.TempDir(), "history.db")
	code, stdout, stderr := tandem(t, "run", smallStudy(t), "--pin=false", "--progress", "json", "--out", out, "--history="+db)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// --history=DB keeps the run when it ends
	if !strings.Contains(stdout, "added run ") || !strings.Contains(stdout, "in "+db) {
		t.Errorf("run --history: stdout lacks the added run:\n%s", stdout)
	}
	if code, list, _ := tandem(t, "history", "--db", db, "list"); code != 0 || strings.Count(list, "small") != 1 {
		t.Errorf("the history after run --history: exit %d:\n%s", code, list)
	}
	if strings.ContainsRune(stdout+stderr, 0x1b) {
		t.Error("a control sequence off a terminal")
	}
	var steps []int
	lines, statuses := 0, 0
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var e struct {
			Phase    string  `json:"phase"`
			Step     int     `json:"step"`
			Steps    int     `json:"steps"`
			ElapsedS float64 `json:"elapsed_s"`
			LeftS    float64 `json:"left_s"`
			Line     string  `json:"line"`
			Status   bool    `json:"status"`
			Target   string  `json:"target"`
			Round    int     `json:"round"`
			Rounds   int     `json:"rounds"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not a JSON event: %q (%v)", l, err)
		}
		if e.Status {
			if e.Target == "" || e.Round < 1 || e.Round > e.Rounds {
				t.Errorf("status event %+v; want the round and target measured", e)
			}
			statuses++
			continue
		}
		if e.Line == "" {
			steps = append(steps, e.Step)
			if e.Steps < e.Step || e.LeftS < 0 || e.ElapsedS < 0 {
				t.Errorf("event %+v", e)
			}
		} else {
			lines++
		}
	}
	if len(steps) < 3 || !slices.IsSorted(steps) || steps[0] != 1 || lines == 0 || statuses != 6 {
		t.Errorf("steps entered %v, %d progress lines, %d rounds begun (want 6):\n%s", steps, lines, statuses, stderr)
	}
	if code, _, stderr := tandem(t, "run", smallStudy(t), "--progress", "yaml"); code != exitBadInput || !strings.Contains(stderr, "want text or json") {
		t.Errorf("--progress yaml: exit %d: %s", code, stderr)
	}
}

func TestValidateAndSchema(t *testing.T) {
	code, out, stderr := tandem(t, "validate", "../../demo/demo.yaml")
	if code != 0 || !strings.Contains(out, "ok: 2 targets, 18 calls, 13 scenarios, 44 compat cases") {
		t.Errorf("validate demo: exit %d, %q %q", code, out, stderr)
	}
	code, out, _ = tandem(t, "validate", "--schema")
	var schema map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &schema) != nil || schema["title"] != "tandem study" {
		t.Errorf("validate --schema: exit %d, not the schema: %.200s", code, out)
	}
	code, out, _ = tandem(t, "version")
	if code != 0 || !strings.HasPrefix(out, "tandem "+version+" ("+results.Schema+")") {
		t.Errorf("version: %d %q", code, out)
	}
}

func TestLoadAgainstSample(t *testing.T) {
	tooltest.Long(t)
	s, err := sample.Start(context.Background(), sample.Options{Build: sample.BuildA, DataDir: t.TempDir(), Blocks: 100, Work: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// ok is what every case's requests succeed; a batched case's are what
	// it offers (a batch a busy machine does not send within its period
	// is dropped, what the end cuts off is unfinished: neither fails).
	cases := []struct {
		name    string
		args    []string
		ok      float64
		errors  map[string]any
		unitsPS bool
	}{
		{"grpc unary", []string{"grpc://" + s.GRPCAddr() + "/tandem.sample.v1.Ledger/GetBlock", "--data", `{"height": 3}`, "--requests", "200", "--concurrency", "4"}, 200, map[string]any{}, true},
		{"grpc unary, clients sharing a connection", []string{"grpc://" + s.GRPCAddr() + "/tandem.sample.v1.Ledger/GetBlock", "--data", `{"height": 3}`, "--requests", "200", "--concurrency", "8", "--connections", "1"}, 200, map[string]any{}, true},
		{"grpc error statuses", []string{"grpc://" + s.GRPCAddr() + "/tandem.sample.v1.Ledger/GetBlock", "--data", `{"height": 100}`, "--requests", "20"}, 0, map[string]any{"grpc:NOT_FOUND": 20.0}, false},
		{"grpc stream", []string{"grpc://" + s.GRPCAddr() + "/tandem.sample.v1.Ledger/GetBlockRange", "--data", `{"start": 0, "end": 9}`, "--requests", "5"}, 5, map[string]any{}, true},
		{"jsonrpc", []string{"http://" + s.HTTPAddr() + "/", "--jsonrpc", "getbalance", "--params", `["tz1000042"]`, "--requests", "50"}, 50, map[string]any{}, true},
		{"jsonrpc error", []string{"http://" + s.HTTPAddr() + "/", "--jsonrpc", "getbalance", "--params", `["x"]`, "--requests", "10"}, 0, map[string]any{"jsonrpc:-32602": 10.0}, false},
		{"http", []string{"http://" + s.HTTPAddr() + "/metrics", "--requests", "10"}, 10, map[string]any{}, true},
		{"http, engine workers", []string{"http://" + s.HTTPAddr() + "/metrics", "--requests", "10", "--engine", "workers"}, 10, map[string]any{}, true},
		{"open loop", []string{"grpc://" + s.GRPCAddr() + "/tandem.sample.v1.Ledger/Ping", "--rate", "500", "--connections", "2", "--duration", "1s"}, 500, map[string]any{}, true},
		{"closed loop, engine loop", []string{"http://" + s.HTTPAddr() + "/", "--jsonrpc", "getbalance", "--params", `["tz1000042"]`, "--requests", "300", "--concurrency", "4", "--engine", "loop"}, 300, map[string]any{}, true},
		{"open loop, engine loop", []string{"http://" + s.HTTPAddr() + "/", "--jsonrpc", "getbalance", "--params", `["tz1000042"]`, "--rate", "500", "--connections", "2", "--duration", "1s", "--engine", "loop"}, 500, map[string]any{}, true},
		{"closed loop, engine loop, quantum", []string{"http://" + s.HTTPAddr() + "/metrics", "--requests", "100", "--concurrency", "4", "--engine", "loop", "--quantum", "100us"}, 100, map[string]any{}, true},
		{"ramp", []string{"grpc://" + s.GRPCAddr() + "/tandem.sample.v1.Ledger/Ping", "--rate", "0-1000", "--duration", "1s"}, 500, map[string]any{}, true},
		{"steps", []string{"grpc://" + s.GRPCAddr() + "/tandem.sample.v1.Ledger/Ping", "--rate", "100,300", "--step", "500ms"}, 200, map[string]any{}, true},
		{"batched", []string{"grpc://" + s.GRPCAddr() + "/tandem.sample.v1.Ledger/Ping", "--batch", "10", "--period", "100ms", "--connections", "2", "--duration", "1s"}, 200, map[string]any{}, true},
		{"a mix", []string{"http://" + s.HTTPAddr() + "/", "--mix", "../../examples/mix/ledger.yaml", "--requests", "300", "--concurrency", "4"}, 300, map[string]any{}, true},
		{"a mix, engine workers", []string{"http://" + s.HTTPAddr() + "/", "--mix", "../../examples/mix/ledger.yaml", "--requests", "300", "--concurrency", "4", "--engine", "workers"}, 300, map[string]any{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := tandem(t, append(append([]string{"load"}, c.args...), "--format", "json")...)
			// a run of which no request succeeded prints its results and
			// exits 1
			if want := map[bool]int{true: exitOK, false: exitCheckFailed}[c.ok > 0]; code != want {
				t.Fatalf("exit %d: %s; want %d", code, stderr, want)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			for _, key := range []string{"requests", "ok", "errors", "duration_ns", "offered_rate", "achieved_rate", "throughput", "unit", "units_per_s", "latency_ns", "service_time_ns", "schedule_lag_ns", "dropped", "hdr"} {
				if _, ok := got[key]; !ok {
					t.Errorf("no %q in the JSON object", key)
				}
			}
			ok := got["ok"] == c.ok
			if strings.Contains(strings.Join(c.args, " "), "--batch") {
				requests, _ := got["requests"].(float64)
				cut, _ := got["unfinished"].(float64) // omitted when none
				dropped, _ := got["dropped"].(float64)
				ok = requests+cut+dropped == c.ok && requests > 0 && got["ok"] == requests
				if !ok {
					t.Errorf("%v requests, %v ok, %v cut off, %v dropped; want the %v offered accounted for, every request ok", requests, got["ok"], cut, dropped, c.ok)
				}
			}
			if !ok || !equalJSON(got["errors"], c.errors) || (got["units_per_s"].(float64) > 0) != c.unitsPS {
				t.Errorf("ok %v, errors %v, units/s %v; want %v, %v", got["ok"], got["errors"], got["units_per_s"], c.ok, c.errors)
			}
			// the engine: the event loop wherever it applies (HTTP,
			// JSON-RPC and gRPC on Linux, not --batch), unless --engine
			// says otherwise; think time: the closed loops of the event
			// loop
			args := strings.Join(c.args, " ")
			engine := "loop"
			switch {
			case strings.Contains(args, "--batch"):
				engine = ""
			case strings.Contains(args, "--engine workers"), runtime.GOOS != "linux":
				engine = "workers"
			}
			if got, _ := got["engine"].(string); got != engine {
				t.Errorf("engine %q; want %q", got, engine)
			}
			_, think := got["think_time_ns"]
			closed := !strings.Contains(args, "--rate") && !strings.Contains(args, "--batch")
			if want := closed && engine == "loop"; think != want {
				t.Errorf("think_time_ns given: %v; want %v", think, want)
			}
			if cpu, _ := got["engine_cpu_ns"].(float64); (cpu > 0) != (engine == "loop") {
				t.Errorf("engine_cpu_ns %v; want it (above 0) for the event loop only", got["engine_cpu_ns"])
			}
		})
	}
	for _, args := range [][]string{
		{"http://" + s.HTTPAddr() + "/metrics", "--quickack", "--rate", "10", "--engine", "loop"},
		{"http://" + s.HTTPAddr() + "/metrics", "--batch", "10", "--duration", "1s", "--engine", "loop"},
		{"http://" + s.HTTPAddr() + "/metrics", "--rate", "10", "--engine", "turbo"},
	} {
		if code, _, stderr := tandem(t, append([]string{"load"}, args...)...); code != exitBadInput || !strings.Contains(stderr, "--engine") {
			t.Errorf("%v: exit %d, %q; want exit 2 naming --engine", args, code, stderr)
		}
	}
	for _, args := range [][]string{
		{"http://" + s.HTTPAddr() + "/metrics", "--requests", "10", "--engine", "workers", "--quantum", "1ms"},
		{"http://" + s.HTTPAddr() + "/metrics", "--quickack", "--requests", "10", "--quantum", "1ms"},
		{"http://" + s.HTTPAddr() + "/metrics", "--batch", "10", "--duration", "1s", "--quantum", "1ms"},
		{"http://" + s.HTTPAddr() + "/metrics", "--requests", "10", "--engine", "loop", "--quantum", "-1ms"},
	} {
		if code, _, stderr := tandem(t, append([]string{"load"}, args...)...); code != exitBadInput || !strings.Contains(stderr, "--quantum") {
			t.Errorf("%v: exit %d, %q; want exit 2 naming --quantum", args, code, stderr)
		}
	}
	// a closed loop's clients share connections only where calls are
	// streams (gRPC, HTTP/2)
	if code, _, stderr := tandem(t, "load", "http://"+s.HTTPAddr()+"/metrics", "--requests", "10", "--concurrency", "4", "--connections", "2"); code != exitBadInput || !strings.Contains(stderr, "--connections") {
		t.Errorf("--connections with an HTTP closed loop: exit %d, %q; want exit 2 naming --connections", code, stderr)
	}
	code, out, _ := tandem(t, "load", "grpc://"+s.GRPCAddr()+"/tandem.sample.v1.Ledger/GetBlockRange", "--data", `{"start": 0, "end": 9}`, "--requests", "3", "--format", "json")
	var stream map[string]any
	json.Unmarshal([]byte(out), &stream)
	if code != 0 || stream["unit"] != "message" || stream["units_per_s"].(float64) < 9*stream["throughput"].(float64) {
		t.Errorf("stream: %v; want 10 messages per request", stream)
	}
	code, _, stderr := tandem(t, "load", "grpc://"+s.GRPCAddr()+"/tandem.sample.v1.Ledger/Nope", "--requests", "1")
	if code != exitBadInput || !strings.Contains(stderr, "has no method Nope") {
		t.Errorf("unknown method: exit %d, %q", code, stderr)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// cancelWriter cancels a context once a marker appears in what it is given.
type cancelWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.marker) {
		w.cancel()
	}
	return len(p), nil
}

func TestDemoInterrupted(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // waits on the demo's targets; unpinned, it asserts what was kept, not speed
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelWriter{marker: "getblock-latency c=1 round 1/40 b", cancel: cancel}
	var stdout bytes.Buffer
	code := run(ctx, []string{"demo", "--quick", "-v", "--pin=false", "--out", dir}, &stdout, stderr)
	if code == exitTarget && strings.Contains(stderr.buf.String(), "not ready after") {
		// a machine too busy to index the demo's chain within the demo's
		// ready timeout (this race-built binary is each target, beside a
		// second suite: 2m19s for a once): the run never reached the round
		// to interrupt. What holds then: the results are kept, with the
		// failure, and not marked interrupted.
		r, err := results.Read(filepath.Join(dir, "results.json"))
		if err != nil || r.Interrupted || !slices.ContainsFunc(r.Targets, func(t results.Target) bool { return strings.Contains(t.Error, "not ready after") }) {
			t.Fatalf("a target not ready: results %v, %+v", err, r)
		}
		t.Skipf("a target was not ready within the demo's timeout on this machine; the interruption was not reached:\n%s", stderr.buf.String())
	}
	if code != exitInterrupted {
		t.Fatalf("exit %d; want %d\n%s", code, exitInterrupted, stderr.buf.String())
	}
	r, err := results.Read(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || len(r.Targets) != 2 || r.Targets[0].Startup == nil || len(r.Scenarios) != 1 || len(r.Scenarios[0].Rounds) != 2 {
		t.Errorf("interrupted results: interrupted %v, %d targets, %d scenarios", r.Interrupted, len(r.Targets), len(r.Scenarios))
	}
	for _, f := range []string{"report.html", "report.md", "report.txt"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !strings.Contains(strings.ToLower(string(data)), "interrupted") {
			t.Errorf("%s: %v; want a report that says it was interrupted", f, err)
		}
	}
	if !strings.Contains(stdout.String(), "INTERRUPTED") {
		t.Errorf("summary does not say interrupted:\n%s", stdout.String())
	}
	if len(r.Machine.GeneratorCPUs) > 0 {
		t.Errorf("--pin=false: the generator was pinned to %v", r.Machine.GeneratorCPUs)
	}
}

// The real Ctrl-C path: tandem as a child process, SIGINT once (partial
// results, exit 130) and twice (exit at once).
func TestCtrlC(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // child processes and waits; asserts outcomes, not speed
	for _, twice := range []bool{false, true} {
		t.Run(fmt.Sprintf("twice=%v", twice), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "run", smallStudy(t), "-v", "--pin=false", "--out", dir)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Once: while b starts (a is measured, b is not yet ready).
			// Twice: while a starts.
			marker := "target b: starting"
			if twice {
				marker = "target a: starting"
			}
			sc := bufio.NewScanner(stderr)
			var seen []string
			for sc.Scan() {
				seen = append(seen, sc.Text())
				if strings.Contains(sc.Text(), marker) {
					break
				}
			}
			cmd.Process.Signal(os.Interrupt)
			if twice {
				cmd.Process.Signal(os.Interrupt)
			}
			go io.Copy(io.Discard, stderr)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(3 * time.Minute):
				cmd.Process.Kill()
				t.Fatalf("tandem did not exit within 60s of Ctrl-C; stderr so far:\n%s", strings.Join(seen, "\n"))
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
				t.Fatalf("exit: %v; want status %d", err, exitInterrupted)
			}
			if twice {
				return // exited at once: the file may hold the last round's state
			}
			r, err := results.Read(filepath.Join(dir, "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !r.Interrupted || r.Targets[0].Startup == nil || r.Targets[1].Startup != nil {
				t.Errorf("results after Ctrl-C: interrupted %v, targets %+v; want a measured, b not", r.Interrupted, r.Targets)
			}
		})
	}
}

// A server that answers garbage or resets: the run completes and counts them.
func TestLoadAgainstBrokenServers(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer func(net.Conn)
		status []string
	}{
		{"garbage", func(c net.Conn) { io.WriteString(c, "NOT HTTP\r\n\r\n") }, []string{"protocol"}},
		{"reset", func(c net.Conn) { c.(*net.TCPConn).SetLinger(0) }, []string{"reset", "eof"}},
	} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				buf := make([]byte, 1024)
				conn.Read(buf)
				c.answer(conn)
				conn.Close()
			}
		}()
		code, out, stderr := tandem(t, "load", "http://"+ln.Addr().String()+"/", "--requests", "20", "--format", "json")
		ln.Close()
		var got struct {
			Requests int64
			OK       int64
			Errors   map[string]int64
		}
		json.Unmarshal([]byte(out), &got)
		var n int64
		for _, s := range c.status {
			n += got.Errors[s]
		}
		if code != exitCheckFailed || got.Requests != 20 || got.OK != 0 || n != 20 || !strings.Contains(stderr, "no request succeeded") {
			t.Errorf("%s server: exit %d, %+v (%s); want 20 requests counted as %v, and exit 1: none succeeded", c.name, code, got, stderr, c.status)
		}
	}
}

// One validate run lists an unset ${env.*} together with the study's other
// errors, in file order, each with its file:line:col; ${env.*} where
// tandem does not resolve it is refused there. (An unset variable used to
// be reported only once the rest was right.)
func TestValidateListsEnvWithOtherErrors(t *testing.T) {
	f := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(f, []byte(`version: 1
name: env
targets:
  - name: a
    endpoints: {http: "http://127.0.0.1:1/"}
calls:
  ping: {grpc: {method: a.B/C, metadata: {authorization: "Bearer ${env.REL_UNSET_TOKEN}"}, proto: ["${env.REL_UNSET_DIR}/a.proto"]}}
scenarios:
  - {name: s, call: nope, load: {steps: [{rate: 0, duration: 1s}]}}
`), 0o644)
	code, stdout, stderr := tandem(t, "validate", f)
	want := []string{
		f + `:7:58: calls.ping.grpc.metadata.authorization: environment variable REL_UNSET_TOKEN is not set`,
		f + `:7:100: calls.ping.grpc.proto[0]: ${env.REL_UNSET_DIR} is not resolved here`,
		f + `:9:21: scenarios[0].call: undefined call "nope"`,
		f + `:9:41: scenarios[0].load.steps: every step's rate is 0`,
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != exitBadInput || stdout != "" || len(lines) != len(want) {
		t.Fatalf("validate: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %d errors", code, stdout, stderr, len(want))
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("error %d: %s\nwant %s", i, lines[i], w)
		}
	}
}
