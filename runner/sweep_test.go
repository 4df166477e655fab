package runner

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/promtest"
	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/verdict"
)

// capacityServer answers at most perBurst requests of a burst (requests
// less than 600 ms apart) and 503 to the rest. A sweep cell sends one batch
// a second per connection, so this is a capacity of perBurst a second that
// does not depend on how fast the generator gets a batch out (a bucket
// that refills while a slow generator sends would let more through). A
// batch that a busy machine sends so slowly that it ends less than 600 ms
// before the next begins makes the two one burst: a cell meant to keep up
// sends at most perBurst in two batches, and one meant not to, more than
// perBurst in each.
func capacityServer(t *testing.T, perBurst int) string {
	var mu sync.Mutex
	var used int
	var last time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		if now := time.Now(); now.Sub(last) >= 600*time.Millisecond {
			used = 0 // a new burst
		}
		last = time.Now()
		ok := used < perBurst
		if ok {
			used++
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

// sweepRun runs a study of one sweep (sweep is its settings) on the one
// target at url and returns the results it wrote.
func sweepRun(t *testing.T, url, sweep string) *results.Results {
	t.Helper()
	s := runtest.Parse(t, fmt.Sprintf(`
version: 1
name: sweep
defaults: {timeout: 2s}
targets: [{name: cap, endpoints: {http: %q}}]
calls: {get: {http: {path: /}}}
scenarios:
  - {name: sweep, call: get, sweep: %s}
`, url, sweep))
	o := options(t, nil)
	if _, err := Run(context.Background(), s, o); err != nil {
		t.Fatal(err)
	}
	return readResults(t, o.Out)
}

// TestSweepGrid runs a grid of two batches a cell on a server of 100 a
// second: 40 a second keeps up on one connection and not on three, so
// the knee moves with the connections. Within capacity a cell is two
// batches of at most 40 (one burst of 80 if a busy machine merges them),
// above it every batch is 120.
func TestSweepGrid(t *testing.T) {
	tooltest.Long(t)
	res := sweepRun(t, capacityServer(t, 100), "{connections: [1, 3], rate: [10, 40], duration: 3s}")
	if len(res.Sweeps) != 1 || len(res.Sweeps[0].Cells) != 4 {
		t.Fatalf("sweeps: %+v", res.Sweeps)
	}
	sw := res.Sweeps[0]
	if sw.Rule != "confirmed < 95 % of expected, or the latency grows over the cell" || sw.Load != "batched" || sw.Confirm != "answer" {
		t.Errorf("sweep header: %+v", sw)
	}
	for _, c := range sw.Cells {
		want := int64(c.Connections) * int64(c.Rate) * 2 // c·r·(T−1)
		if c.Expected != want || c.Sent+c.Dropped != want || c.Confirmed > c.OK || c.OK > c.Sent {
			t.Errorf("c=%d r=%v: expected %d, sent %d, dropped %d, ok %d, confirmed %d; want %d expected, each sent or dropped",
				c.Connections, c.Rate, c.Expected, c.Sent, c.Dropped, c.OK, c.Confirmed, want)
		}
		over := float64(c.Connections)*c.Rate > 100
		switch {
		case over && (!c.Saturated || c.Confirmed >= c.Expected || c.Errors["http:503"] == 0):
			t.Errorf("c=%d r=%v over capacity: %+v; want saturated with 503s", c.Connections, c.Rate, c)
		case !over && (c.Saturated || c.Confirmed != c.Expected || len(c.Errors) != 0):
			t.Errorf("c=%d r=%v within capacity: confirmed %d of %d, errors %v, saturated %v; want all, none failed",
				c.Connections, c.Rate, c.Confirmed, c.Expected, c.Errors, c.Saturated)
		}
	}
	want := []results.SaturationPoint{{Connections: 1, HighestOK: 40}, {Connections: 3, HighestOK: 10, LowestSaturated: 40}}
	if len(sw.Saturation) != len(want) {
		t.Fatalf("saturation %+v; want %+v", sw.Saturation, want)
	}
	for i, p := range sw.Saturation {
		if p.Connections != want[i].Connections || p.HighestOK != want[i].HighestOK || p.LowestSaturated != want[i].LowestSaturated {
			t.Errorf("saturation %d: %+v; want %+v", i, p, want[i])
		}
	}
}

// TestSweepSearch searches cells of one batch for the knee of a server
// of 100 a second. By the rule (confirmed < 95 % of expected) a batch of
// more than 100/0.95 saturates however fast the machine, so the bracket
// is at most there; a busy machine that cannot send a batch of 89 in its
// second may find it lower, never higher. The bracket is what its cells
// say: its bottom kept up, its top did not.
func TestSweepSearch(t *testing.T) {
	tooltest.Long(t)
	res := sweepRun(t, capacityServer(t, 100), "{connections: [1], duration: 2s, search: {from: 20, to: 400, precision: 0.25}}")
	sr := res.Sweeps[0].Search
	if len(sr) != 1 {
		t.Fatalf("search: %+v", sr)
	}
	got := sr[0]
	if got.Sustained > 100/0.95 || got.Saturated > 135 || got.Saturated <= got.Sustained || got.Saturated/got.Sustained > 1.25 {
		t.Errorf("search found [%v, %v] in %d probes; want a bracket no wider than 1.25, its bottom at most 100/0.95", got.Sustained, got.Saturated, got.Probes)
	}
	if got.Probes > maxProbes || len(res.Sweeps[0].Cells) != got.Probes {
		t.Errorf("%d probes, %d cells", got.Probes, len(res.Sweeps[0].Cells))
	}
	bracket := map[float64]bool{}
	for _, c := range res.Sweeps[0].Cells {
		if !c.Search || c.Sent+c.Dropped != c.Expected || c.Expected != int64(c.Rate) {
			t.Errorf("rate %v: search %v, %d sent, %d dropped, %d expected; want a search cell of one batch, every request sent or dropped",
				c.Rate, c.Search, c.Sent, c.Dropped, c.Expected)
		}
		// above the capacity the server fails what passes 100, or a slow
		// generator never sends it
		if c.Rate > 100/0.95 && (!c.Saturated || c.Errors["http:503"] == 0 && c.Dropped == 0) {
			t.Errorf("rate %v, above the server's capacity: saturated %v, errors %v, %d dropped; want saturated with 503s or drops",
				c.Rate, c.Saturated, c.Errors, c.Dropped)
		}
		if c.Rate == got.Sustained || c.Rate == got.Saturated {
			bracket[c.Rate] = c.Saturated
		}
	}
	if sat, ok := bracket[got.Sustained]; !ok || sat {
		t.Errorf("the bracket's bottom %v: probed %v, saturated %v; want a probe that kept up", got.Sustained, ok, sat)
	}
	if sat, ok := bracket[got.Saturated]; !ok || !sat {
		t.Errorf("the bracket's top %v: probed %v, saturated %v; want a probe that saturated", got.Saturated, ok, sat)
	}
}

// With metrics.prometheus the run's series come from a Prometheus server
// (query_range over the run's window), selected by the target's labels.
func TestMetricsFromPrometheus(t *testing.T) {
	t.Parallel() // child processes and waits; asserts outcomes, not speed
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
	s := runtest.Parse(t, fmt.Sprintf(`
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
	t.Parallel() // child processes and waits; asserts outcomes, not speed
	tooltest.Need(t, "TANDEM_REQUIRE_VALGRIND", "valgrind")
	bin := filepath.Join(t.TempDir(), "alloc")
	if b, err := exec.Command("gcc", "-O1", "-DWORK=10", "-o", bin, "../cost/testdata/alloc.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	s := runtest.Parse(t, fmt.Sprintf(`
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

// failingServer answers ok but 503 to its first n requests: a cell of
// 500 confirms 500 − n.
func failingServer(t *testing.T, n int64) string {
	var seen atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if seen.Add(1) <= n {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// A cell is saturated when it confirms < 95 % of expected by default (99
// and 95 of 100 keep up, 94 does not), and the study's shortfall moves the
// line; results record the rule. The server fails the first n requests
// it sees, so a cell confirms what it sent but n; a busy machine that
// cannot send all 100 in the batch's second drops the rest (and may
// answer some late, unconfirmed), and the rule is then applied to what
// it confirmed.
func TestSweepShortfall(t *testing.T) {
	misses := map[string]int64{"miss1": 1, "miss5": 5, "miss6": 6}
	for _, tc := range []struct {
		shortfall string
		rule      string
		keep      int64           // the % of expected a cell must confirm
		sat       map[string]bool // by target, when all 100 were sent
	}{
		{"", "confirmed < 95 % of expected, or the latency grows over the cell", 95, map[string]bool{"miss1": false, "miss5": false, "miss6": true}},
		{", shortfall: 0", "confirmed < expected, or the latency grows over the cell", 100, map[string]bool{"miss1": true}},
		{", shortfall: 0.01", "confirmed < 99 % of expected, or the latency grows over the cell", 99, map[string]bool{"miss1": false, "miss5": true}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			var targets strings.Builder
			for _, name := range slices.Sorted(maps.Keys(tc.sat)) {
				fmt.Fprintf(&targets, "  - {name: %s, endpoints: {http: %q}}\n", name, failingServer(t, misses[name]))
			}
			s := runtest.Parse(t, fmt.Sprintf(`
version: 1
name: shortfall
defaults: {timeout: 2s}
targets:
%scalls: {get: {http: {path: /}}}
scenarios:
  - name: edge
    call: get
    sweep: {connections: [1], rate: [100], duration: 2s%s}
`, targets.String(), tc.shortfall))
			o := options(t, nil)
			if _, err := Run(context.Background(), s, o); err != nil {
				t.Fatal(err)
			}
			res := readResults(t, o.Out)
			if len(res.Sweeps) != len(tc.sat) {
				t.Fatalf("sweeps: %+v", res.Sweeps)
			}
			for _, sw := range res.Sweeps {
				if sw.Rule != tc.rule {
					t.Errorf("%s: rule %q; want %q", sw.Target, sw.Rule, tc.rule)
				}
				if len(sw.Cells) != 1 {
					t.Fatalf("%s: cells %+v", sw.Target, sw.Cells)
				}
				c := sw.Cells[0]
				// (a busy machine that dropped arrivals may also answer some
				// late, past the cell's allowance: those are not confirmed)
				if c.Expected != 100 || c.Sent+c.Dropped != c.Expected || c.Sent < misses[sw.Target] || c.OK != c.Sent-misses[sw.Target] || c.Confirmed > c.OK {
					t.Fatalf("%s: %d sent, %d dropped, %d ok, %d of %d confirmed; want 100 expected, each sent or dropped, all sent but %d ok, confirmed of them",
						sw.Target, c.Sent, c.Dropped, c.OK, c.Confirmed, c.Expected, misses[sw.Target])
				}
				want := c.Confirmed*100 < tc.keep*c.Expected
				if c.Sent == c.Expected && c.Confirmed == c.OK && want != tc.sat[sw.Target] {
					t.Fatalf("%s: the table says saturated %v, the rule %v", sw.Target, tc.sat[sw.Target], want)
				}
				if c.Saturated != want {
					t.Errorf("%s: %d of %d confirmed (%d sent), saturated %v; want %v under %q", sw.Target, c.Confirmed, c.Expected, c.Sent, c.Saturated, want, tc.rule)
				}
			}
		})
	}
}

// saturation reports, per connection count, the highest rate that kept
// up, the lowest that saturated and confirmed/s over the T − 1 s that
// carry load; a rate run twice saturates if either run did.
func TestSweepSaturationPoints(t *testing.T) {
	const T = int64(6 * time.Second)
	cells := []results.Cell{
		{Connections: 1, Rate: 50, DurationNs: T, Expected: 250, Confirmed: 250},
		{Connections: 1, Rate: 200, DurationNs: T, Expected: 1000, Confirmed: 1000},
		{Connections: 2, Rate: 50, DurationNs: T, Expected: 500, Confirmed: 500},
		{Connections: 2, Rate: 100, DurationNs: T, Expected: 1000, Confirmed: 1000, Search: true, Repeat: 1},
		{Connections: 2, Rate: 100, DurationNs: T, Expected: 1000, Confirmed: 900, Saturated: true, Search: true, Repeat: 2},
		{Connections: 2, Rate: 200, DurationNs: T, Expected: 2000, Confirmed: 1200, Saturated: true},
	}
	got := saturation(cells)
	want := []results.SaturationPoint{
		{Connections: 1, HighestOK: 200, ThroughputAtBest: 200},
		{Connections: 2, HighestOK: 50, LowestSaturated: 100, ThroughputAtBest: 100},
	}
	if len(got) != len(want) {
		t.Fatalf("saturation: %+v; want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("saturation %d: %+v; want %+v", i, got[i], want[i])
		}
	}
	for _, c := range cells[:3] {
		if got, want := c.ConfirmedPerSecond(), float64(c.Connections)*c.Rate; got != want {
			t.Errorf("c=%d r=%v kept up: %v confirmed/s; want c·r = %v", c.Connections, c.Rate, got, want)
		}
	}
}

// delayServer answers every request after delay.
func delayServer(t *testing.T, delay time.Duration) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(delay)
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// A grid with rounds runs each cell that many times, the targets'
// order alternating; each cell is summarised over its runs and judged
// against the baseline's, and tandem compare holds the cells of two runs:
// a target slowed down between them is a regression, one sped up is not.
func TestSweepRoundsJudgedAndCompared(t *testing.T) {
	tooltest.Long(t)
	// its verdicts are on 60 ms against < 1 ms (a cell is 20 requests:
	// with every core busy a cell's mean swung by 27 ms, as wide as the
	// 30 ms it had)
	t.Parallel()
	fast, slow := delayServer(t, 0), delayServer(t, 60*time.Millisecond)
	grid := func(a, b string) *results.Results {
		s := runtest.Parse(t, fmt.Sprintf(`
version: 1
name: rounds
# alpha 0.25: three rounds of a cell can bound the ratio (the fewest that
# can); the test is of the grid's rounds, not of the statistics
defaults: {timeout: 2s, alpha: 0.25}
targets:
  - {name: a, endpoints: {http: %q}}
  - {name: b, endpoints: {http: %q}}
calls: {get: {http: {path: /}}}
scenarios:
  - {name: grid, call: get, rounds: 3, sweep: {connections: [1], rate: [10], duration: 2s, load: open}}
`, a, b))
		o := options(t, nil)
		if _, err := Run(context.Background(), s, o); err != nil {
			t.Fatal(err)
		}
		return readResults(t, o.Out)
	}
	before := grid(fast, slow)
	if len(before.Sweeps) != 2 {
		t.Fatalf("sweeps: %+v", before.Sweeps)
	}
	// A machine with every core busy beside two test runs can hold b's
	// 60 ms server long enough that a cell's latency grows over it, and
	// the rule then rightly calls it saturated: such a run withholds the
	// latency verdict (saying so) and a comparison holding it fails the
	// gate, the safe direction. Where nothing saturated, the verdicts are
	// asked for.
	saturated := func(rs ...*results.Results) bool {
		for _, r := range rs {
			for _, sw := range r.Sweeps {
				for _, c := range sw.Cells {
					if c.Saturated {
						return true
					}
				}
			}
		}
		return false
	}
	// A machine busy enough to hold the fast server's answers as long as
	// the slow one's (a's cells were seen from 7.8 ms to 182 ms beside
	// two test runs) leaves three rounds unable to tell them apart:
	// inconclusive is then the right answer; the wrong direction never is.
	overlapping := func(fast, slow results.Sweep) bool {
		least := math.Inf(1)
		for _, c := range slow.Cells {
			least = min(least, c.LatencyNs.Mean)
		}
		for _, c := range fast.Cells {
			if c.LatencyNs.Mean >= least {
				return true
			}
		}
		return false
	}
	a, b := before.Sweeps[0], before.Sweeps[1]
	for _, sw := range before.Sweeps {
		if sw.Rounds != 3 || len(sw.Cells) != 3 || len(sw.Summary) != 1 || sw.Summary[0].Runs != 3 {
			t.Fatalf("%s: rounds %d, %d cells, summary %+v; want 3 runs of one cell", sw.Target, sw.Rounds, len(sw.Cells), sw.Summary)
		}
		for i, c := range sw.Cells {
			if c.Round != i+1 || c.Confirmed > c.Expected || !c.Saturated && c.Confirmed != c.Expected {
				t.Errorf("%s cell %d: round %d, %d of %d confirmed, saturated %v", sw.Target, i, c.Round, c.Confirmed, c.Expected, c.Saturated)
			}
		}
	}
	for i := range 3 { // round 1: a then b; round 2: b then a; round 3: a then b
		if aFirst := a.Cells[i].StartUnixNs < b.Cells[i].StartUnixNs; aFirst != (i%2 == 0) {
			t.Errorf("round %d: a first %v; want the order to alternate", i+1, aFirst)
		}
	}
	// how many times slower a busy machine shows b is not asked; that no
	// cell of b's beats its server's 60 ms is
	switch {
	case len(a.Verdicts) != 0 || len(b.Verdicts) != 1 || b.Verdicts[0].Base != "a":
		t.Errorf("verdicts: a %+v, b %+v; want one, b's against a", a.Verdicts, b.Verdicts)
	case saturated(before):
		if v := b.Verdicts[0]; v.Verdict != "withheld" || !strings.Contains(v.Reason, "saturated") {
			t.Errorf("a cell saturated; b's verdict %+v; want withheld, saying saturated", v)
		}
		t.Logf("a cell saturated on this machine: b's verdict withheld (%s)", b.Verdicts[0].Reason)
	case b.Verdicts[0].Verdict == "inconclusive" && overlapping(a, b):
		t.Logf("a's cells were as slow as b's on this machine: b's verdict inconclusive (%s)", b.Verdicts[0].Reason)
	case b.Verdicts[0].Verdict != "slower" || b.Verdicts[0].Ratio <= 1:
		t.Errorf("verdicts: b %+v; want b slower than a", b.Verdicts)
	}
	for _, c := range b.Cells {
		if mean := time.Duration(c.LatencyNs.Mean); mean < 60*time.Millisecond {
			t.Errorf("b's cell of round %d: mean latency %v; want at least its server's 60 ms", c.Round, mean)
		}
	}
	// a slowed down, b sped up: a regression on a, an improvement on b
	after := grid(slow, fast)
	cmp, err := verdict.CompareRuns(before, after, verdict.Options{MaxRegression: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]verdict.Change{}
	for _, ch := range cmp.Changes {
		got[ch.Target] = ch
	}
	// a saturated run of a cell withholds its latency verdict (failing the
	// comparison where only the head saturated; where both did, the knee
	// rows judge the grid, not this cell); where the
	// machine made the fast server as slow as the slow one, the rounds
	// cannot tell (before's a against after's a, before's b against after's b)
	noisyA := overlapping(before.Sweeps[0], after.Sweeps[0])
	noisyB := overlapping(after.Sweeps[1], before.Sweeps[1])
	if ch := got["a"]; ch.Rate != 10 || ch.Connections != 1 || ch.Verdict == "faster" || ch.Verdict == "indistinguishable" ||
		ch.Verdict != "slower" && !(saturated(before, after) && ch.Verdict == "withheld") && !(noisyA && ch.Verdict == "inconclusive") ||
		ch.Verdict == "slower" && !ch.Regression {
		t.Errorf("a slowed down: %+v; want slower (withheld where a cell saturated, inconclusive where the rounds overlap), a regression", ch)
	}
	if ch := got["b"]; ch.Verdict == "slower" || ch.Verdict != "faster" && !(saturated(before, after) && ch.Verdict == "withheld") && !(noisyB && ch.Verdict == "inconclusive") ||
		ch.Verdict == "faster" && ch.Regression {
		t.Errorf("b sped up: %+v; want faster (withheld where a cell saturated, inconclusive where the rounds overlap), no regression", ch)
	}
	if got["a"].Verdict == "slower" && !cmp.Regressed() {
		t.Error("the comparison passes with a regression")
	}
}

// A grid confirmed in blocks warns when its cells span fewer than ten of
// the target's blocks, and not when they span more.
func TestShortCellsWarn(t *testing.T) {
	blocks := func(n int, every time.Duration) []results.BlockPoint {
		var out []results.BlockPoint
		for i := range n {
			out = append(out, results.BlockPoint{Height: int64(i + 1), TimeUnixNs: int64(i) * int64(every)})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		duration time.Duration
		every    time.Duration
		rounds   int
		want     string
	}{
		{"6 s cells of 1 s blocks", 6 * time.Second, time.Second, 1, "about 5 blocks of 1s"},
		{"the advice with rounds", 6 * time.Second, time.Second, 3, "lengthen the cells, or cells of at least 11s"},
		{"31 s cells", 31 * time.Second, time.Second, 1, ""},
		{"fast blocks", 6 * time.Second, 200 * time.Millisecond, 1, ""},
	} {
		sw := &study.Sweep{Duration: tc.duration}
		res := &results.Sweep{Rounds: tc.rounds, Cells: []results.Cell{{Blocks: blocks(int(tc.duration/tc.every), tc.every)}}}
		got := shortCells(sw, res)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q; want %q", tc.name, got, tc.want)
		}
	}
	if got := shortCells(&study.Sweep{Duration: 6 * time.Second}, &results.Sweep{Cells: []results.Cell{{}}}); got != "" {
		t.Errorf("a grid confirmed by answers (no blocks) warns: %q", got)
	}
}

// Scrapes come a fifth of the shortest batch period apart unless the study
// sets its own interval, which warns when it would alias with the batches.
func TestScrapeInterval(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		every      time.Duration
		aliases    bool
	}{
		{"no batches", "  - {name: s, call: get, load: {concurrency: 1}}\n", time.Second, false},
		{"a batched sweep", "  - {name: s, call: get, sweep: {connections: [1], rate: [10], duration: 2s}}\n", 200 * time.Millisecond, false},
		{"an open sweep", "  - {name: s, call: get, sweep: {connections: [1], rate: [10], duration: 2s, load: open}}\n", time.Second, false},
		{"a batched scenario", "  - {name: s, call: get, load: {batch: {per_period: 5, period: 500ms}}, duration: 2s}\n", 100 * time.Millisecond, false},
		{"set, aliasing", "  - {name: s, call: get, sweep: {connections: [1], rate: [10], duration: 2s}}\nmetrics: {interval: 1s}\n", time.Second, true},
		{"set, fine", "  - {name: s, call: get, sweep: {connections: [1], rate: [10], duration: 2s}}\nmetrics: {interval: 100ms}\n", 100 * time.Millisecond, false},
	} {
		s := runtest.Parse(t, "version: 1\nname: m\ntargets: [{name: a, endpoints: {http: \"http://127.0.0.1:1/\"}}]\ncalls: {get: {http: {path: /}}}\nscenarios:\n"+tc.yaml)
		every, why, aliases := scrapeInterval(s)
		if every != tc.every || aliases != tc.aliases {
			t.Errorf("%s: every %v (%q), aliases %v; want %v, %v", tc.name, every, why, aliases, tc.every, tc.aliases)
		}
	}
}

// oneAtATime answers one request at a time, each after delay: a capacity
// of at most one answer per delay however many connections ask (a sleep
// may overshoot, never undershoot), so in any span of time s it answers
// at most s/delay + 1 requests.
func oneAtATime(t *testing.T, delay time.Duration) string {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		time.Sleep(delay)
		mu.Unlock()
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// TestSweepKneeNotAboveCapacity searches 2 s cells of an open loop on one
// connection for the knee of a server whose capacity is 100/s by
// construction. The cells' last second would let a queue of up to a second
// drain (at 141/s the server answers everything by the cell's end), so
// only the answers by the window's end and a tenth of it count, and a
// latency that grows over the cell saturates it: the knee is at most the
// capacity (a busy machine may find it lower, never higher: the probes
// above the capacity, 141/s and more, are beyond what it can answer in
// 1.1 s whatever the latencies).
func TestSweepKneeNotAboveCapacity(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // the bound holds however slow the machine: it can only lower the knee
	const delay = 10 * time.Millisecond
	const capacity = float64(time.Second / delay)
	// the probes: 25 and 400, then 100 (the capacity itself), and above it
	// 200 and 141 (or below it 50 and 71): precision 0.5 stops at a bracket
	// of at most 1.5
	res := sweepRun(t, oneAtATime(t, delay), "{connections: [1], duration: 2s, load: open, search: {from: 25, to: 400, precision: 0.5}}")
	sr := res.Sweeps[0].Search
	if len(sr) != 1 {
		t.Fatalf("search: %+v", sr)
	}
	if rule := res.Sweeps[0].Rule; rule != "confirmed < 95 % of expected, or the latency grows over the cell" {
		t.Errorf("rule %q", rule)
	}
	for _, c := range res.Sweeps[0].Cells {
		t.Logf("rate %.4g: %d of %d confirmed, %d sent, %d ok, %d dropped, saturated %v, thirds' p50 %v, p99 %v", c.Rate, c.Confirmed, c.Expected,
			c.Sent, c.OK, c.Dropped, c.Saturated, c.ThirdsP50Ns, time.Duration(c.LatencyNs.P99))
		// every arrival of the cell's schedule is sent or dropped (cut off
		// by the cell's end); none is counted twice
		if c.Confirmed > c.OK || c.OK > c.Sent || c.Sent+c.Dropped != c.Expected {
			t.Errorf("rate %.4g: %d confirmed, %d ok, %d sent, %d dropped, %d expected; want confirmed ≤ ok ≤ sent, sent + dropped = expected",
				c.Rate, c.Confirmed, c.OK, c.Sent, c.Dropped, c.Expected)
		}
		// processed is what came by the window's end and an allowance
		// (at most a tenth of it): never more than the server can answer
		// in that time, so above 1.1/0.95 of its capacity a cell is
		// saturated however slow the machine
		by := time.Duration(c.ProcessedByNs)
		if most := int64(by/delay) + 1; by < time.Second || by > 1100*time.Millisecond || c.Confirmed > most {
			t.Errorf("rate %.4g: %d confirmed within %v; want that within the cell, and the server answers at most %d in it", c.Rate, c.Confirmed, by, most)
		}
		if len(c.ThirdsP50Ns) != 3 || c.LatencyGrows && !c.Saturated {
			t.Errorf("rate %.4g: thirds %v, latency grows %v, saturated %v", c.Rate, c.ThirdsP50Ns, c.LatencyGrows, c.Saturated)
		}
	}
	if got := sr[0]; got.Sustained > capacity || got.Saturated <= got.Sustained {
		t.Errorf("search found [%v, %v) in %d probes; the server's capacity is %v/s: want the knee at most that", got.Sustained, got.Saturated, got.Probes, capacity)
	}
}

// The growth rule of a cell's knee: the thirds' medians must rise third by
// third, each step beyond half the first third's median plus 5 ms; noise
// in one third (or the last two) is no staircase, and a third without an
// answer leaves the rule out.
func TestKneeGrowthRule(t *testing.T) {
	const ms = int64(time.Millisecond)
	for _, tc := range []struct {
		name string
		p50  []int64
		want bool
	}{
		{"steady", []int64{10 * ms, 10 * ms, 11 * ms}, false},
		{"a queue", []int64{80 * ms, 220 * ms, 360 * ms}, true},
		{"a slow queue on a fast target", []int64{ms, 7 * ms, 13 * ms}, true},
		{"steps of exactly the tolerance", []int64{10 * ms, 20 * ms, 30 * ms}, false},
		{"steps just beyond it", []int64{10 * ms, 20*ms + 1, 30*ms + 2}, true},
		{"noise in the last third", []int64{ms, ms, 200 * ms}, false},
		{"a level burst over the last two", []int64{ms, 150 * ms, 153 * ms}, false},
		{"noise in the first", []int64{200 * ms, 10 * ms, 300 * ms}, false},
		{"no answer in the last third", []int64{80 * ms, 220 * ms, 0}, false},
		{"one third", []int64{80 * ms}, false},
	} {
		if got := latencyGrows(tc.p50); got != tc.want {
			t.Errorf("%s %v: grows %v; want %v", tc.name, tc.p50, got, tc.want)
		}
	}
}
