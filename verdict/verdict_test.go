package verdict

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// rounds makes a results scenario whose targets ran the given headlines
// (one round each) at level 1; higher says throughput.
func rounds(higher bool, targets map[string][]float64, order ...string) *results.Scenario {
	sc := &results.Scenario{Name: "s", Metric: "latency_p50_ns", Direction: "lower", Load: results.Load{Model: "closed"}}
	if higher {
		sc.Metric, sc.Direction = "units_per_s", "higher"
	}
	for _, name := range order {
		for i, h := range targets[name] {
			sc.Rounds = append(sc.Rounds, results.Round{Round: i + 1, Target: name, Concurrency: 1, Headline: h,
				Sample: results.Sample{Requests: 1000, OK: 1000}})
		}
	}
	return sc
}

func comparison(t *testing.T, sc *results.Scenario, candidate string) results.Comparison {
	t.Helper()
	for _, c := range sc.Comparisons {
		if c.Candidate == candidate {
			return c
		}
	}
	t.Fatalf("no comparison for %s in %+v", candidate, sc.Comparisons)
	return results.Comparison{}
}

// around is n values scattered about centre by up to rel of it, the same
// scatter every time (a fixed low-discrepancy sequence, not random).
func around(centre float64, n int, rel float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		u := math.Mod(float64(i)*0.6180339887498949, 1)*2 - 1 // in [-1, 1)
		out[i] = centre * (1 + rel*u)
	}
	return out
}

// design is the in-run design of one comparison at α over n rounds.
func design(n int) stats.Design {
	return stats.Design{Paired: true, Alpha: 0.05, Looks: stats.Final(stats.Schedule(0.05, n), n)}
}

// The A/A twin is the noise reference, never faster or slower; its
// distance raises the floor for the others, and a difference beyond it
// still gets a verdict.
func TestLevelAATwin(t *testing.T) {
	p := stats.DefaultPolicy()
	const n = 20
	cases := []struct {
		b    []float64
		want stats.Verdict
	}{
		{around(106e3, n, 0.005), stats.Indistinguishable},
		{around(125e3, n, 0.005), stats.Slower},
	}
	for _, c := range cases {
		sc := rounds(false, map[string][]float64{"a": around(100e3, n, 0.005), "a2": around(110e3, n, 0.005), "b": c.b}, "a", "a2", "b")
		Level(p, sc, 1, []string{"a", "a2", "b"}, "a", []string{"a", "a2"}, design(n))
		twin := comparison(t, sc, "a2")
		if twin.Verdict != stats.NoiseReference || twin.Ratio != 0 || !strings.Contains(twin.Reason, "10.0 % apart") {
			t.Errorf("A/A twin: %+v; want the noise reference, 10 %% apart, no ratio", twin)
		}
		got := comparison(t, sc, "b")
		if got.Verdict != c.want || math.Abs(got.NoiseFloor-0.10) > 1e-3 || !strings.Contains(got.Reason, "A/A pair a, a2") {
			t.Errorf("b at %v: %+v; want %s with the A/A floor 10 %%", c.b[0], got, c.want)
		}
	}
	// without the pair, b at 106 µs is slower (floor 2 %)
	sc := rounds(false, map[string][]float64{"a": around(100e3, n, 0.005), "a2": around(110e3, n, 0.005), "b": around(106e3, n, 0.005)}, "a", "a2", "b")
	Level(p, sc, 1, []string{"a", "a2", "b"}, "a", nil, design(n))
	if c := comparison(t, sc, "a2"); c.Verdict != stats.Slower {
		t.Errorf("a2 without aa: %+v; want slower", c)
	}
	if c := comparison(t, sc, "b"); c.Verdict != stats.Slower || c.NoiseFloor != p.NoiseFloor || c.Estimate == nil || math.Abs(c.Ratio-1.06) > 0.005 {
		t.Errorf("b without aa: %+v; want slower, about 1.06, at the 2 %% floor", c)
	}
}

// The cases the spread rule got wrong: one erratic round of either side
// hid any shift, and more rounds made it blinder.
func TestLevelErraticRounds(t *testing.T) {
	p := stats.DefaultPolicy()
	const n = 15
	// b is 3× slower every round, and stalls 40 ms in most of them
	b := around(462e3, n, 0.02)
	for i := range b {
		if i%3 != 0 {
			b[i] = 42.6e6 + float64(i)*1e4
		}
	}
	sc := rounds(false, map[string][]float64{"a": around(158e3, n, 0.1), "b": b}, "a", "b")
	Level(p, sc, 1, []string{"a", "b"}, "a", nil, design(n))
	c := comparison(t, sc, "b")
	if c.Verdict != stats.Slower || !slices.Contains(c.Unstable, "b") {
		t.Errorf("a 270× stall in most rounds: %+v; want slower, b unstable", c)
	}
	// a stall a third of the time in throughput: never indistinguishable
	stall := around(4316, n, 0.01)
	for i := range stall {
		if i%3 == 1 {
			stall[i] = 2311
		}
	}
	sc = rounds(true, map[string][]float64{"a": around(4316, n, 0.01), "b": stall}, "a", "b")
	Level(p, sc, 1, []string{"a", "b"}, "a", nil, design(n))
	if c := comparison(t, sc, "b"); c.Verdict == stats.Indistinguishable || c.Verdict == stats.Faster {
		t.Errorf("a stall a third of the time: %+v; want slower or inconclusive", c)
	}
	// three rounds cannot decide: inconclusive, never a percentage
	sc = rounds(false, map[string][]float64{"a": {154e3, 158e3, 191e3}, "b": {462e3, 42.6e6, 43.7e6}}, "a", "b")
	Level(p, sc, 1, []string{"a", "b"}, "a", nil, stats.Design{Paired: true, Alpha: 0.05})
	if c := comparison(t, sc, "b"); c.Verdict != stats.Inconclusive || c.Ratio != 0 || strings.Contains(c.Reason, "slower") {
		t.Errorf("three rounds: %+v; want inconclusive without a percentage", c)
	}
}

// Open lists what more rounds could decide.
func TestOpen(t *testing.T) {
	p := stats.DefaultPolicy()
	sc := rounds(false, map[string][]float64{"a": around(100e3, 12, 0.01), "b": around(150e3, 12, 0.01), "c": around(101e3, 12, 0.05)}, "a", "b", "c")
	open := Open(p, sc, 1, []string{"a", "b", "c"}, "a", nil, design(12))
	if len(open) != 1 || open[0].Candidate != "c" {
		t.Errorf("Open = %+v; want c alone (b is clearly slower)", open)
	}
	if len(sc.Comparisons) != 0 {
		t.Errorf("Open changed the scenario: %+v", sc.Comparisons)
	}
}
