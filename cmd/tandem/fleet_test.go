package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/tandem-bench/tandem/adhoc"
	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner"
)

// countingServer is a real HTTP target that counts what it serves.
func countingServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("pong"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/", &hits
}

// fleetJSON is tandem load --format json with its fleet.
type fleetJSON struct {
	Requests    int64                `json:"requests"`
	OK          int64                `json:"ok"`
	Dropped     int64                `json:"dropped"`
	Unfinished  int64                `json:"unfinished"`
	OfferedRate float64              `json:"offered_rate"`
	Achieved    float64              `json:"achieved_rate"`
	Throughput  float64              `json:"throughput"`
	LatencyNs   results.Distribution `json:"latency_ns"`
	HDR         string               `json:"hdr"`
	Series      []results.Second     `json:"series"`
	Warnings    []string             `json:"warnings"`
	Interrupted bool                 `json:"interrupted"`
	Fleet       *results.Fleet       `json:"fleet"`
}

func decodeFleet(t *testing.T, stdout string) fleetJSON {
	t.Helper()
	var got fleetJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	if got.Fleet == nil {
		t.Fatalf("no fleet in the output:\n%s", stdout)
	}
	return got
}

// TestLoadOverLocalWorkers: three worker processes split an open loop of
// 3,000 arrivals exactly; the merged figures are the workers' added up
// (counts, the latency histogram, the series), every arrival is answered,
// cut off by the run's end or dropped, the server served what was
// answered (and perhaps what was cut off), and every worker started at
// the agreed time or after it.
func TestLoadOverLocalWorkers(t *testing.T) {
	url, hits := countingServer(t)
	code, stdout, stderr := tandem(t, "load", url, "--local-workers", "3", "--rate", "3000", "--connections", "6",
		"--duration", "1s", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	got := decodeFleet(t, stdout)
	f := got.Fleet
	// each worker reaches the target with one request before the load; a
	// busy machine may leave some of the 3,000 unanswered by the run's end
	// (its drain), never unaccounted for
	if got.Requests+got.Unfinished+got.Dropped != 3000 || got.Requests == 0 || got.OK != got.Requests ||
		hits.Load() < got.Requests+3 || hits.Load() > got.Requests+got.Unfinished+3 {
		t.Fatalf("merged %d requests (%d ok, %d cut off, %d dropped), server served %d; want 3000 accounted for and a check by each worker",
			got.Requests, got.OK, got.Unfinished, got.Dropped, hits.Load())
	}
	if got.OfferedRate < 2999 || got.OfferedRate > 3001 {
		t.Errorf("offered %.2f/s; want the whole schedule's 3000/s", got.OfferedRate)
	}
	var sum, issued int64
	var own []string
	lo, hi := int64(math.MaxInt64), int64(0) // the workers' starts after the agreed one
	for _, w := range f.Workers {
		sum += w.Requests
		own = append(own, w.HDR)
		if w.Requests+w.Dropped > 1000 || w.Requests == 0 || w.Tallies < 1 || !strings.Contains(w.Share, "every 3rd arrival") || w.Lost || w.StartNs < 0 {
			t.Errorf("worker %+v; want at most its 1000 arrivals, its share and tallies, started no earlier than agreed", w)
		}
		lo, hi = min(lo, w.StartNs), max(hi, w.StartNs)
	}
	whole, err := hdr.Merge(own...)
	if err != nil {
		t.Fatal(err)
	}
	if d := hdr.Distribution(whole); d != got.LatencyNs || whole.TotalCount() != got.OK || sum != 3000 {
		t.Errorf("merged latency %+v; one histogram of every worker's samples %+v (%d of them)", got.LatencyNs, d, whole.TotalCount())
	}
	for _, s := range got.Series {
		issued += s.Issued
	}
	if issued != got.Requests {
		t.Errorf("the merged series issued %d; want the %d requests", issued, got.Requests)
	}
	// how late a worker woke up is the machine's; the skew is the spread
	if len(f.Workers) != 3 || f.StartSkewNs != hi-lo || f.NATS != "embedded" ||
		f.MessagesPerS <= 0 || f.BytesPerS <= 0 || len(f.Lost) != 0 || len(f.Incomplete) != 0 {
		t.Errorf("fleet %+v; want 3 workers, a start skew of the spread of their starts (%v), the coordination's traffic, nothing lost",
			f, time.Duration(hi-lo))
	}
}

// TestLoadFleetBadInput: flags that cannot make a fleet are refused with
// exit 2 before any worker starts.
func TestLoadFleetBadInput(t *testing.T) {
	url, hits := countingServer(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--local-workers", "3", "--concurrency", "2"}, "--concurrency: 2 clients over 3 workers: worker 3 gets none"},
		{[]string{"--local-workers", "2", "--rate", "100", "--connections", "1"}, "--connections: 1 connection over 2 workers"},
		{[]string{"--local-workers", "2", "--workers", "2"}, "choose one"},
		{[]string{"--local-workers", "3", "--concurrency", "3", "--requests", "2"}, "2 requests over 3 workers: worker 3 gets none"},
		{[]string{"--local-workers", "2", "--on-worker-loss", "ignore"}, "want fail or continue"},
		{[]string{"--local-workers", "2", "--fleet", "a.b"}, "--fleet"},
		{[]string{"--local-workers", "2", "--rate", "10-x", "--connections", "2"}, "--rate"},
		{[]string{"--local-workers", "-1"}, "want a positive count"},
		{[]string{"--workers", "-2"}, "want a positive count"},
		{[]string{"--workers", "2", "--join-wait", "-1s"}, "--join-wait -1s: want a positive duration"},
		{[]string{"--workers", "2", "--nats", "nats://user:Secret@127.0.0.1:4222"}, "--nats-creds FILE"},
		{[]string{"--workers", "2", "--nats-nkey", "/nonexistent"}, "are for --nats"},
		{[]string{"--workers", "2", "--concurrency", "2", "--nats", "nats://127.0.0.1:1", "--nats-nkey", "/nonexistent"}, "--nats-nkey: stat /nonexistent"},
	} {
		code, _, stderr := tandem(t, append([]string{"load", url, "--requests", "10"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if code, _, stderr := tandem(t, "run", smallStudy(t), "--local-workers", "2", "--out", t.TempDir()); code != 2 ||
		!strings.Contains(stderr, "scenario getblock-latency: 1 client over 2 workers") {
		t.Errorf("a study of one client over 2 workers: exit %d, %q", code, stderr)
	}
	if code, _, stderr := tandem(t, "worker"); code != 2 || !strings.Contains(stderr, "--nats") {
		t.Errorf("worker without --nats: exit %d, %q", code, stderr)
	}
	if code, _, stderr := tandem(t, "worker", "--nats", "nats://u:Secret@127.0.0.1:1"); code != 2 || !strings.Contains(stderr, "command line") ||
		strings.Contains(stderr, "Secret") {
		t.Errorf("worker with a password in --nats: exit %d, %q", code, stderr)
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests reached the target from refused runs", hits.Load())
	}
}

// TestLoadFleetPart: what a coordinator ships to its workers is the call
// and the load as data, not flags: repeated headers, --data read from a
// file and the whole schedule arrive as given, the fleet's own flags and
// the output format do not travel, and the target's password is only where
// the workers need it to connect (the fleet's bus is authenticated), not
// in the name errors show.
func TestLoadFleetPart(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/body.json"
	if err := os.WriteFile(file, []byte(`{"x":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var o loadOptions
	f := pflag.NewFlagSet("load", pflag.ContinueOnError)
	loadFlags(f, &o)
	fleetFlags(f, &o.fleet)
	if err := f.Parse([]string{"--header", "A: 1", "--header", "B: 2,3", "--rate", "100,200", "--step", "1s",
		"--connections", "4", "--data", "@" + file, "--warmup", "2s", "--format", "json", "--local-workers", "2"}); err != nil {
		t.Fatal(err)
	}
	l, err := adhoc.Open(context.Background(), o.Options, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	part, err := l.FleetPart("http://user:Secret@127.0.0.1:1/put")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(part)
	if err != nil {
		t.Fatal(err)
	}
	var back runner.FleetPart
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	want := load.Steps{{Rate: 100, Duration: time.Second}, {Rate: 200, Duration: time.Second}}
	h := back.Call.HTTP
	if h == nil || h.Headers["A"] != "1" || h.Headers["B"] != "2,3" || h.Body.V != `{"x":1}` || back.Spec.Kind != load.KindOpen ||
		back.Spec.Connections != 4 || back.Spec.Warmup != 2*time.Second || !reflect.DeepEqual(back.Spec.Schedule, want) || !back.Check {
		t.Errorf("round trip: %s", b)
	}
	for _, not := range []string{"--", "json"} {
		if strings.Contains(string(b), not) {
			t.Errorf("%q travelled: %s", not, b)
		}
	}
	if strings.Contains(back.Target, "Secret") || !strings.Contains(back.Endpoint, "Secret") {
		t.Errorf("target %q, endpoint %q: want the password in the endpoint only", back.Target, back.Endpoint)
	}
}

// servePong is the test binary as a plain HTTP target (TANDEM_TEST_PONG=
// ADDR): it answers every request, and on SIGTERM prints how many it
// served and exits.
func servePong(addr string) int {
	var hits atomic.Int64
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("listening")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("pong"))
	})}
	go srv.Serve(ln)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	srv.Close()
	fmt.Println(hits.Load())
	return 0
}

// TestRunOnLocalWorkers: a study's closed and open loops run on two local
// workers; every round records its fleet, the workers' own counts add up
// to the round's, the open loop's offered rate is the whole schedule's,
// and the results are valid.
func TestRunOnLocalWorkers(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // no timing asserted: it may share the machine
	small, err := os.ReadFile(smallStudy(t))
	if err != nil {
		t.Fatal(err)
	}
	// two instances of build a (build b's planted stall would add a finding's
	// probe, not a thing the fleet does), a fixed count (no calibration)
	study := strings.Replace(string(small), "load: {concurrency: 1}}", "requests: 400, load: {concurrency: 2}}\n"+
		"  - {name: open, call: block, duration: 1s, load: {rate: 300, connections: 2}}", 1)
	study = strings.ReplaceAll(study, "--build, b,", "--build, a,")
	path := t.TempDir() + "/fleet.yaml"
	if err := os.WriteFile(path, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, stderr := tandem(t, "run", path, "--local-workers", "2", "--pin=false", "--rounds", "1", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "the loops ran on 2 workers over embedded NATS") {
		t.Errorf("the report does not say the loops ran on the fleet:\n%s", stdout)
	}
	data, err := os.ReadFile(out + "/results.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Validate(data); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	var res results.Results
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	rounds := 0
	for _, sc := range res.Scenarios {
		for _, rd := range sc.Rounds {
			rounds++
			f := rd.Fleet
			if f == nil || len(f.Workers) != 2 {
				t.Fatalf("%s round %d on %s: fleet %+v; want 2 workers", sc.Name, rd.Round, rd.Target, f)
			}
			var sum int64
			for _, w := range f.Workers {
				sum += w.Requests
				if w.Cores < 1 || w.Share == "" {
					t.Errorf("%s %s: worker %+v", sc.Name, rd.Target, w)
				}
			}
			if sum != rd.Requests || rd.Requests == 0 {
				t.Errorf("%s round %d on %s: workers sent %d, the round %d", sc.Name, rd.Round, rd.Target, sum, rd.Requests)
			}
			// every arrival answered, cut off by the round's end or dropped
			if sc.Name == "open" && (rd.OfferedRate < 299 || rd.OfferedRate > 301 || rd.Requests+rd.Unfinished+rd.Dropped != 300) {
				t.Errorf("open on %s: offered %.1f/s, %d requests, %d cut off, %d dropped; want the whole 300/s for 1 s accounted for",
					rd.Target, rd.OfferedRate, rd.Requests, rd.Unfinished, rd.Dropped)
			}
		}
	}
	if rounds != 4 {
		t.Errorf("%d rounds; want 2 scenarios × 2 targets", rounds)
	}
}
