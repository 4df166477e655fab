package comet_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/verdict"
)

// needTool finds a CometBFT tool on PATH. The test command installs them
// (cometbft and test/loadtime's report at a pinned version) and sets
// TANDEM_REQUIRE_COMETBFT=1, so there a missing tool fails the test.
func needTool(t *testing.T, name string) string {
	t.Helper()
	return tooltest.Need(t, "TANDEM_REQUIRE_COMETBFT", name)
}

// The example's --quick grid against a real single-validator node, checked
// against CometBFT's own report tool on the same blockstore: it reads every
// transaction tandem sent (none invalid), its per-experiment counts equal
// tandem's confirmed, its average latency is within 2 % of tandem's mean,
// and cells that kept up confirmed exactly what was expected.
func TestQuickGridAgainstCometBFT(t *testing.T) {
	needTool(t, "cometbft")
	report := needTool(t, "report")
	s, err := study.Read("../examples/cometbft/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Quick()
	out := t.TempDir()
	self, _ := os.Executable()
	res, err := runner.Run(context.Background(), s, runner.Options{Out: out, Self: self, Version: "test", KeepData: true, StopGrace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sweeps) != 1 || len(res.Sweeps[0].Cells) != 4 {
		t.Fatalf("sweeps: %+v", res.Sweeps)
	}
	// the results say which database the node kept its blocks in: report reads it with that
	backend := res.Sweeps[0].DBBackend
	if backend != "goleveldb" {
		t.Fatalf("the sweep records the node's database as %q; CometBFT v0.38's default is goleveldb", backend)
	}
	checkAgainstReport(t, report, backend, filepath.Join(out, "work", "node", "home", "data"), res.Sweeps[0].Cells, 0)
	// scraped a fifth of the batch period apart, the mempool's size is
	// seen between a batch and the block that takes it (at a 1 s scrape it
	// read 0 in every run, at one phase of each second)
	if m := res.Targets[0].Metrics; m == nil || time.Duration(m.IntervalNs) != 200*time.Millisecond {
		t.Errorf("metrics %+v; want scrapes every 200ms", m)
	}
	// whether a scrape falls between a batch and its block is a matter of
	// phase: a cell of one small batch a second can miss it every time (one
	// run in about ten did); every cell records the size, and the busiest
	// cells, whose batches wait longer, must see them
	var busiest float64
	for _, c := range res.Sweeps[0].Cells {
		t.Logf("cell c=%d r=%v: mempool max %v, mean %v", c.Connections, c.Rate, c.Metrics["mempool_size_max"], c.Metrics["mempool_size_mean"])
		mx, ok := c.Metrics["mempool_size_max"]
		if !ok {
			t.Errorf("cell c=%d r=%v: no mempool size recorded (metrics %v)", c.Connections, c.Rate, c.Metrics)
		}
		if c.Connections*int(c.Rate) >= 200 {
			busiest = max(busiest, mx)
		}
	}
	if busiest <= 0 {
		t.Errorf("the busiest cells' mempool max %v; want their batches seen in the mempool", busiest)
	}
}

// qaGrid runs the example's node with the given block interval
// (timeout_commit) on a one-cell grid of 3 rounds and returns the results.
func qaGrid(t *testing.T, timeoutCommit string) *results.Results {
	t.Helper()
	src, err := os.ReadFile("../examples/cometbft/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := string(src)
	for _, r := range [][2]string{
		{"CMT_CONSENSUS_TIMEOUT_COMMIT: 500ms", "CMT_CONSENSUS_TIMEOUT_COMMIT: " + timeoutCommit},
		{"    call: tx\n    sweep:\n      connections: [1, 2, 4]\n      rate: [25, 50, 100, 200]\n      duration: 90s",
			"    call: tx\n    rounds: 4\n    sweep:\n      connections: [1]\n      rate: [20]\n      duration: 4s\n      load: open"},
	} {
		if !strings.Contains(y, r[0]) {
			t.Fatalf("the example no longer has %q", r[0])
		}
		y = strings.Replace(y, r[0], r[1], 1)
	}
	s, err := study.Parse("qa-grid.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	self, _ := os.Executable()
	res, err := runner.Run(context.Background(), s, runner.Options{Out: out, Self: self, Version: "test", StopGrace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Read(filepath.Join(out, runner.ResultsFile)); err != nil {
		t.Fatalf("the results do not validate: %v", err)
	}
	return res
}

// Two runs of a QA grid against real nodes, the second with a slowdown
// planted (blocks 1.5 s apart instead of 200 ms): tandem compare finds the
// cell slower, a regression (exit 1), and the other way round faster, none.
// The cells are open loops: a batched cell's mean latency is set by the
// phase of its batches against the blocks, which swings 0.5–0.9 s from
// run to run at 1 s blocks, as wide as the slowdown.
//
// On a busy machine (the package's tests run one after another, but with
// every core busy and the testnet beside it) a starved node's latency
// swung 128–564 ms at 200 ms blocks, as wide as a slowdown to 1 s blocks:
// at 1.5 s a transaction waits at least the 1.5 s to the next block's
// commit. And a starved generator may not send a cell's every arrival by
// its end: what it sent is confirmed, but the cell is saturated (under 95 %
// of what was expected), and the comparison rightly withholds its latency
// verdict; the test then holds that instead.
func TestCompareQAGridPlantedSlowdown(t *testing.T) {
	needTool(t, "cometbft")
	base, head := qaGrid(t, "200ms"), qaGrid(t, "1500ms")
	saturated := 0
	for _, r := range []*results.Results{base, head} {
		if len(r.Sweeps) != 1 || len(r.Sweeps[0].Cells) != 4 || len(r.Sweeps[0].Summary) != 1 {
			t.Fatalf("sweeps: %+v", r.Sweeps)
		}
		saturated += r.Sweeps[0].Summary[0].Saturated
		for _, c := range r.Sweeps[0].Cells {
			// every arrival sent or dropped; what the node confirmed was
			// sent (an answer cut off still reached it), and everything
			// answered ok was confirmed (the mempool drained)
			if c.Sent+c.Dropped != c.Expected || c.OK > c.Confirmed || c.Confirmed > c.Expected || c.Confirmed == 0 ||
				c.Duplicates != 0 || c.Error != "" {
				t.Errorf("cell round %d: expected %d, sent %d, dropped %d, ok %d, confirmed %d, duplicates %d, error %q",
					c.Round, c.Expected, c.Sent, c.Dropped, c.OK, c.Confirmed, c.Duplicates, c.Error)
			}
		}
	}
	cmp, err := verdict.CompareRuns(base, head, verdict.Options{MaxRegression: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range cmp.Changes {
		t.Logf("%s: base mean latency %.0f–%.0f ms, head %.0f–%.0f ms: %s", ch.Where(), ch.BaseRange[0]/1e6, ch.BaseRange[1]/1e6,
			ch.HeadRange[0]/1e6, ch.HeadRange[1]/1e6, ch.Reason)
	}
	back, err := verdict.CompareRuns(head, base, verdict.Options{MaxRegression: 5})
	if err != nil {
		t.Fatal(err)
	}
	if saturated > 0 {
		t.Logf("%d of the 8 cells saturated on this machine: the latency verdicts are withheld, not judged", saturated)
		for _, c := range []verdict.Comparison{cmp, back} {
			if len(c.Changes) != 1 || c.Changes[0].Verdict != stats.Withheld || !strings.HasPrefix(c.Changes[0].Reason, "saturated: ") {
				t.Errorf("a saturated cell: %+v; want the verdict withheld, saying so", c.Changes)
			}
		}
	} else {
		if len(cmp.Changes) != 1 || cmp.Changes[0].Verdict != stats.Slower || !cmp.Regressed() || cmp.Gate() == nil {
			t.Errorf("blocks 7.5× slower: %+v; want the cell slower, a regression", cmp.Changes)
		}
		if len(back.Changes) != 1 || back.Changes[0].Verdict != stats.Faster || back.Regressed() {
			t.Errorf("blocks 7.5× faster: %+v; want the cell faster, no regression", back.Changes)
		}
	}
	// cells of 3 s of load span 2 blocks of 1.5 s: the head's run says so
	if !slices.ContainsFunc(head.Warnings, func(w string) bool { return strings.Contains(w, "the phase of the batches against the blocks") }) {
		t.Errorf("warnings %q; want the short-cell warning", head.Warnings)
	}
}

// checkAgainstReport hands a kept blockstore to CometBFT's report tool:
// every cell is one of its experiments, with tandem's confirmed count and
// (within 2 %) tandem's mean latency, it found others experiments besides,
// and it read no invalid transaction.
func checkAgainstReport(t *testing.T, report, backend, dataDir string, cells []results.Cell, others int) {
	t.Helper()
	csvPath := filepath.Join(t.TempDir(), "latencies.csv")
	cmd := exec.Command(report, "--database-type", backend, "--data-dir", dataDir, "--csv", csvPath)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("report: %v\n%s", err, b)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 || rows[0][0] != "experiment_id" || rows[0][2] != "duration_ns" {
		t.Fatalf("report's CSV: %v, %d rows, header %v", err, len(rows), rows[:min(1, len(rows))])
	}
	type agg struct {
		n   int64
		sum float64
	}
	byID := map[string]*agg{}
	for _, r := range rows[1:] {
		d, err := strconv.ParseFloat(r[2], 64)
		if err != nil {
			t.Fatalf("duration %q: %v", r[2], err)
		}
		a := byID[r[0]]
		if a == nil {
			a = &agg{}
			byID[r[0]] = a
		}
		a.n++
		a.sum += d
	}
	if len(byID) != len(cells)+others {
		t.Errorf("report found %d experiments; want the %d cells and %d others", len(byID), len(cells), others)
	}
	for _, c := range cells {
		a := byID[c.RunID]
		if a == nil {
			t.Errorf("cell c=%d r=%v (%s): not in the report", c.Connections, c.Rate, c.RunID)
			continue
		}
		if a.n != c.Confirmed {
			t.Errorf("cell c=%d r=%v: report counts %d, tandem confirmed %d", c.Connections, c.Rate, a.n, c.Confirmed)
		}
		if mean := a.sum / float64(a.n); math.Abs(mean-c.LatencyNs.Mean)/mean > 0.02 {
			t.Errorf("cell c=%d r=%v: report's mean %.0f ns, tandem's %.0f ns: more than 2 %% apart", c.Connections, c.Rate, mean, c.LatencyNs.Mean)
		}
		if !c.Saturated && float64(c.Confirmed) < 0.95*float64(c.Expected) {
			t.Errorf("cell c=%d r=%v kept up but confirmed %d of %d, below the 95 %% rule", c.Connections, c.Rate, c.Confirmed, c.Expected)
		}
		if c.Duplicates != 0 || c.Error != "" {
			t.Errorf("cell c=%d r=%v: %d duplicates, error %q", c.Connections, c.Rate, c.Duplicates, c.Error)
		}
	}
	// the report's text output counts the invalid transactions: none
	b, err := exec.Command(report, "--database-type", backend, "--data-dir", dataDir).CombinedOutput()
	if err != nil || !strings.Contains(string(b), "Total Invalid Tx: 0\n") {
		t.Errorf("report: %v\n%s", err, b)
	}
}

// The testnet example here: 4 validators and 2 full nodes on loopback, the
// quick grid against the first validator (its kept blockstore agrees with
// CometBFT's report), and the first full node wiped and restarted under
// load: it answers again, catches up with the group by blocksync, and every
// node's height is on one chart with the event marked.
func TestTestnetExample(t *testing.T) {
	needTool(t, "cometbft")
	reportBin := needTool(t, "report")
	s, err := study.Read("../examples/cometbft-testnet/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Quick()
	out := t.TempDir()
	self, _ := os.Executable()
	res, err := runner.Run(context.Background(), s, runner.Options{Out: out, Self: self, Version: "test", KeepData: true, StopGrace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tg := res.Targets[0]
	if len(tg.Nodes) != 6 || tg.Startup == nil {
		t.Fatalf("nodes %+v; want 6, started", tg.Nodes)
	}
	for _, n := range tg.Nodes {
		if n.Startup == nil || n.Error != "" {
			t.Errorf("node %s: %+v", n.Name, n)
		}
	}
	// the grid, against CometBFT's own report on the first validator's blocks
	if len(res.Sweeps) != 1 || len(res.Sweeps[0].Cells) != 4 {
		t.Fatalf("sweeps: %+v", res.Sweeps)
	}
	checkAgainstReport(t, reportBin, "goleveldb", filepath.Join(out, "work", "testnet", "node0", "data"), res.Sweeps[0].Cells, 1)
	// the wipe of full0 under load: back, caught up
	rds := res.Scenarios[0].Rounds
	if len(rds) != 1 || len(rds[0].Perturbations) != 1 {
		t.Fatalf("rounds %+v", rds)
	}
	ev := rds[0].Perturbations[0]
	t.Logf("full0 wiped: down %v, answering after %v, ready after %v, caught up after %v (%d behind)", time.Duration(ev.DownNs),
		time.Duration(ev.AnswersAfterNs), time.Duration(ev.ReadyAfterNs), time.Duration(ev.CaughtUpNs), ev.BehindAtReady)
	if ev.Error != "" || ev.Node != "full0" || ev.Action != "wipe-and-restart" || ev.AnswersAfterNs <= 0 || ev.CaughtUpNs < ev.AnswersAfterNs {
		t.Errorf("perturbation %+v; want full0 back and caught up", ev)
	}
	if rds[0].Failed || rds[0].OK != rds[0].Requests {
		t.Errorf("the load on validator0 through full0's wipe: %+v", rds[0].Sample)
	}
	// every node's height scraped; full0's starts over after the wipe
	heights := map[string][][2]float64{}
	for _, sr := range tg.Metrics.Series {
		if sr.Name == "cometbft_consensus_height" {
			heights[sr.Labels["node"]] = sr.Points
		}
	}
	if len(heights) != 6 {
		t.Fatalf("heights of %d nodes; want 6", len(heights))
	}
	wiped := float64(ev.Time.UnixNano() - tg.Metrics.StartUnixNs)
	var before, after float64 = 0, math.Inf(1)
	for _, p := range heights["full0"] {
		if p[0] < wiped {
			before = max(before, p[1])
		} else {
			after = min(after, p[1])
		}
	}
	if before < 10 || after >= before {
		t.Errorf("full0's height: up to %v before the wipe, down to %v after; want it to start over", before, after)
	}
	// one chart of the heights, a line per node, the wipe marked
	var page bytes.Buffer
	if err := report.HTML(&page, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"title":"cometbft_consensus_height {chain_id=`, `"label":"testnet full1"`, `"label":"testnet full0 wipe-and-restart"`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the HTML report lacks %s", want)
		}
	}
}

// The two-region example: two six-node testnets, every node dialling each
// peer through a link of its pair, one with 100 ms one way between its two
// regions. Asserted here is what holds on any machine: every link as
// configured, no commit in the two-region testnet sooner than a round trip
// between the regions (a block needs votes from both), and full0, cut off
// from its peers under load, falling behind and catching up after its
// links pass again. How much slower the two-region testnet is (the
// verdict) is measured by running the example (docs/network.md).
func TestRegionsExample(t *testing.T) {
	needTool(t, "cometbft")
	s, err := study.Read("../examples/cometbft-regions/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// short: three rounds of three commits, no open loop, a 6 s cut
	s.Defaults.Warmup = 500 * time.Millisecond
	var kept []study.Scenario
	for _, sc := range s.Scenarios {
		switch sc.Name {
		case "block-interval":
			sc.Requests, sc.Rounds, sc.Adaptive = 3, 3, false
		case "full0-cut-off":
			sc.Duration = 20 * time.Second
			sc.Perturbations[0].At, sc.Perturbations[0].For = 3*time.Second, 6*time.Second
		default:
			continue
		}
		kept = append(kept, sc)
	}
	s.Scenarios = kept
	out := t.TempDir()
	self, _ := os.Executable()
	res, err := runner.Run(context.Background(), s, runner.Options{Out: out, Self: self, Version: "test", StopGrace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Read(filepath.Join(out, runner.ResultsFile)); err != nil {
		t.Fatalf("the results do not validate: %v", err)
	}
	for _, tg := range res.Targets {
		if len(tg.Nodes) != 6 || tg.PeerNetwork == nil || len(tg.PeerNetwork.Links) != 30 {
			t.Fatalf("target %s: %d nodes, peer network %+v; want 6 nodes and a link for each of the 30 ordered pairs", tg.Name, len(tg.Nodes), tg.PeerNetwork)
		}
		for _, l := range tg.PeerNetwork.Links {
			want := time.Millisecond
			if tg.Name == "two-regions" && l.FromRegion != l.ToRegion {
				want = 100 * time.Millisecond
			}
			if l.Port != "p2p" || time.Duration(l.Up.DelayNs) != want || time.Duration(l.Down.DelayNs) != want {
				t.Errorf("target %s: link %+v; want port p2p and %v each way", tg.Name, l, want)
			}
		}
	}
	for _, sc := range res.Scenarios {
		switch sc.Name {
		case "block-interval":
			for _, rd := range sc.Rounds {
				// a commit the node gave up waiting for (-32603, its
				// broadcast_tx_commit timeout) is a busy machine's; any
				// other failure, or none committed, is not
				if rd.Sample.OK == 0 || rd.Sample.OK+rd.Sample.Errors["jsonrpc:-32603"] != rd.Sample.Requests {
					t.Errorf("%s round %d: %d of %d committed, errors %v", rd.Target, rd.Round, rd.Sample.OK, rd.Sample.Requests, rd.Sample.Errors)
				} else if rd.Sample.OK < rd.Sample.Requests {
					t.Logf("%s round %d: %d of %d committed, the rest timed out in the node (%v)", rd.Target, rd.Round, rd.Sample.OK, rd.Sample.Requests, rd.Sample.Errors)
				}
				if floor := 200 * time.Millisecond; rd.Target == "two-regions" && time.Duration(rd.Sample.LatencyNs.Min) < floor {
					t.Errorf("two-regions round %d: a commit after %v, under a round trip between the regions (%v)", rd.Round, time.Duration(rd.Sample.LatencyNs.Min), floor)
				}
			}
		case "full0-cut-off":
			if len(sc.Rounds) != 1 || len(sc.Rounds[0].Perturbations) != 1 {
				t.Fatalf("rounds %+v; want one round with the cut", sc.Rounds)
			}
			ev := sc.Rounds[0].Perturbations[0]
			t.Logf("full0 cut off: down %v, caught up after %v (%d behind when its peers came back)", time.Duration(ev.DownNs), time.Duration(ev.CaughtUpNs), ev.BehindAtReady)
			if ev.Error != "" || ev.Node != "full0" || ev.Action != "disconnect" || time.Duration(ev.DownNs) < 6*time.Second ||
				ev.CaughtUpNs < ev.DownNs || ev.BehindAtReady < 1 {
				t.Errorf("perturbation %+v; want full0 cut for 6 s, behind when its peers came back, then caught up", ev)
			}
		}
	}
}
