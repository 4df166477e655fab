package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/promtest"
	"github.com/tandem-bench/tandem/internal/rabbittest"
	"github.com/tandem-bench/tandem/results"
)

// capacityServer answers at most perSec requests a second (a token bucket
// holding one second's worth) and 503 beyond: a target that saturates.
func capacityServer(t *testing.T, perSec float64) string {
	var mu sync.Mutex
	tokens, last := perSec, time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		now := time.Now()
		tokens = min(perSec, tokens+now.Sub(last).Seconds()*perSec)
		last = now
		ok := tokens >= 1
		if ok {
			tokens--
		}
		mu.Unlock()
		if !ok {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

func TestSweepGrid(t *testing.T) {
	url := capacityServer(t, 100)
	s := parse(t, fmt.Sprintf(`
version: 1
name: sweep
defaults: {timeout: 2s}
targets: [{name: cap, endpoints: {http: %q}}]
calls: {get: {http: {path: /}}}
scenarios:
  - name: grid
    call: get
    sweep: {connections: [1, 2], rate: [20, 60], duration: 3s}
`, url))
	o := options(t, nil)
	if _, err := Run(context.Background(), s, o); err != nil {
		t.Fatal(err)
	}
	res := readResults(t, o.Out)
	if len(res.Sweeps) != 1 || len(res.Sweeps[0].Cells) != 4 {
		t.Fatalf("sweeps: %+v", res.Sweeps)
	}
	sw := res.Sweeps[0]
	if sw.Rule != "confirmed < expected" || sw.Load != "batched" || sw.Confirm != "answer" {
		t.Errorf("sweep header: %+v", sw)
	}
	for _, c := range sw.Cells {
		want := int64(c.Connections) * int64(c.Rate) * 2 // c·r·(T−1)
		if c.Expected != want || c.Sent != want {
			t.Errorf("c=%d r=%v: expected %d, sent %d; want %d", c.Connections, c.Rate, c.Expected, c.Sent, want)
		}
		over := float64(c.Connections)*c.Rate > 100
		switch {
		case over && (!c.Saturated || c.Confirmed >= c.Expected || c.Errors["http:503"] == 0):
			t.Errorf("c=%d r=%v over capacity: %+v; want saturated with 503s", c.Connections, c.Rate, c)
		case !over && (c.Saturated || c.Confirmed != c.Expected):
			t.Errorf("c=%d r=%v within capacity: confirmed %d of %d, saturated %v; want all", c.Connections, c.Rate, c.Confirmed, c.Expected, c.Saturated)
		}
	}
	want := []results.SaturationPoint{{Connections: 1, HighestOK: 60}, {Connections: 2, HighestOK: 20, LowestSaturated: 60}}
	for i, p := range sw.Saturation {
		if p.Connections != want[i].Connections || p.HighestOK != want[i].HighestOK || p.LowestSaturated != want[i].LowestSaturated {
			t.Errorf("saturation %d: %+v; want %+v", i, p, want[i])
		}
	}
}

func TestSweepSearch(t *testing.T) {
	url := capacityServer(t, 100)
	s := parse(t, fmt.Sprintf(`
version: 1
name: search
defaults: {timeout: 2s}
targets: [{name: cap, endpoints: {http: %q}}]
calls: {get: {http: {path: /}}}
scenarios:
  - name: find
    call: get
    sweep: {connections: [1], duration: 2s, search: {from: 20, to: 400, precision: 0.25}}
`, url))
	o := options(t, nil)
	if _, err := Run(context.Background(), s, o); err != nil {
		t.Fatal(err)
	}
	res := readResults(t, o.Out)
	sr := res.Sweeps[0].Search
	if len(sr) != 1 {
		t.Fatalf("search: %+v", sr)
	}
	got := sr[0]
	if got.Sustained < 75 || got.Sustained > 100 || got.Saturated <= 100 || got.Saturated > 135 || got.Saturated/got.Sustained > 1.25 {
		t.Errorf("search found [%v, %v] in %d probes; want a bracket around 100 no wider than 1.25", got.Sustained, got.Saturated, got.Probes)
	}
	if got.Probes > maxProbes || len(res.Sweeps[0].Cells) != got.Probes {
		t.Errorf("%d probes, %d cells", got.Probes, len(res.Sweeps[0].Cells))
	}
	for _, c := range res.Sweeps[0].Cells {
		if !c.Search {
			t.Errorf("a search cell not marked: %+v", c)
		}
	}
}

// With metrics.prometheus the run's series come from a Prometheus server
// (query_range over the run's window), selected by the target's labels.
func TestMetricsFromPrometheus(t *testing.T) {
	var n atomic.Int64
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			fmt.Fprintf(w, "# TYPE cometbft_consensus_total_txs counter\ncometbft_consensus_total_txs %d\n", n.Load())
			return
		}
		n.Add(1)
		w.Write([]byte("ok"))
	}))
	defer exporter.Close()
	server := promtest.Start(t, strings.TrimPrefix(exporter.URL, "http://"))
	s := parse(t, fmt.Sprintf(`
version: 1
name: prometheus
metrics: {prometheus: %q, series: [cometbft_consensus_total_txs]}
targets:
  - {name: app, endpoints: {http: %q}, metrics_labels: {job: tandem-test}}
calls: {get: {http: {path: /}}}
scenarios:
  - name: grid
    call: get
    sweep: {connections: [1], rate: [50], duration: 4s}
`, server, exporter.URL+"/"))
	o := options(t, nil)
	if _, err := Run(context.Background(), s, o); err != nil {
		t.Fatal(err)
	}
	res := readResults(t, o.Out)
	m := res.Targets[0].Metrics
	if m == nil || m.Errors != 0 || len(m.Series) != 1 || len(m.Series[0].Points) < 2 {
		resp, _ := http.Get(server + "/api/v1/query?query=cometbft_consensus_total_txs")
		if resp != nil {
			b, _ := io.ReadAll(resp.Body)
			t.Logf("prometheus says: %s", b)
		}
		resp2, _ := http.Get(server + "/api/v1/targets")
		if resp2 != nil {
			b, _ := io.ReadAll(resp2.Body)
			t.Logf("targets: %.600s", b)
		}
		t.Fatalf("metrics: %+v", m)
	}
	if tpm := m.Derived["txs_per_min"]; tpm <= 0 {
		t.Errorf("txs_per_min %v; want a positive slope", tpm)
	}
	if c := res.Sweeps[0].Cells[0]; c.Metrics == nil {
		t.Errorf("the cell has no derived metrics")
	}
}

// A study's costs are counted under valgrind and land in results.json.
func TestStudyCosts(t *testing.T) {
	if _, err := exec.LookPath("valgrind"); err != nil {
		if os.Getenv("TANDEM_REQUIRE_VALGRIND") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	bin := filepath.Join(t.TempDir(), "alloc")
	if b, err := exec.Command("gcc", "-O1", "-DWORK=10", "-o", bin, "../cost/testdata/alloc.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	s := parse(t, fmt.Sprintf(`
version: 1
name: costs
targets: [{name: none, endpoints: {http: "http://127.0.0.1:1/"}}]
calls: {get: {http: {path: /}}}
costs:
  - {name: alloc, command: [%q, "{ops}"], ops: 200}
  - {name: broken, command: [/nonexistent/program, "{ops}"]}
`, bin))
	o := options(t, nil)
	if _, err := Run(context.Background(), s, o); err != nil {
		t.Fatal(err)
	}
	res := readResults(t, o.Out)
	if len(res.Costs) != 2 {
		t.Fatalf("costs: %+v", res.Costs)
	}
	if c := res.Costs[0]; c.AllocationsPerOp != 3 || c.BytesPerOp != 216 || c.InstructionsPerOp <= 0 || c.Error != "" {
		t.Errorf("alloc: %+v", c)
	}
	if c := res.Costs[1]; c.Error == "" {
		t.Errorf("a command that cannot run has no error: %+v", c)
	}
}

// A scenario with an amqp call measures the broker run by run (one
// publisher, one consumer, a queue per run), calibrated like any other.
func TestAMQPScenario(t *testing.T) {
	url := rabbittest.Start(t)
	s := parse(t, fmt.Sprintf(`
version: 1
name: broker
defaults: {rounds: 2, warmup: 100ms, min_duration: 300ms}
targets: [{name: rabbit, endpoints: {amqp: %q}}]
calls:
  classic: {amqp: {queue_type: classic, prefetch: 256, ack: multiple, size: 512}, unit: message}
  quorum: {amqp: {queue_type: quorum, prefetch: 64, confirm: true}, unit: message}
scenarios:
  - {name: classic, call: classic, metric: throughput, load: {concurrency: 1}}
  - {name: quorum, call: quorum, metric: throughput, load: {concurrency: 1}, requests: 1000}
`, url))
	o := options(t, nil)
	if _, err := Run(context.Background(), s, o); err != nil {
		t.Fatal(err)
	}
	res := readResults(t, o.Out)
	for _, sc := range res.Scenarios {
		if len(sc.Rounds) != 2 {
			t.Fatalf("%s: %d rounds", sc.Name, len(sc.Rounds))
		}
		for _, rd := range sc.Rounds {
			if rd.Failed || rd.OK != rd.Requests || rd.OK < 200 || rd.UnitsPerS <= 0 {
				t.Errorf("%s round %d: %+v", sc.Name, rd.Round, rd.Sample)
			}
		}
	}
	if q := res.Scenarios[1]; q.Rounds[0].OK != 1000 {
		t.Errorf("quorum: %d messages; want the 1000 asked for", q.Rounds[0].OK)
	}
}
