package runner

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/finding"
	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
	"github.com/tandem-bench/tandem/sample"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/study"
)

// The test binary doubles as the sample service: with TANDEM_TEST_SAMPLE=1
// it serves instead of testing, so targets are real child processes.
func TestMain(m *testing.M) {
	if os.Getenv("TANDEM_TEST_SAMPLE") == "1" {
		os.Exit(serveSample(os.Args[1:]))
	}
	if os.Getenv("TANDEM_TEST_DELAY") == "1" {
		os.Exit(serveDelay(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// serveDelay is a target whose GET /ping takes --delay, and which listens
// only --start-delay after it starts.
func serveDelay(args []string) int {
	fs := flag.NewFlagSet("delay", flag.ContinueOnError)
	addr := fs.String("addr", "", "")
	delay := fs.Duration("delay", 0, "")
	startDelay := fs.Duration("start-delay", 0, "")
	dieAfter := fs.Int64("die-after", 0, "exit after this many requests")
	garbage := fs.Bool("garbage", false, "answer with bytes that are not HTTP")
	failEvery := fs.Int64("fail", 0, "answer an instant 503 to all but every this-many-th request")
	fs.String("token", "", "a secret, ignored")
	bindRace := fs.String("lose-bind-race", "", "the first start (this file absent) fails as a lost bind race")
	lateRace := fs.String("lose-late-bind-race", "", "the first start (this file absent) answers, then fails as a lost bind race of a port it binds later")
	listenLog := fs.String("listen-log", "", "append the time (unix ns) the server began to listen to this file")
	restarted := fs.String("restart-mark", "", "every start creates this file; a start that finds it (not wiped) is a restart")
	failFor := fs.Duration("fail-for", 0, "a restart (see --restart-mark) answers an instant 503 to every request for this long after it listens")
	status := fs.String("status", "", "GET /status answers this JSON")
	peers := fs.String("peers", "", "GET /fan asks GET /ping of each of these host:ports in turn (?peer=K: the K-th only), then answers")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	restart := false
	if *restarted != "" {
		_, err := os.Stat(*restarted)
		restart = err == nil
		if err := os.WriteFile(*restarted, nil, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if *bindRace != "" {
		if _, err := os.Stat(*bindRace); err != nil {
			os.WriteFile(*bindRace, nil, 0o644)
			fmt.Fprintf(os.Stderr, "listen tcp %s: bind: address already in use\n", *addr)
			return 1
		}
	}
	var served atomic.Int64
	time.Sleep(*startDelay)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if *listenLog != "" {
		f, err := os.OpenFile(*listenLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(f, time.Now().UnixNano())
		f.Close()
	}
	fmt.Println("listening on", ln.Addr()) // a log line for readiness
	if *lateRace != "" {
		if _, err := os.Stat(*lateRace); err != nil {
			os.WriteFile(*lateRace, nil, 0o644)
			go func() { // as CometBFT: RPC answers, then the peers' port is taken
				time.Sleep(50 * time.Millisecond)
				fmt.Fprintln(os.Stderr, "failed to listen on 127.0.0.1:1: bind: address already in use")
				os.Exit(1)
			}()
		}
	}
	var sickUntil time.Time
	if restart {
		sickUntil = time.Now().Add(*failFor)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if *status != "" && req.URL.Path == "/status" {
			io.WriteString(w, *status)
			return
		}
		if req.URL.Path == "/fan" {
			asked := strings.Split(*peers, ",")
			if k, err := strconv.Atoi(req.URL.Query().Get("peer")); err == nil && k >= 0 && k < len(asked) {
				asked = asked[k : k+1] // ?peer=K: the K-th peer only
			}
			for _, p := range asked {
				resp, err := http.Get("http://" + p + "/ping")
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadGateway)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			io.WriteString(w, "fanned")
			return
		}
		if time.Now().Before(sickUntil) {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if n := served.Add(1); *dieAfter > 0 && n > *dieAfter {
			fmt.Fprintln(os.Stderr, "fatal: out of budget after", *dieAfter, "requests")
			os.Exit(7)
		}
		if n := served.Load(); *failEvery > 0 && n%*failEvery != 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if *garbage {
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				io.WriteString(c, "\x00\x01 NOT HTTP AT ALL\r\n\r\n")
				c.Close()
			}
			return
		}
		end := time.Now().Add(*delay)
		if *delay > time.Millisecond {
			time.Sleep(*delay - time.Millisecond)
		}
		for time.Now().Before(end) {
		}
		io.WriteString(w, "pong")
	})}
	go func() {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
		<-sigs
		srv.Close()
	}()
	srv.Serve(ln)
	return 0
}

func serveSample(args []string) int {
	fs := flag.NewFlagSet("sample", flag.ContinueOnError)
	var o sample.Options
	build := fs.String("build", "a", "")
	fs.StringVar(&o.DataDir, "data", "", "")
	fs.StringVar(&o.GRPCAddr, "grpc", "", "")
	fs.StringVar(&o.HTTPAddr, "http", "", "")
	fs.IntVar(&o.Blocks, "blocks", 300, "")
	fs.IntVar(&o.Work, "work", 10, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o.Build = sample.Build(*build)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	s, err := sample.Start(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sample:", err)
		return 1
	}
	<-ctx.Done()
	s.Close()
	return 0
}

const testStudy = `
version: 1
name: runner test
defaults: {rounds: 2, warmup: 100ms, min_duration: 200ms, timeout: 5s}
targets:
  - name: a
    start:
      command: ["${tandem}", --build, a, --data, "${workdir}/data", --grpc, "127.0.0.1:${port.grpc}", --http, "127.0.0.1:${port.http}"]
      env: {TANDEM_TEST_SAMPLE: "1"}
      wipe: ["${workdir}/data"]
    endpoints: {grpc: "127.0.0.1:${port.grpc}", http: "http://127.0.0.1:${port.http}/"}
    ready:
      first_answer: {call: ping}
      condition: {call: info, path: indexed, equals: true}
      timeout: 5m
    data_dir: ${workdir}/data
  - name: b
    start:
      command: ["${tandem}", --build, b, --data, "${workdir}/data", --grpc, "127.0.0.1:${port.grpc}", --http, "127.0.0.1:${port.http}", --work, "%d"]
      env: {TANDEM_TEST_SAMPLE: "1"}
      wipe: ["${workdir}/data"]
    endpoints: {grpc: "127.0.0.1:${port.grpc}", http: "http://127.0.0.1:${port.http}/"}
    ready:
      first_answer: {call: ping}
      condition: {call: info, path: indexed, equals: true}
      timeout: 5m
    data_dir: ${workdir}/data
calls:
  ping: {grpc: {method: tandem.sample.v1.Ledger/Ping}}
  info: {grpc: {method: tandem.sample.v1.Ledger/Info}}
  block: {grpc: {method: tandem.sample.v1.Ledger/GetBlock, request: {height: 7}}}
  balance: {jsonrpc: {method: getbalance, params: [tz1000042]}}
scenarios:
  - {name: block, call: block, load: {concurrency: 1}, requests: 40}
  - {name: balance, call: balance, load: {concurrency: 1}, requests: 15, rounds: 8}
  - {name: scaling, call: block, metric: throughput, load: {concurrency: [1, 4]}}
  - {name: open, call: block, load: {rate: 200, connections: 2}, duration: 500ms}
  - {name: batched, call: block, load: {batch: {per_period: 10, period: 100ms}, connections: 2}, duration: 500ms}
`

func options(t *testing.T, progress io.Writer) Options {
	if progress == nil && os.Getenv("TANDEM_TEST_PROGRESS") == "1" {
		progress = os.Stderr // to see where a test's time goes
	}
	return Options{Out: t.TempDir(), Self: os.Args[0], Version: "test", StopGrace: 5 * time.Second, Progress: progress}
}

// readResults reads the results file a run wrote in dir.
func readResults(t *testing.T, dir string) *results.Results {
	t.Helper()
	return runtest.ReadResults(t, filepath.Join(dir, ResultsFile))
}

func TestRunStudy(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // waits on targets; its verdicts are on a delayed-ACK stall (40 ms against < 1 ms)
	progress := &runtest.Progress{}
	o := options(t, progress)
	if os.Getenv("TANDEM_TEST_PROGRESS") == "1" {
		o.Progress = io.MultiWriter(progress, os.Stderr)
	}
	s := runtest.Parse(t, fmt.Sprintf(testStudy, 3000))
	res, err := Run(context.Background(), s, o)
	if err != nil {
		t.Fatalf("Run: %v\nprogress:\n%s", err, progress)
	}
	onDisk := readResults(t, o.Out)
	if onDisk.Policy == nil || *onDisk.Policy != s.Defaults.Policy() {
		t.Errorf("results record the policy %+v; want the study's %+v", onDisk.Policy, s.Defaults.Policy())
	}
	if onDisk.Interrupted || len(onDisk.Scenarios) != 5 || onDisk.Study.ConfigSHA256 != s.SHA256 {
		t.Errorf("results on disk: interrupted %v, %d scenarios, sha %q", onDisk.Interrupted, len(onDisk.Scenarios), onDisk.Study.ConfigSHA256)
	}
	for _, tg := range res.Targets {
		st := tg.Startup
		if st == nil || tg.Error != "" {
			t.Fatalf("target %s: startup %v, error %q", tg.Name, st, tg.Error)
		}
		if want := filepath.Join(o.Out, "work", tg.Name, "data"); tg.DataDir != want || !filepath.IsAbs(tg.DataDir) {
			t.Errorf("target %s: data_dir %q; want %q", tg.Name, tg.DataDir, want)
		}
		if st.FirstAnswerNs <= 0 || st.FirstAnswerNs > st.ReadyNs || st.CPUNs <= 0 || st.PeakRSSBytes <= 0 || st.DiskBytes <= 0 {
			t.Errorf("target %s: startup %+v; want 0 < first answer ≤ ready and positive CPU, RSS, disk", tg.Name, st)
		}
	}
	if b := res.Targets[1].Startup; b.ReadyNs-b.FirstAnswerNs < int64(20*time.Millisecond) {
		t.Errorf("b: first answer %v, ready %v; b answers from its slow path well before its index is ready",
			time.Duration(b.FirstAnswerNs), time.Duration(b.ReadyNs))
	}
	block := res.Scenarios[0]
	var order []string
	for _, rd := range block.Rounds {
		order = append(order, fmt.Sprintf("%d%s", rd.Round, rd.Target))
		if rd.Failed || rd.OK != 40 || rd.Requests != 40 || rd.HDR == "" || rd.Headline != float64(rd.LatencyNs.P50) {
			t.Errorf("round %d %s: failed %v, ok %d of %d, headline %v, p50 %d", rd.Round, rd.Target, rd.Failed, rd.OK, rd.Requests, rd.Headline, rd.LatencyNs.P50)
		}
	}
	if got := strings.Join(order, " "); got != "1a 1b 2b 2a" {
		t.Errorf("round order %q; want interleaved \"1a 1b 2b 2a\"", got)
	}
	if len(block.Summary) != 2 || block.Summary[0].N != 2 || len(block.Comparisons) != 1 {
		t.Errorf("block: summary %+v, comparisons %+v", block.Summary, block.Comparisons)
	}
	// Build b leaves TCP_NODELAY off and writes in two writes: its JSON-RPC
	// answers meet the client's delayed ACK, which holds them at least
	// 40 ms on Linux: a floor however busy the machine (how many times a's
	// answers they take is not asked).
	bal := res.Scenarios[1]
	if len(bal.Comparisons) != 1 || bal.Comparisons[0].Verdict != "slower" || bal.Comparisons[0].Ratio <= 1 {
		t.Errorf("balance comparison %+v; want b slower", bal.Comparisons)
	}
	var stalled []string // b's balance rounds, for the diagnosis below
	for _, rd := range bal.Rounds {
		if rd.Target != "b" {
			continue
		}
		stalled = append(stalled, rd.HDR)
		if p50 := time.Duration(rd.LatencyNs.P50); rd.Failed || p50 < finding.StallLo {
			t.Errorf("balance round %d on b: failed %v, p50 %v; want the delayed ACK's stall, ≥ %v", rd.Round, rd.Failed, p50, finding.StallLo)
		}
	}
	scaling := res.Scenarios[2]
	if scaling.Requests < minCalibrated || len(scaling.Summary) != 4 || len(scaling.Comparisons) != 2 {
		t.Errorf("scaling: %d requests per run, %d summaries, %d comparisons; want calibrated ≥ %d, 4, 2",
			scaling.Requests, len(scaling.Summary), len(scaling.Comparisons), minCalibrated)
	}
	for _, sum := range scaling.Summary {
		if sum.Best < sum.Worst || sum.Best <= 0 {
			t.Errorf("throughput summary %+v: best must be the highest", sum)
		}
	}
	open := res.Scenarios[3]
	if open.Load.Model != "open" || open.Load.Rate != 200 || len(open.Rounds) != 4 || len(open.Comparisons) != 1 {
		t.Errorf("open loop scenario: %+v", open.Load)
	}
	for _, rd := range open.Rounds {
		if rd.Failed || rd.Requests+rd.Unfinished+rd.Dropped != 100 || rd.ScheduleLagNs == nil || rd.OfferedRate < 195 || rd.OfferedRate > 205 {
			t.Errorf("open round %d %s: %d sent, %d dropped, offered %.1f; want 100 arrivals at 200/s", rd.Round, rd.Target, rd.Requests, rd.Dropped, rd.OfferedRate)
		}
	}
	batched := res.Scenarios[4]
	for _, rd := range batched.Rounds {
		if rd.Failed || rd.Requests+rd.Unfinished+rd.Dropped != 100 || batched.Load.PerPeriod != 10 || batched.Load.Rate != 200 {
			t.Errorf("batched round %d %s: %d sent, %d dropped; want 2 connections × 10 × 5 periods", rd.Round, rd.Target, rd.Requests, rd.Dropped)
		}
	}
	// The stall is suspected on b when its rounds show it (the share of
	// answers inside the stall's window), confirmed by the TCP_QUICKACK
	// probe, and never found on its healthy twin a. A busy machine can
	// push the stalled answers past the window's 48 ms, and the probes'
	// answers with them: whether the finding is made then is the
	// machine's, so the rounds' share decides what is asked.
	// (gRPC answers may stall too, depending on how the client's HTTP/2
	// frames happen to carry ACKs: that is b's to fix as well.)
	merged, err := hdr.Merge(stalled...)
	if err != nil {
		t.Fatal(err)
	}
	share := hdr.Fraction(merged, finding.StallLo, finding.StallHi)
	t.Logf("b's balance answers inside the stall window: %.0f %%", 100*share)
	onBalance := false
	for _, f := range res.Findings {
		if f.ID != finding.DelayedACKStall || f.Target != "b" {
			t.Errorf("finding %s on %s in scenario %s (%s; evidence %v); want delayed-ack-stall findings on b only", f.ID, f.Target, f.Scenario, f.Summary, f.Evidence)
		}
		if ev := f.Evidence; ev["quickack_p50_ns"] == "" || ev["probe_hdr"] == "" || ev["fix"] == "" {
			t.Errorf("finding evidence %v lacks the probes or the fix", ev)
		}
		onBalance = onBalance || f.Scenario == "balance"
	}
	if suspect := "diagnosis: b answers balance in " + finding.Window(); share >= finding.SuspectShare && !strings.Contains(progress.String(), suspect) {
		t.Errorf("b's balance rounds answered %.0f %% inside the stall window, and the progress lacks %q: it was not probed", 100*share, suspect)
	}
	if len(res.Findings) > 0 && !strings.Contains(progress.String(), "finding delayed-ack-stall on b") {
		t.Errorf("findings %+v; the progress does not say them", res.Findings)
	}
	// where b's answers sit in the window, the probes are made; whether
	// they confirm the stall is the machine's (a busy one stalls the
	// quick-ACK probe's answers too: finding.TestConfirmed holds the
	// rule), but a probe that does not confirm must say why
	if why := "diagnosis: no finding on b's balance: "; !onBalance && share >= finding.SuspectShare && !strings.Contains(progress.String(), why) {
		t.Errorf("b's balance rounds answered %.0f %% inside the stall window, no finding was made, and the progress lacks %q", 100*share, why)
	} else if !onBalance {
		t.Logf("no finding on b's balance: the probes did not confirm it on this machine (findings %+v)", res.Findings)
	}
	for _, want := range []string{"target a: first answer", "calibrated to", "round 2/2 a", "offered 200/s"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q", want)
		}
	}
	assertStopped(t, res)
}

// assertStopped checks that no target still listens on its ports.
func assertStopped(t *testing.T, res *results.Results) {
	t.Helper()
	for _, tg := range res.Targets {
		for _, arg := range tg.Command {
			if strings.HasPrefix(arg, "127.0.0.1:") {
				if c, err := net.DialTimeout("tcp", arg, time.Second); err == nil {
					c.Close()
					t.Errorf("target %s still listens on %s after the run", tg.Name, arg)
				}
			}
		}
	}
}

func TestRunInterrupted(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // asserts what happened, not how fast
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := &runtest.Progress{OnLog: func(line string) {
		if strings.Contains(line, "round 1/2 b") {
			cancel()
		}
	}}
	o := options(t, progress)
	res, err := Run(ctx, runtest.Parse(t, fmt.Sprintf(testStudy, 10)), o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error %v; want context.Canceled", err)
	}
	if !res.Interrupted {
		t.Error("results not marked interrupted")
	}
	onDisk := readResults(t, o.Out)
	if !onDisk.Interrupted || len(onDisk.Scenarios) != 1 || len(onDisk.Scenarios[0].Rounds) != 2 {
		t.Errorf("on disk: interrupted %v, scenarios %d; want interrupted with the two rounds done", onDisk.Interrupted, len(onDisk.Scenarios))
	}
	assertStopped(t, res)
}

func TestTargetFailures(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // asserts what happened, not how fast
	cases := []struct {
		name, yaml, want string
	}{
		{"exits at start", `
version: 1
name: t
targets:
  - name: bad
    start:
      command: ["${tandem}", --build, z, --data, "${workdir}/d"]
      env: {TANDEM_TEST_SAMPLE: "1"}
    endpoints: {grpc: "127.0.0.1:${port.grpc}"}
    ready: {first_answer: {call: ping}, timeout: 5m}
calls:
  ping: {grpc: {method: tandem.sample.v1.Ledger/Ping}}
scenarios:
  - {name: s, call: ping, load: {concurrency: 1}, requests: 5}
`, `target bad exited: exit status 1; last output:
    sample: build "z": want a or b`},
		{"never ready", `
version: 1
name: t
targets:
  - name: slow
    start:
      command: ["${tandem}", --build, a, --data, "${workdir}/d", --grpc, "127.0.0.1:${port.grpc}"]
      env: {TANDEM_TEST_SAMPLE: "1"}
    endpoints: {grpc: "127.0.0.1:${port.grpc}"}
    ready: {condition: {call: info, path: build, equals: "c"}, timeout: 1s}
calls:
  info: {grpc: {method: tandem.sample.v1.Ledger/Info}}
`, `target slow: not ready after 1s`},
		{"missing binary", `
version: 1
name: t
targets:
  - name: gone
    start: {command: [/nonexistent/server]}
    endpoints: {grpc: "127.0.0.1:1"}
calls:
  ping: {grpc: {method: a.B/C}}
`, `start target gone: exec: "/nonexistent/server": stat /nonexistent/server: no such file or directory`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := options(t, nil)
			res, err := Run(context.Background(), runtest.Parse(t, c.yaml), o)
			var te *TargetError
			if !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Run error %v; want a TargetError containing %q", err, c.want)
			}
			onDisk := readResults(t, o.Out)
			if !strings.Contains(onDisk.Targets[0].Error, c.want) || onDisk.Targets[0].Startup != nil || res.Interrupted {
				t.Errorf("target in results: %+v", onDisk.Targets[0])
			}
		})
	}
}

func TestHolds(t *testing.T) {
	answer := []byte(`{"indexed": true, "height": "300", "n": 4, "build": "a", "list": [{"x": 1}]}`)
	cases := []struct {
		path string
		want any
		ok   bool
	}{
		{"indexed", true, true},
		{"indexed", false, false},
		{"height", int64(300), true},
		{"n", int64(4), true},
		{"n", 4.0, true},
		{"build", "a", true},
		{"list.0.x", int64(1), true},
		{"list[0].x", int64(1), true},
		{"list[*].x", []any{1}, true},
		{"list.1.x", int64(1), false},
		{"list[1].x", int64(1), false},
		{"missing.deep", int64(1), false},
		{"missing.deep", nil, true}, // a missing field is null
	}
	for _, c := range cases {
		if ok, got := Holds(answer, c.path, c.want); ok != c.ok {
			t.Errorf("Holds(%s == %v) = %v (value %s); want %v", c.path, c.want, ok, got, c.ok)
		}
	}
}

// TestMeets: each readiness predicate holds and fails where it should,
// on numbers, numeric strings (protojson's 64-bit integers) and text.
func TestMeets(t *testing.T) {
	answer := []byte(`{"result": {"sync_info": {"latest_block_height": "7", "catching_up": false}, "n": 2.5, "v": "v1.0.1", "list": [3]}}`)
	f := func(x float64) *float64 { return &x }
	cases := []struct {
		c  study.Condition
		ok bool
	}{
		{study.Condition{Path: "result.sync_info.latest_block_height", AtLeast: f(1)}, true},
		{study.Condition{Path: "result.sync_info.latest_block_height", AtLeast: f(8)}, false},
		{study.Condition{Path: "result.sync_info.latest_block_height", Above: f(7)}, false},
		{study.Condition{Path: "result.sync_info.latest_block_height", Above: f(6)}, true},
		{study.Condition{Path: "result.n", AtMost: f(2.5)}, true},
		{study.Condition{Path: "result.n", Below: f(2.5)}, false},
		{study.Condition{Path: "result.v", Matches: `^v1\.`}, true},
		{study.Condition{Path: "result.v", Matches: `^v0\.`}, false},
		{study.Condition{Path: "result.list", Matches: `^\[3\]$`}, true}, // not a string: its JSON
		{study.Condition{Path: "result.v", AtLeast: f(1)}, false},        // not a number
		{study.Condition{Path: "result.sync_info.catching_up", Below: f(1)}, false},
		{study.Condition{Path: "result.missing", AtLeast: f(0)}, false},
		{study.Condition{Path: "result.sync_info.catching_up", Equals: study.NewValue(false)}, true},
	}
	for _, tc := range cases {
		if ok, got := Meets(answer, &tc.c); ok != tc.ok {
			t.Errorf("%s %s: %v (value %s); want %v", tc.c.Path, tc.c.Predicate(), ok, got, tc.ok)
		}
	}
	if ok, _ := Meets([]byte("not json"), &study.Condition{Path: "x", AtLeast: f(0)}); ok {
		t.Error("an answer that is not JSON met a predicate")
	}
}

func TestSplitCPUs(t *testing.T) {
	cases := []struct {
		name           string
		allowed, given []int
		gen, target    string
		warning        string
	}{
		{"one core", []int{0}, nil, "[]", "[]", "one CPU core"},
		{"two", []int{0, 1}, nil, "[0]", "[1]", ""},
		{"eight", []int{0, 1, 2, 3, 4, 5, 6, 7}, nil, "[0 1 2 3]", "[4 5 6 7]", ""},
		{"odd", []int{0, 1, 2}, nil, "[0]", "[1 2]", ""},
		{"a cpuset", []int{4, 5, 6, 7}, nil, "[4 5]", "[6 7]", ""},
		{"given", []int{0, 1, 2, 3}, []int{0, 2, 3}, "[0 2 3]", "[1]", ""},
		{"given the last", []int{0, 1, 2, 3}, []int{3}, "[3]", "[0 1 2]", ""},
		{"given all", []int{0, 1}, []int{0, 1}, "[0 1]", "[]", "generator.cpus 0-1 takes every CPU"},
		{"given the one", []int{0}, []int{0}, "[0]", "[]", "generator.cpus 0 takes every CPU"},
	}
	for _, c := range cases {
		g, tg, warning := splitCPUs(c.allowed, c.given)
		if fmt.Sprint(g) != c.gen || fmt.Sprint(tg) != c.target || !strings.HasPrefix(warning, c.warning) || (warning == "") != (c.warning == "") {
			t.Errorf("%s: splitCPUs(%v, %v) = %v, %v, %q; want %s, %s, %q…", c.name, c.allowed, c.given, g, tg, warning, c.gen, c.target, c.warning)
		}
	}
}

// Six rounds give the paired-ratio interval and the sign test.
func TestPairedRounds(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // waits on targets; the verdict is on a delayed-ACK stall (40 ms against < 1 ms)
	o := options(t, nil)
	o.Only, o.Rounds = []string{"balance"}, 6
	s := runtest.Parse(t, fmt.Sprintf(testStudy, 10))
	s.Scenarios[1].Requests = 5
	res, err := Run(context.Background(), s, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenarios) != 1 || len(res.Scenarios[0].Comparisons) != 1 {
		t.Fatalf("scenarios %+v", res.Scenarios)
	}
	c := res.Scenarios[0].Comparisons[0]
	p := c.Paired
	// every pair counted and its sign test exact; b, behind the 40 ms
	// stall, slower in
	// most pairs: a machine busy enough to hold most of a's 5 requests
	// 40 ms in one round made that pair go the other way (5 of 6 were
	// seen, p 7/32), and a whole 6 of 6 (p 1/32) is the quiet machine's
	signP := map[int]float64{6: 1.0 / 32, 5: 7.0 / 32, 4: 22.0 / 32}
	if p == nil || p.N != 6 || p.Above+p.Below != 6 || p.Above < 4 || math.Abs(p.SignP-signP[p.Above]) > 1e-9 || p.Confidence < 0.96 || p.Lo > p.Hi {
		t.Errorf("paired %+v; want 6 pairs, b slower in most, the sign test's p of that count", p)
	}
	// the stall shows in most of b's rounds (beside two suites one round's
	// median fell to 15 ms: the machine, not the server, set its pace)
	stalled, bRounds := 0, 0
	for _, rd := range res.Scenarios[0].Rounds {
		if rd.Target == "b" {
			bRounds++
			if time.Duration(rd.LatencyNs.P50) >= 36*time.Millisecond {
				stalled++
			}
		}
	}
	if 2*stalled <= bRounds {
		t.Errorf("%d of b's %d rounds show the delayed ACK's stall (p50 at least 36 ms); want most", stalled, bRounds)
	}
	for _, rd := range res.Scenarios[0].Rounds {
		if rd.GeneratorCPUNs <= 0 || rd.GeneratorCPUUse <= 0 || rd.GeneratorCPUUse > 1 {
			t.Errorf("round %d %s: generator CPU %d ns, use %.2f (engine %s %d ns over %d ns, %d requests)", rd.Round, rd.Target, rd.GeneratorCPUNs, rd.GeneratorCPUUse, rd.Engine, rd.EngineCPUNs, rd.DurationNs, rd.Requests)
		}
	}
}

// summarizeRuns is a runner with targets a (the baseline) and b, both
// probed over ping, and a scenario of ping at 8 clients whose rounds run
// 8,000 requests/s each (125 µs per request) at the given headlines.
func summarizeRuns(rtt int64, aHead, bHead float64) (*runner, *study.Scenario, *results.Scenario, []*live) {
	ping := &study.Call{HTTP: &study.HTTPCall{}}
	s := &study.Study{Baseline: "a", Calls: study.Calls{"ping": ping, "other": {GRPC: &study.GRPCCall{}}},
		Defaults: study.Defaults{NoiseFloor: 2, MaxErrorShareDiff: 1, MaxShortfall: 1, ClientBound: 90}}
	eps := map[string]string{"http": "http://127.0.0.1:1/", "grpc": "127.0.0.1:2"}
	r := &runner{s: s, res: results.New(), policy: s.Defaults.Policy()}
	r.res.Targets = []results.Target{{Name: "a", RTTNs: rtt, RTTCall: "ping"}, {Name: "b"}}
	ls := []*live{{spec: &study.Target{Name: "a", Endpoints: eps}, res: &r.res.Targets[0]}, {spec: &study.Target{Name: "b", Endpoints: eps}, res: &r.res.Targets[1]}}
	r.live = ls
	out := &results.Scenario{Load: results.Load{Model: "closed"}}
	for round := 1; round <= summarizeRounds; round++ {
		smp := results.Sample{Requests: 8000, OK: 8000, DurationNs: 1e9, UnitsPerS: 8000}
		out.Rounds = append(out.Rounds,
			results.Round{Round: round, Target: "a", Concurrency: 8, Headline: aHead, GeneratorCPUUse: 0.5, Sample: smp},
			results.Round{Round: round, Target: "b", Concurrency: 8, Headline: bHead, GeneratorCPUUse: 0.5, Sample: smp})
	}
	return r, &study.Scenario{Call: "ping"}, out, ls
}

// summarizeRounds rounds at false-alarm rate 0.05 are enough for a 4×
// difference to be decided.
const summarizeRounds = 10

var summarizeDesign = stats.Design{Paired: true, Alpha: 0.05}

func TestSummarizeMarks(t *testing.T) {
	r, sc, out, ls := summarizeRuns(0, 1000, 4000)
	r.summarize(sc, out, ls, 8, summarizeDesign)
	if c := out.Comparisons[0]; c.Verdict != "slower" || c.ClientBound || c.ServerBound {
		t.Errorf("4× slower with an idle generator: %+v", c)
	}
	// server-bound: a's rounds run 8 clients at 8,000/s, 125 µs per
	// request; RTT ÷ 8 ≥ ½ × 125 µs holds for an RTT of 900 µs, not for
	// 100 µs; never at one client (it holds there by construction), nor
	// with a round trip of another transport than the scenario's call
	for _, c := range []struct {
		rtt   int64
		level int
		call  string
		want  bool
		why   string
	}{{900_000, 8, "ping", true, ""}, {100_000, 8, "ping", false, ""}, {900_000, 1, "ping", false, "at one client"},
		{900_000, 8, "other", false, "another transport"}} {
		r, sc, out, ls := summarizeRuns(c.rtt, 1000, 4000)
		sc.Call = c.call
		for i := range out.Rounds {
			out.Rounds[i].Concurrency = c.level
		}
		r.summarize(sc, out, ls, c.level, summarizeDesign)
		if got := out.Comparisons[0]; got.ServerBound != c.want || !strings.Contains(got.Reason, c.why) {
			t.Errorf("RTT %v, %d clients, call %s, 125 µs per request: server-bound %v (%s); want %v (%s)",
				time.Duration(c.rtt), c.level, c.call, got.ServerBound, got.Reason, c.want, c.why)
		}
	}
	// one busy round is a hiccup; a generator busy in most rounds set the pace
	r, sc, out, ls = summarizeRuns(0, 1000, 4000)
	out.Rounds[3].GeneratorCPUUse = 0.97
	r.summarize(sc, out, ls, 8, summarizeDesign)
	if c := out.Comparisons[0]; c.Verdict != "slower" || c.ClientBound {
		t.Errorf("generator at 97%% in one round: %+v; want slower", c)
	}
	r, sc, out, ls = summarizeRuns(0, 1000, 4000)
	for i := range out.Rounds {
		if out.Rounds[i].Target == "b" {
			out.Rounds[i].GeneratorCPUUse = 0.97
		}
	}
	r.summarize(sc, out, ls, 8, summarizeDesign)
	if c := out.Comparisons[0]; c.Verdict != "withheld" || !c.ClientBound || !strings.Contains(c.Reason, "97.0 %") {
		t.Errorf("generator at 97%% in every round of b: %+v; want the verdict withheld and client-bound", c)
	}
}

// A round with no successful unit is failed (NaN), whichever the
// direction: a throughput of 0 is no figure to judge by.
func TestHeadline(t *testing.T) {
	cases := []struct {
		s      results.Sample
		higher bool
		want   float64
	}{
		{results.Sample{OK: 10, UnitsPerS: 500, LatencyNs: results.Distribution{P50: 2000}}, false, 2000},
		{results.Sample{OK: 10, UnitsPerS: 500, LatencyNs: results.Distribution{P50: 2000}}, true, 500},
		{results.Sample{Requests: 10, OK: 0}, false, math.NaN()},
		{results.Sample{Requests: 10, OK: 0}, true, math.NaN()},
		{results.Sample{Requests: 10, OK: 10, UnitsPerS: 0}, true, math.NaN()},
	}
	for _, c := range cases {
		if got := headline(c.s, c.higher); got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("headline(%+v, higher %v) = %v; want %v", c.s, c.higher, got, c.want)
		}
	}
}

// The event loop runs on one thread: its generator use is a share of one
// core, so client-bound can fire on a machine of many cores.
func TestGeneratorCapacity(t *testing.T) {
	r := &runner{generatorCores: 8}
	if got := r.generatorCapacity(load.EngineLoop); got != 1 {
		t.Errorf("event loop on 8 cores: capacity %v; want 1", got)
	}
	if got := r.generatorCapacity(load.EngineWorkers); got != 8 {
		t.Errorf("workers on 8 cores: capacity %v; want 8", got)
	}
}

func TestStartupRuns(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // asserts what happened, not how fast
	o := options(t, nil)
	o.Only = []string{"startup"}
	s := runtest.Parse(t, fmt.Sprintf(testStudy, 3000))
	s.Startup = &study.Startup{Runs: 3}
	res, err := Run(context.Background(), s, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenarios) != 0 {
		t.Errorf("--only startup ran %d scenarios", len(res.Scenarios))
	}
	for _, tg := range res.Targets {
		if len(tg.StartupRuns) != 3 || tg.Startup == nil {
			t.Fatalf("%s: %d startup runs, startup %v; want 3 and their median", tg.Name, len(tg.StartupRuns), tg.Startup)
		}
		var firsts []int64
		for _, run := range tg.StartupRuns {
			firsts = append(firsts, run.FirstAnswerNs)
		}
		slices.Sort(firsts)
		if tg.Startup.FirstAnswerNs != firsts[1] {
			t.Errorf("%s: first answer %d; want the median of %v", tg.Name, tg.Startup.FirstAnswerNs, firsts)
		}
	}
	assertStopped(t, res)
}

// Identical targets are indistinguishable (five rounds, so that their spread
// shows the machine's noise); a 4× slower one is slower; one
// that listens only after 1.5 s has its first answer after 1.5 s.
func TestVerdictsOnRealTargets(t *testing.T) {
	tooltest.Long(t)
	target := func(name, delay, startDelay string) string {
		return fmt.Sprintf(`
  - name: %s
    start:
      command: ["${tandem}", --addr, "127.0.0.1:${port.http}", --delay, %s, --start-delay, %s]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://127.0.0.1:${port.http}/ping"}
    ready: {first_answer: {call: ping}, timeout: 5m}`, name, delay, startDelay)
	}
	// adaptive rounds at α = 0.001: a 4× difference is found whatever the
	// machine is doing, and two identical targets get a speed verdict once
	// in a thousand runs at most
	src := "version: 1\nname: verdicts\ndefaults: {warmup: 100ms, alpha: 0.001, max_rounds: 20}\ntargets:" +
		target("x", "1ms", "0s") + target("y", "1ms", "0s") + target("z", "4ms", "1500ms") + `
calls:
  ping: {http: {path: ""}}
scenarios:
  - {name: latency, call: ping, load: {concurrency: 1}, requests: 100}
  - {name: open, call: ping, load: {rate: 300, connections: 2, engine: loop}, duration: 1s, rounds: 2, targets: [x, z]}
  - {name: closed-quantum, call: ping, load: {concurrency: 2, engine: loop, quantum: 200us}, requests: 100, rounds: 1, targets: [x]}
`
	res, err := Run(context.Background(), runtest.Parse(t, src), options(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	// the open loop on the event-loop engine: every one of its 300
	// arrivals accounted for, none failed, and no answer faster than the
	// server's delay (how many a busy machine sends in time is not asked)
	floor := map[string]time.Duration{"x": time.Millisecond, "y": time.Millisecond, "z": 4 * time.Millisecond}
	for _, rd := range res.Scenarios[1].Rounds {
		if rd.Failed || rd.Requests+rd.Unfinished+rd.Dropped != 300 || rd.OK == 0 || rd.OK != rd.Requests ||
			time.Duration(rd.LatencyNs.P50) < floor[rd.Target] {
			t.Errorf("open loop (engine loop) round %d on %s: %+v; want 300 arrivals, every one sent answered, p50 ≥ %v",
				rd.Round, rd.Target, rd.Sample, floor[rd.Target])
		}
	}
	// the closed loop on the event loop with a quantum: recorded, with the
	// generator's think time
	if sc := res.Scenarios[2]; sc.Load.Engine != "loop" || sc.Load.QuantumNs != int64(200*time.Microsecond) || len(sc.Rounds) != 1 ||
		sc.Rounds[0].OK != 100 || sc.Rounds[0].ThinkTimeNs == nil {
		t.Errorf("closed loop with a quantum: load %+v, rounds %+v", sc.Load, sc.Rounds)
	}
	// (two rounds decide no verdict on a machine the -race suite shares:
	// the closed-loop scenario above holds the verdicts)
	if cs := res.Scenarios[1].Comparisons; len(cs) != 1 || cs[0].Candidate != "z" {
		t.Errorf("open loop, 1 ms vs 4 ms: comparisons %+v; want z against x", cs)
	}
	cs := res.Scenarios[0].Comparisons
	if len(cs) != 2 {
		t.Fatalf("comparisons %+v", cs)
	}
	if cs[0].Candidate != "y" || cs[0].Verdict.Speed() || cs[0].Estimate == nil {
		t.Errorf("two identical 1 ms targets: %+v; want no speed verdict", cs[0])
	}
	// how much slower a busy machine shows z is not asked, only that it
	// is, and that none of its answers beat its server's 4 ms; a machine
	// running two suites at once made x's rounds scatter past z's (the
	// interval [0.85× … 5.0×] after 17 rounds): inconclusive, naming the
	// unstable targets, is then the right answer, never the wrong direction
	switch {
	case cs[1].Candidate != "z":
		t.Errorf("comparisons %+v; want z against x second", cs)
	case cs[1].Verdict == "inconclusive" && len(cs[1].Unstable) > 0:
		t.Logf("1 ms vs 4 ms on this machine: %s", cs[1].Reason)
	case cs[1].Verdict != "slower" || cs[1].Ratio <= 1:
		t.Errorf("1 ms vs 4 ms: %+v; want slower (or inconclusive, naming unstable rounds)", cs[1])
	}
	for _, rd := range res.Scenarios[0].Rounds {
		if p50 := time.Duration(rd.LatencyNs.P50); rd.Failed || p50 < floor[rd.Target] {
			t.Errorf("latency round %d on %s: failed %v, p50 %v; want at least the server's %v", rd.Round, rd.Target, rd.Failed, p50, floor[rd.Target])
		}
	}
	if st := res.Targets[2].Startup; st == nil || time.Duration(st.FirstAnswerNs) < 1500*time.Millisecond {
		t.Errorf("target listening after 1.5 s: startup %+v; want first answer ≥ 1.5 s", st)
	}
	// listening at once: answered, not after its ready time, and not after
	// a hang guard of 10 s (tens of times a busy machine's start of this
	// -race binary)
	if st := res.Targets[0].Startup; st == nil || st.FirstAnswerNs <= 0 || st.FirstAnswerNs > st.ReadyNs || time.Duration(st.FirstAnswerNs) > 10*time.Second {
		t.Errorf("target listening at once: startup %+v; want 0 < first answer ≤ ready, within 10 s", st)
	}
	if len(res.Findings) != 0 {
		t.Errorf("findings on healthy targets: %+v", res.Findings)
	}
}

// An unhealthy run gets no speed verdict: a target answering 99 % of its
// requests with an instant 503 is failing, not faster; one that cannot keep
// up with an open loop's arrivals (they are dropped) is withheld, not faster.
func TestUnhealthyRunsGetNoSpeedVerdict(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // waits on targets; failing and dropping hold by construction
	target := func(name string, args ...string) string {
		return fmt.Sprintf(`
  - name: %s
    start:
      command: ["${tandem}", --addr, "127.0.0.1:${port.http}", %s]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://127.0.0.1:${port.http}/ping"}
    ready: {log: "listening on", timeout: 5m}`, name, strings.Join(args, ", "))
	}
	src := "version: 1\nname: unhealthy\ndefaults: {rounds: 2, warmup: 50ms}\ntargets:" +
		target("healthy", "--delay", "1ms") + target("failing", "--delay", "1ms", "--fail", "100") + target("stalling", "--delay", "20ms") + `
calls:
  ping: {http: {path: ""}}
scenarios:
  - {name: latency, call: ping, load: {concurrency: 1}, requests: 200, targets: [healthy, failing]}
  - {name: open, call: ping, load: {rate: 200, connections: 1, max_waiting: 4}, duration: 1s, targets: [healthy, stalling]}
`
	res, err := Run(context.Background(), runtest.Parse(t, src), options(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if cs := res.Scenarios[0].Comparisons; len(cs) != 1 || cs[0].Verdict != stats.Failing || cs[0].Ratio != 0 ||
		!strings.Contains(cs[0].Reason, "failing: 99.0 % of requests failed (http:503 ×396); healthy: 0.0 %") {
		t.Errorf("99 %% instant 503s: %+v; want failing, with the share and the status", cs)
	}
	for _, rd := range res.Scenarios[0].Rounds {
		if rd.Target == "failing" && (rd.Failed || rd.OK != 2 || time.Duration(rd.LatencyNs.P50) < time.Millisecond) {
			t.Errorf("failing round %d: %+v; want the headline from its 2 successful (1 ms) answers only", rd.Round, rd.Sample)
		}
	}
	cs := res.Scenarios[1].Comparisons
	if len(cs) != 1 || cs[0].Verdict != stats.Withheld || !strings.Contains(cs[0].Reason, "could not keep up: ") {
		t.Errorf("a target that drops arrivals: %+v; want withheld, could not keep up", cs)
	}
	var txt bytes.Buffer
	if err := report.Text(&txt, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"failing is failing: 99.0 % of requests failed", "99.0 % (http:503 ×396)", "offered", "dropped"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, txt.String())
		}
	}
}

// Secrets never reach results.json or the progress lines: a value from
// ${env.*} is recorded as the placeholder, a URL password as xxx.
func TestSecretsRedacted(t *testing.T) {
	t.Setenv("TANDEM_TEST_SECRET", "hunter2-s3cret")
	e := &expander{services: map[string]map[string]string{"broker": {"amqp": "amqp://user:pa55word@127.0.0.1:5672/"}}, ports: map[string]int{}}
	tmpl := []string{"server", "--token=${env.TANDEM_TEST_SECRET}", "${services.broker.amqp}"}
	argv, err := e.all(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if argv[1] != "--token=hunter2-s3cret" || argv[2] != "amqp://user:pa55word@127.0.0.1:5672/" {
		t.Fatalf("expanded %q", argv)
	}
	if got := e.shown(tmpl, argv); !slices.Equal(got, []string{"server", "--token=${env.TANDEM_TEST_SECRET}", "amqp://user:xxx@127.0.0.1:5672/"}) {
		t.Errorf("shown = %q", got)
	}
	if got := e.redact("init failed: server --token=hunter2-s3cret pa55word amqp://u:other@h/"); strings.Contains(got, "hunter2") ||
		strings.Contains(got, "pa55word") || strings.Contains(got, "other") {
		t.Errorf("redact left a secret: %q", got)
	}

	// b is not started by tandem: its endpoint, with a password from the
	// environment and one written out, is printed when the run begins
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(other.Close)
	src := `version: 1
name: secrets
defaults: {rounds: 2, warmup: 50ms}
targets:
  - name: a
    start:
      command: ["${tandem}", --addr, "127.0.0.1:${port.http}", --token, "${env.TANDEM_TEST_SECRET}"]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://127.0.0.1:${port.http}/ping"}
    ready: {log: "listening on", timeout: 5m}
  - name: b
    endpoints: {http: "http://tandem:${env.TANDEM_TEST_SECRET}@` + strings.TrimPrefix(other.URL, "http://") + `/ping?k=${env.TANDEM_TEST_SECRET}"}
calls:
  ping: {http: {path: ""}}
scenarios:
  - {name: latency, call: ping, load: {concurrency: 1}, requests: 20}
`
	progress := &runtest.Progress{}
	o := options(t, progress)
	if _, err := Run(context.Background(), runtest.Parse(t, src), o); err != nil {
		t.Fatal(err)
	}
	onDisk, err := os.ReadFile(filepath.Join(o.Out, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "target b: not started by tandem") {
		t.Errorf("the progress does not name b's endpoint:\n%s", progress.String())
	}
	for what, text := range map[string]string{"results.json": string(onDisk), "progress": progress.String()} {
		if strings.Contains(text, "hunter2") {
			t.Errorf("%s holds the secret", what)
		}
		if !strings.Contains(text, "${env.TANDEM_TEST_SECRET}") {
			t.Errorf("%s does not show the placeholder", what)
		}
	}
}

// A study's ${env.NAME} in a call (path, header, body) and in
// metrics.prometheus reaches the servers resolved, and is never printed
// or written: the results and the progress show neither value.
func TestCallEnvResolvedInRun(t *testing.T) {
	const secret = "s3cret-call-value"
	var mu sync.Mutex
	saw := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/api/v1/query_range") {
			saw["prometheus"] = r.URL.Path
			io.WriteString(w, `{"status":"success","data":{"resultType":"matrix","result":[]}}`)
			return
		}
		saw["path"], saw["auth"], saw["body"] = r.URL.Path, r.Header.Get("Authorization"), string(b)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("TANDEM_TEST_CALL_SECRET", secret)
	t.Setenv("TANDEM_TEST_PROM_URL", srv.URL+"/prom-"+secret)
	src := `version: 1
name: call env
defaults: {rounds: 2, warmup: 50ms}
targets:
  - {name: b, endpoints: {http: "` + srv.URL + `/"}, metrics_labels: {job: b}}
calls:
  ping: {http: {method: POST, path: "/p/${env.TANDEM_TEST_CALL_SECRET}", headers: {Authorization: "Bearer ${env.TANDEM_TEST_CALL_SECRET}"},
         body: "${env.TANDEM_TEST_CALL_SECRET}"}}
scenarios:
  - {name: latency, call: ping, load: {concurrency: 1}, requests: 20}
metrics: {prometheus: "${env.TANDEM_TEST_PROM_URL}", series: [up]}
`
	progress := &runtest.Progress{}
	o := options(t, progress)
	if _, err := Run(context.Background(), runtest.Parse(t, src), o); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if saw["path"] != "/p/"+secret || saw["auth"] != "Bearer "+secret || saw["body"] != secret || saw["prometheus"] != "/prom-"+secret+"/api/v1/query_range" {
		t.Errorf("the servers saw %q; want every ${env.*} resolved", saw)
	}
	mu.Unlock()
	onDisk, err := os.ReadFile(filepath.Join(o.Out, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"results.json": string(onDisk), "progress": progress.String()} {
		if i := strings.Index(text, secret); i >= 0 {
			t.Errorf("%s holds the secret: …%s…", what, text[max(i-300, 0):min(i+100, len(text))])
		}
	}
}

// A start that loses a bind race (the target says "address already in
// use") is tried once more on fresh ports, and the results say so.
func TestBindRaceRetried(t *testing.T) {
	t.Parallel() // asserts what happened, not how fast
	marker := filepath.Join(t.TempDir(), "first-start-done")
	src := fmt.Sprintf(`version: 1
name: bind race
targets:
  - name: a
    start:
      command: ["${tandem}", --addr, "127.0.0.1:${port.http}", --lose-bind-race, %q]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://127.0.0.1:${port.http}/ping"}
    ready: {log: "listening on", timeout: 5m}
calls:
  ping: {http: {path: ""}}
`, marker)
	o := options(t, nil)
	o.Only = []string{"startup"}
	res, err := Run(context.Background(), runtest.Parse(t, src), o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Targets[0].Startup == nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "started again on fresh ports") {
		t.Errorf("startup %+v, warnings %q; want a start on fresh ports, said", res.Targets[0].Startup, res.Warnings)
	}
}

// A node of a group that answers, then exits having lost the bind of a
// port it binds later (CometBFT's peers' port), is caught at the group's
// start, which is tried once more on fresh ports, not left to fail the
// first round.
func TestGroupLateBindRaceRetried(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the nodes bind 127.0.0.2, which only Linux routes to loopback without set-up")
	}
	t.Parallel() // asserts what happened, not how fast
	marker := filepath.Join(t.TempDir(), "first-start-done")
	src := fmt.Sprintf(`version: 1
name: late bind race
targets:
  - name: net
    group:
      nodes: [{role: a, count: 2}]
    start:
      command: ["${tandem}", --addr, "${node.host}:${port.http}", --lose-late-bind-race, %q]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://${node.host}:${port.http}/ping"}
    ready: {first_answer: {call: ping}, timeout: 5m}
calls:
  ping: {http: {path: ""}}
scenarios:
  - name: s
    call: ping
    load: {rate: 100, connections: 2}
    duration: 300ms
`, marker)
	o := options(t, nil)
	res, err := Run(context.Background(), runtest.Parse(t, src), o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res.Warnings) == 0 || !strings.Contains(strings.Join(res.Warnings, "\n"), "started again on fresh ports") {
		t.Errorf("warnings %q; want a start on fresh ports, said", res.Warnings)
	}
	if rd := res.Scenarios[0].Rounds[0]; rd.Failed || rd.OK == 0 {
		t.Errorf("round %+v; want it run on the group started again", rd.Sample)
	}
	for _, n := range res.Targets[0].Nodes {
		if n.Error != "" {
			t.Errorf("node %s: error %q kept from the start that lost the race", n.Name, n.Error)
		}
	}
}

func TestRoundOrder(t *testing.T) {
	ls := []*live{{spec: &study.Target{Name: "a"}}, {spec: &study.Target{Name: "b"}}, {spec: &study.Target{Name: "c"}}}
	names := func(o []*live) string {
		var s []string
		for _, l := range o {
			s = append(s, l.spec.Name)
		}
		return strings.Join(s, "")
	}
	if got := names(roundOrder(ls, "alternate", 1, "s", 1, 1)) + " " + names(roundOrder(ls, "alternate", 1, "s", 1, 2)); got != "abc cba" {
		t.Errorf("alternate: %s; want abc cba", got)
	}
	seen := map[string]bool{}
	for round := 1; round <= 12; round++ {
		o := names(roundOrder(ls, "shuffle", 7, "s", 1, round))
		if again := names(roundOrder(ls, "shuffle", 7, "s", 1, round)); again != o {
			t.Fatalf("shuffle not reproducible: %s then %s", o, again)
		}
		seen[o] = true
	}
	if len(seen) < 3 {
		t.Errorf("12 shuffled rounds gave only %d orders", len(seen))
	}
}

// A target that dies mid-run and one that answers garbage: rounds record the
// evidence, the study goes on, results stay valid, and Run reports a
// TargetError (exit 3) for the one that died.
func TestTargetDiesOrAnswersGarbage(t *testing.T) {
	t.Parallel() // asserts what happened, not how fast
	target := func(name, extra string) string {
		return fmt.Sprintf(`
  - name: %s
    start:
      command: ["${tandem}", --addr, "127.0.0.1:${port.http}", %s]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://127.0.0.1:${port.http}/ping"}`, name, extra)
	}
	// a 1 ms warm-up sends far fewer than 150 requests, so "dies" dies in a round
	src := "version: 1\nname: failures\ndefaults: {rounds: 2, warmup: 1ms}\ntargets:" +
		target("ok", `--delay, 0s`) + target("dies", `--die-after, "150"`) + target("garbage", `--garbage`) + `
calls:
  ping: {http: {path: ""}}
scenarios:
  - {name: first, call: ping, load: {concurrency: 1}, requests: 100}
  - {name: second, call: ping, load: {concurrency: 1}, requests: 100}
`
	o := options(t, nil)
	res, err := Run(context.Background(), runtest.Parse(t, src), o)
	var te *TargetError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "target dies exited: exit status 7") || !strings.Contains(err.Error(), "out of budget") {
		t.Fatalf("Run error %v; want a TargetError with the exit status and the last output", err)
	}
	onDisk := readResults(t, o.Out)
	if !strings.Contains(onDisk.Targets[1].Error, "exit status 7") {
		t.Errorf("dead target's error %q", onDisk.Targets[1].Error)
	}
	var died, garbage, okRounds int
	for _, sc := range res.Scenarios {
		for _, rd := range sc.Rounds {
			switch {
			case rd.Target == "dies" && rd.Failed && strings.Contains(rd.Error, "exit status 7"):
				died++
			case rd.Target == "garbage" && rd.Failed && rd.Errors["protocol"] > 0:
				garbage++
			case rd.Target == "ok" && !rd.Failed && rd.OK == 100:
				okRounds++
			}
		}
	}
	if died != 1 || garbage < 3 || okRounds != 4 {
		t.Errorf("rounds: %d failed with the exit of 'dies' (want 1), %d failed with protocol errors (want ≥ 3), %d ok (want 4)", died, garbage, okRounds)
	}
	assertStopped(t, res)
}

func TestReadyLogLine(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // asserts what happened, not how fast
	src := `
version: 1
name: log
targets:
  - name: logs
    start:
      command: ["${tandem}", --addr, "127.0.0.1:${port.http}", --start-delay, 300ms]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://127.0.0.1:${port.http}/ping"}
    ready: {log: "^listening on 127\\.0\\.0\\.1:", timeout: 5m}
  - name: silent
    start:
      command: ["${tandem}", --addr, "127.0.0.1:${port.http}"]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://127.0.0.1:${port.http}/ping"}
    ready: {log: "never printed", timeout: 10s}
calls:
  ping: {http: {path: ""}}
`
	// silent prints "listening on" at once: 10 s (not 1 s) leaves a busy
	// machine's start of this -race binary time to print it, so that the
	// error can show it
	o := options(t, nil)
	res, err := Run(context.Background(), runtest.Parse(t, src), o)
	var te *TargetError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), `target silent: no output line matched "never printed" after 10s`) ||
		!strings.Contains(err.Error(), "listening on") {
		t.Errorf("Run error %v; want silent not ready, with its output", err)
	}
	st := res.Targets[0].Startup
	if st == nil || time.Duration(st.ReadyNs) < 300*time.Millisecond || st.ReadyNs < st.FirstAnswerNs {
		t.Errorf("logs: startup %+v; want ready at the log line, after the 300 ms start delay", st)
	}
}

// With three starts each, a target that listens 2 s after its start is
// slower to start than one that listens at once (a start of this -race
// binary on a busy machine can take most of a second more), and one that
// never starts is failing; the report shows both verdicts.
func TestStartupVerdicts(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // 2 s against a few tens of ms
	target := func(name, startDelay string) string {
		return fmt.Sprintf(`
  - name: %s
    start:
      command: ["${tandem}", --addr, "127.0.0.1:${port.http}", --start-delay, %s]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://127.0.0.1:${port.http}/ping"}
    ready: {first_answer: {call: ping}, timeout: 5m}`, name, startDelay)
	}
	// five starts each at α = 0.2 (0.1 a comparison): the fewest a paired
	// interval can bound with
	src := "version: 1\nname: startups\nstartup: {runs: 5}\ndefaults: {alpha: 0.2}\ntargets:" + target("x", "0s") + target("z", "2s") + `
  - {name: never, start: {command: [/nonexistent/server]}, endpoints: {http: "http://127.0.0.1:1/"}}
calls:
  ping: {http: {path: ""}}
`
	o := options(t, nil)
	o.Only = []string{"startup"}
	res, err := Run(context.Background(), runtest.Parse(t, src), o)
	var te *TargetError
	if !errors.As(err, &te) {
		t.Fatalf("err %v; want the target that never started", err)
	}
	x, z, never := res.Targets[0], res.Targets[1], res.Targets[2]
	if x.StartupVerdict != nil || len(z.StartupRuns) != 5 {
		t.Fatalf("x %+v, z %d starts; want no verdict on the baseline, 5 starts of z", x.StartupVerdict, len(z.StartupRuns))
	}
	// how many times slower a busy machine makes it is not asked; that
	// none of z's starts answered before its 2 s is
	if v := z.StartupVerdict; v == nil || v.Verdict != "slower" || v.Base != "x" || v.Ratio <= 1 {
		t.Errorf("z, ready 2 s later: %+v; want slower than x", v)
	}
	for i, run := range z.StartupRuns {
		if time.Duration(run.FirstAnswerNs) < 2*time.Second || run.ReadyNs < run.FirstAnswerNs {
			t.Errorf("z's start %d: first answer %v, ready %v; want the first answer after its 2 s start delay, ready after it",
				i+1, time.Duration(run.FirstAnswerNs), time.Duration(run.ReadyNs))
		}
	}
	if v := never.StartupVerdict; v == nil || v.Verdict != "failing" {
		t.Errorf("a target that never started: %+v; want failing", v)
	}
	var txt bytes.Buffer
	if err := report.Text(&txt, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"verdict (ready time)", "z is", "× slower than x", "never is failing: started 0 times"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, txt.String())
		}
	}
}
