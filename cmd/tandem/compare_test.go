package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
)

// resultsWith writes a results file whose one scenario has target a's
// rounds at the given headline values (latency, lower is better).
func resultsWith(t *testing.T, name string, values ...float64) string {
	t.Helper()
	r := results.New()
	r.Machine = results.Machine{CPUModel: "cpu", Cores: 2, Kernel: "6.1"}
	sc := results.Scenario{Name: "lat", Call: "ping", Metric: "latency_p50_ns", Direction: "lower", Unit: "request",
		Load: results.Load{Model: "closed", Concurrency: []int{1}}, Rounds: []results.Round{}, Comparisons: []results.Comparison{}}
	for i, v := range values {
		sc.Rounds = append(sc.Rounds, results.Round{Round: i + 1, Order: 1, Target: "a", Concurrency: 1, Headline: v})
	}
	sc.Summary = []results.Summary{{Target: "a", Concurrency: 1, N: len(values)}}
	r.Scenarios = append(r.Scenarios, sc)
	path := filepath.Join(t.TempDir(), name)
	if err := results.Write(path, r); err != nil {
		t.Fatal(err)
	}
	return path
}

// eight is eight rounds about v, the same scatter of ±1 % each time.
func eight(v float64) []float64 {
	out := make([]float64, 8)
	for i, f := range []float64{0, 0.01, -0.01, 0.005, -0.005, 0.0025, -0.0075, 0.0075} {
		out[i] = v * (1 + f)
	}
	return out
}

func TestCompare(t *testing.T) {
	base := resultsWith(t, "base.json", eight(100)...)
	cases := []struct {
		name    string
		head    []float64
		args    []string
		code    int
		verdict string
	}{
		{"identical", eight(100), nil, exitOK, "indistinguishable"},
		{"noise", eight(100.3), nil, exitOK, "indistinguishable"},
		{"faster", eight(50), nil, exitOK, "faster"},
		{"slower", eight(150), nil, exitCheckFailed, "slower"},
		{"slower within the allowance", eight(150), []string{"--max-regression", "60"}, exitOK, "slower"},
		{"undecided", []float64{80, 300, 90, 150}, nil, exitCheckFailed, "inconclusive"},
		{"undecided, passing", []float64{80, 300, 90, 150}, []string{"--on-inconclusive", "pass"}, exitOK, "inconclusive"},
	}
	for _, c := range cases {
		head := resultsWith(t, "head.json", c.head...)
		code, out, stderr := tandem(t, append([]string{"compare", base, head, "--format", "json"}, c.args...)...)
		var got struct {
			Changes []struct {
				Verdict    string
				Regression bool
			}
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Changes) != 1 {
			t.Fatalf("%s: output %q (%v)", c.name, out, err)
		}
		if code != c.code || got.Changes[0].Verdict != c.verdict {
			t.Errorf("%s: exit %d, verdict %s (%s); want exit %d, %s", c.name, code, got.Changes[0].Verdict, stderr, c.code, c.verdict)
		}
	}
	head := resultsWith(t, "head.json", eight(150)...)
	code, out, _ := tandem(t, "compare", base, head)
	if code != exitCheckFailed || !strings.Contains(out, "lat a c=1 (errors 0.0 % → 0.0 %): slower (head/base 1.50×: 50.0 % worse, [") || !strings.Contains(out, "  REGRESSION") {
		t.Errorf("text: exit %d, %q", code, out)
	}
	code, out, _ = tandem(t, "compare", base, resultsWith(t, "same.json", eight(100)...))
	if _, verdict, _ := strings.Cut(out, "): "); code != exitOK || verdict != "indistinguishable (within ±2.0 %)\n" {
		t.Errorf("indistinguishable pair shows a number: %q", out)
	}
	if code, _, stderr := tandem(t, "compare", base, head, "--on-inconclusive", "maybe"); code != exitBadInput || !strings.Contains(stderr, "--on-inconclusive") {
		t.Errorf("--on-inconclusive maybe: exit %d, %q", code, stderr)
	}
	if code, _, stderr := tandem(t, "compare", base, filepath.Join(t.TempDir(), "missing.json")); code != exitBadInput || !strings.Contains(stderr, "no such file") {
		t.Errorf("missing head: exit %d, %q", code, stderr)
	}
	code, out, _ = tandem(t, "compare", base, head, "--format", "md")
	if code != exitCheckFailed || !strings.Contains(out, "| lat | a | c=1 | **slower (head/base 1.50×: 50.0 % worse, \\[") || !strings.Contains(out, "**regression**: 1 regressions (beyond 0 %") {
		t.Errorf("md, slower: exit %d\n%s", code, out)
	}
	code, out, _ = tandem(t, "compare", base, resultsWith(t, "same2.json", eight(100)...), "--format", "md")
	if code != exitOK || !strings.Contains(out, "| lat | a | c=1 | indistinguishable (within ±2.0 %) | – | 0.0 % → 0.0 % |") {
		t.Errorf("md, indistinguishable: exit %d\n%s", code, out)
	}
	if code, _, _ := tandem(t, "compare", base, head, "--format", "xml"); code != exitBadInput {
		t.Errorf("--format xml: exit %d; want 2", code)
	}
}

// writeResults writes r to a file in a temp dir.
func writeResults(t *testing.T, r *results.Results) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.json")
	if err := results.Write(path, r); err != nil {
		t.Fatal(err)
	}
	return path
}

// throughputResults is a results file of one throughput scenario, each
// target's rounds at the given units/s, every round sending 1,000 requests
// and f applied to each round.
func throughputResults(targets map[string][]float64, f func(*results.Round)) *results.Results {
	r := results.New()
	r.Machine = results.Machine{CPUModel: "cpu", Cores: 2, Kernel: "6.1"}
	sc := results.Scenario{Name: "tput", Call: "ping", Metric: "units_per_s", Direction: "higher", Unit: "request",
		Load: results.Load{Model: "closed", Concurrency: []int{8}}, Rounds: []results.Round{}, Comparisons: []results.Comparison{}}
	for _, name := range []string{"a", "b"} {
		vs, ok := targets[name]
		if !ok {
			continue
		}
		for i, v := range vs {
			rd := results.Round{Round: i + 1, Target: name, Concurrency: 8, Headline: v, GeneratorCPUUse: 0.4,
				Sample: results.Sample{Requests: 1000, OK: 1000, UnitsPerS: v, Errors: map[string]int64{}}}
			if f != nil {
				f(&rd)
			}
			sc.Rounds = append(sc.Rounds, rd)
		}
		sc.Summary = append(sc.Summary, results.Summary{Target: name, Concurrency: 8, N: len(vs)})
	}
	r.Scenarios = append(r.Scenarios, sc)
	return r
}

// compare applies the run's policy: a busy generator withholds, a 4.9 %
// fall passes 5 %, a failing or lost target is a regression, NaN is a
// usage error.
func TestCompareAppliesThePolicy(t *testing.T) {
	base := writeResults(t, throughputResults(map[string][]float64{"a": eight(100_000), "b": eight(100_000)}, nil))
	busy := func(rd *results.Round) { rd.GeneratorCPUUse = 0.97 }
	failing := func(rd *results.Round) {
		if rd.Target == "b" {
			rd.OK, rd.Errors, rd.Failed, rd.Error, rd.Headline = 0, map[string]int64{"refused": 1000}, true, "no successful request", 0
		}
	}
	cases := []struct {
		name string
		head *results.Results
		args []string
		code int
		want string
	}{
		{"a busy generator", throughputResults(map[string][]float64{"a": eight(60_000), "b": eight(60_000)}, busy), []string{"--on-inconclusive", "pass"}, exitOK,
			"tput a c=8 (errors 0.0 % → 0.0 %): withheld: client-bound: the generator used 97.0 % of its capacity in the median round of head"},
		{"a 4 % fall within 5 %", throughputResults(map[string][]float64{"a": eight(96_000), "b": eight(100_000)}, nil), []string{"--max-regression", "5"}, exitOK,
			"tput a c=8 (errors 0.0 % → 0.0 %): slower (head/base 0.960×: 4.0 % worse, ["},
		{"a 9 % fall beyond 5 %", throughputResults(map[string][]float64{"a": eight(91_000), "b": eight(100_000)}, nil), []string{"--max-regression", "5"}, exitCheckFailed,
			"tput a c=8 (errors 0.0 % → 0.0 %): slower (head/base 0.910×: 9.0 % worse, ["},
		{"a target failing every round", throughputResults(map[string][]float64{"a": eight(100_000), "b": eight(0)}, failing), nil, exitCheckFailed,
			"tput b c=8 (errors 0.0 % → 100.0 %): failing: 100.0 % of requests failed (refused ×8,000); base: 0.0 %  REGRESSION"},
		{"the base failing every round", throughputResults(map[string][]float64{"a": eight(100_000), "b": eight(100_000)}, nil), nil, exitCheckFailed,
			"the base run cannot vouch for the head  REGRESSION"},
		{"a target lost", throughputResults(map[string][]float64{"a": eight(100_000)}, nil), nil, exitCheckFailed,
			": missing: measured in the base, not in the head  REGRESSION"},
	}
	failingBase := writeResults(t, throughputResults(map[string][]float64{"a": eight(100_000), "b": eight(0)}, failing))
	for _, c := range cases {
		b := base
		if strings.HasPrefix(c.name, "the base failing") {
			b = failingBase
		}
		code, out, stderr := tandem(t, append([]string{"compare", b, writeResults(t, c.head)}, c.args...)...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d\n%s%s\nwant exit %d and %q", c.name, code, out, stderr, c.code, c.want)
		}
	}
	for _, bad := range []string{"NaN", "-1", "+Inf"} {
		if code, _, stderr := tandem(t, "compare", base, base, "--max-regression", bad); code != exitBadInput || !strings.Contains(stderr, "--max-regression") {
			t.Errorf("--max-regression %s: exit %d, %q; want 2", bad, code, stderr)
		}
	}
}

func TestCostCommand(t *testing.T) {
	bench := "../../cost/testdata/bench.txt"
	code, out, stderr := tandem(t, "cost", "--bench", bench, "--format", "json", "-o", filepath.Join(t.TempDir(), "c.json"))
	if code != exitOK || !strings.Contains(out, `"schema": "tandem.cost/v1"`) || !strings.Contains(out, `"BenchmarkParse/small"`) {
		t.Errorf("--bench: exit %d\n%s\n%s", code, out, stderr)
	}
	base := filepath.Join(t.TempDir(), "base.json")
	os.WriteFile(base, []byte(`{"schema":"tandem.cost/v1","costs":[{"name":"BenchmarkParse/small","allocations_per_op":11,"source":"go-bench"}],"gates":[]}`), 0o644)
	if code, out, _ := tandem(t, "cost", "--bench", bench, "--baseline", base); code != exitCheckFailed || !strings.Contains(out, "FAILED") {
		t.Errorf("allocations rose: exit %d\n%s", code, out)
	}
	if code, _, _ := tandem(t, "cost", "--bench", bench, "--max-allocs", "400"); code != exitOK {
		t.Errorf("under the ceiling: exit %d", code)
	}
	for _, args := range [][]string{{"cost"}, {"cost", "--", "prog", "--n", "5"}, {"cost", "--bench", "missing.txt"}, {"cost", "--bench", bench, "--baseline", bench}} {
		if code, _, stderr := tandem(t, args...); code != exitBadInput || stderr == "" {
			t.Errorf("%v: exit %d, %q; want 2 with a message", args, code, stderr)
		}
	}
}

// sweepResults is a results file of one grid of one cell (1 connection at
// 100/s) on target node, run once per mean latency given; saturated marks
// the runs that fell short.
func sweepResults(means []float64, saturated ...bool) *results.Results {
	r := results.New()
	r.Machine = results.Machine{CPUModel: "cpu", Cores: 2, Kernel: "6.1"}
	sw := results.Sweep{Scenario: "qa-grid", Target: "node", Call: "tx", Load: "batched", Confirm: "cometbft",
		Rule: "confirmed < 95 % of expected", Rounds: len(means), Saturation: []results.SaturationPoint{}}
	for i, m := range means {
		c := results.Cell{Connections: 1, Rate: 100, DurationNs: int64(6e9), Expected: 500, Sent: 500, OK: 500, Confirmed: 500,
			LatencyNs: results.Distribution{Mean: m, P50: int64(m), P99: int64(m)}, Errors: map[string]int64{}, Round: i + 1}
		if i < len(saturated) && saturated[i] {
			c.Confirmed, c.Saturated = 300, true
		}
		sw.Cells = append(sw.Cells, c)
	}
	r.Sweeps = append(r.Sweeps, sw)
	return r
}

// compare holds a grid's cells between runs: a planted slowdown of the
// mean latency (a longer block interval) and a cell that saturates where
// it kept up are regressions (exit 1); a faster head, or one within the
// noise, is not.
func TestCompareSweepCells(t *testing.T) {
	base := writeResults(t, sweepResults(eight(500e6)))
	cases := []struct {
		name string
		head *results.Results
		code int
		want string
	}{
		{"the same", sweepResults(eight(501e6)), exitOK, "indistinguishable"},
		{"slower blocks", sweepResults(eight(1000e6)), exitCheckFailed, "slower (head/base 2.00×: 100.0 % worse, ["},
		{"faster blocks", sweepResults(eight(250e6)), exitOK, "faster (head/base 0.500×: 50.0 % better, ["},
		{"saturated", sweepResults(eight(500e6), false, true), exitCheckFailed,
			"withheld: saturated: head in 1 of 8 runs, base in 0 of 8; no latency verdict on a backlog  REGRESSION"},
		{"one run each", sweepResults([]float64{1000e6}), exitOK, "withheld: one round"},
	}
	for _, c := range cases {
		code, out, stderr := tandem(t, "compare", base, writeResults(t, c.head))
		if code != c.code || !strings.Contains(out, "qa-grid node 1 conn × 100/s") || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, output %q (%s); want exit %d and %q", c.name, code, out, stderr, c.code, c.want)
		}
	}
}
