package verdict

import (
	"math"
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

// The A/A twin is the noise reference, never faster or slower; its
// distance raises the floor for the others, and a difference beyond it
// still gets a verdict.
func TestLevelAATwin(t *testing.T) {
	p := stats.DefaultPolicy()
	cases := []struct {
		b    []float64
		want string
	}{
		{[]float64{106e3, 106e3, 106e3}, stats.Indistinguishable},
		{[]float64{115e3, 115e3, 115e3}, stats.Slower},
	}
	for _, c := range cases {
		sc := rounds(false, map[string][]float64{"a": {100e3, 100e3, 100e3}, "a2": {110e3, 110e3, 110e3}, "b": c.b}, "a", "a2", "b")
		Level(p, sc, 1, []string{"a", "a2", "b"}, "a", []string{"a", "a2"})
		twin := comparison(t, sc, "a2")
		if twin.Verdict != stats.NoiseReference || twin.Ratio != 0 || !strings.Contains(twin.Reason, "10.0 % apart") {
			t.Errorf("A/A twin: %+v; want the noise reference, 10 %% apart, no ratio", twin)
		}
		got := comparison(t, sc, "b")
		if got.Verdict != c.want || math.Abs(got.NoiseFloor-0.10) > 1e-9 || !strings.Contains(got.Reason, "A/A pair a, a2") {
			t.Errorf("b at %v: %+v; want %s with the A/A floor 10 %%", c.b[0], got, c.want)
		}
	}
	// without the pair, b at 106 µs is slower (floor 2 %)
	sc := rounds(false, map[string][]float64{"a": {100e3, 100e3}, "a2": {110e3, 110e3}, "b": {106e3, 106e3}}, "a", "a2", "b")
	Level(p, sc, 1, []string{"a", "a2", "b"}, "a", nil)
	if c := comparison(t, sc, "a2"); c.Verdict != stats.Slower {
		t.Errorf("a2 without aa: %+v; want slower", c)
	}
	if c := comparison(t, sc, "b"); c.Verdict != stats.Slower || c.NoiseFloor != p.NoiseFloor {
		t.Errorf("b without aa: %+v; want slower at the 2 %% floor", c)
	}
}

// results builds a file of one scenario with target a's rounds.
func resultsOf(sc *results.Scenario, policy *stats.Policy) *results.Results {
	r := results.New()
	r.Policy = policy
	for _, name := range []string{"a", "b"} {
		if sc.Side(name, 1).Rounds > 0 {
			sc.Summary = append(sc.Summary, results.Summary{Target: name, Concurrency: 1})
		}
	}
	r.Scenarios = []results.Scenario{*sc}
	return r
}

func TestCompare(t *testing.T) {
	lat := func(vs ...float64) *results.Results {
		return resultsOf(rounds(false, map[string][]float64{"a": vs}, "a"), nil)
	}
	tput := func(vs ...float64) *results.Results {
		return resultsOf(rounds(true, map[string][]float64{"a": vs}, "a"), nil)
	}
	busy := tput(50_000, 50_100, 49_900)
	for i := range busy.Scenarios[0].Rounds {
		busy.Scenarios[0].Rounds[i].GeneratorCPUUse = 0.97
	}
	failing := lat(0, 0)
	for i := range failing.Scenarios[0].Rounds {
		rd := &failing.Scenarios[0].Rounds[i]
		rd.Failed, rd.Error, rd.OK, rd.Errors = true, "no successful request", 0, map[string]int64{"refused": 1000}
	}
	dropping := func(vs ...float64) *results.Results {
		r := lat(vs...)
		for i := range r.Scenarios[0].Rounds {
			rd := &r.Scenarios[0].Rounds[i]
			rd.Dropped, rd.OfferedRate, rd.AchievedRate = 300, 1000, 700
		}
		return r
	}
	loose := stats.DefaultPolicy()
	loose.NoiseFloor = 0.10
	looseHead := lat(105, 105, 105)
	looseHead.Policy = &loose
	aaHead := lat(105, 105, 105)
	aaHead.Scenarios[0].Comparisons = []results.Comparison{{Base: "a", Candidate: "a2", Concurrency: 1, Verdict: stats.NoiseReference, NoiseFloor: 0.08}}
	cases := []struct {
		name       string
		base, head *results.Results
		max        float64
		want       string
		regression bool
		change     float64
	}{
		{"identical", lat(100, 102, 101), lat(100, 102, 101), 0, stats.Indistinguishable, false, 0},
		{"latency grew 50 %", lat(100, 101, 100), lat(150, 151, 150), 0.05, stats.Slower, true, 0.5},
		{"latency grew within the allowance", lat(100, 101, 100), lat(150, 151, 150), 0.60, stats.Slower, false, 0.5},
		{"throughput fell 4.9 %", tput(100_000, 100_000), tput(95_100, 95_100), 0.05, stats.Slower, false, 0.049},
		{"throughput fell 6 %", tput(100_000, 100_000), tput(94_000, 94_000), 0.05, stats.Slower, true, 0.06},
		{"throughput rose", tput(100_000, 100_000), tput(150_000, 150_000), 0, stats.Faster, false, -0.5},
		{"a busy generator in the head", tput(100_000, 100_100, 99_900), busy, 0.05, stats.Withheld, false, 0},
		{"head failing every round", lat(100, 101), failing, 0.05, stats.Failing, true, 0},
		{"the head's noise floor", lat(100, 100, 100), looseHead, 0, stats.Indistinguishable, false, 0},
		{"the default noise floor", lat(100, 100, 100), lat(105, 105, 105), 0, stats.Slower, true, 0.05},
		{"the head's A/A floor", lat(100, 100, 100), aaHead, 0, stats.Indistinguishable, false, 0},
		{"one round each", lat(100), lat(300), 0, stats.Withheld, false, 0},
		{"the head could not keep up", lat(100, 100), dropping(90, 90), 0, stats.Withheld, true, 0},
		{"the base could not keep up", dropping(100, 100), lat(100, 100), 0, stats.Withheld, false, 0},
	}
	for _, c := range cases {
		changes, _, err := Compare(c.base, c.head, c.max)
		if err != nil || len(changes) != 1 {
			t.Fatalf("%s: %+v, %v", c.name, changes, err)
		}
		ch := changes[0]
		if ch.Verdict != c.want || ch.Regression != c.regression || math.Abs(ch.Change-c.change) > 1e-9 {
			t.Errorf("%s: %+v; want %s, regression %v, change %v", c.name, ch, c.want, c.regression, c.change)
		}
	}
}

// Rows only one side has are listed: lost ones are regressions.
func TestCompareMissingRows(t *testing.T) {
	two := resultsOf(rounds(false, map[string][]float64{"a": {100, 100}, "b": {100, 100}}, "a", "b"), nil)
	one := resultsOf(rounds(false, map[string][]float64{"a": {100, 100}}, "a"), nil)
	changes, _, err := Compare(two, one, 0)
	if err != nil || len(changes) != 2 || changes[1].Target != "b" || changes[1].Verdict != Missing || !changes[1].Regression {
		t.Errorf("target lost: %+v, %v", changes, err)
	}
	changes, _, _ = Compare(one, two, 0)
	if len(changes) != 2 || changes[1].Verdict != New || changes[1].Regression {
		t.Errorf("target added: %+v", changes)
	}
	none := results.New()
	changes, _, _ = Compare(one, none, 0)
	if len(changes) != 1 || changes[0].Verdict != Missing || !changes[0].Regression {
		t.Errorf("scenario lost: %+v", changes)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), -0.01} {
		if _, _, err := Compare(one, one, bad); err == nil {
			t.Errorf("Compare(max %v) = nil error", bad)
		}
	}
}

// CompareRuns tallies what Compare found and gates on the regressions; a
// withheld pair is a warning, never a pass.
func TestCompareRuns(t *testing.T) {
	lat := func(vs ...float64) *results.Results {
		return resultsOf(rounds(false, map[string][]float64{"a": vs}, "a"), nil)
	}
	two := resultsOf(rounds(false, map[string][]float64{"a": {100, 100}, "b": {100, 100}}, "a", "b"), nil)
	for _, c := range []struct {
		name                  string
		base, head            *results.Results
		max                   float64
		regressions, withheld int
		gate, warning         string // in the gate's error and the last warning; "" for none
	}{
		{"identical", lat(100, 102, 101), lat(100, 102, 101), 0, 0, 0, "", ""},
		{"slower", lat(100, 101, 100), lat(150, 151, 150), 5, 1, 0, "1 regressions (beyond 5 %, failing, or missing)", ""},
		{"slower within the allowance", lat(100, 101, 100), lat(150, 151, 150), 60, 0, 0, "", ""},
		{"one round each", lat(100), lat(300), 0, 0, 1, "", "1 of 1 pairs could not be judged (withheld)"},
		{"a target lost", two, lat(100, 100), 0, 1, 0, "1 regressions", ""},
	} {
		got, err := CompareRuns(c.base, c.head, c.max)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Regressions != c.regressions || got.Withheld != c.withheld || got.Regressed() != (c.regressions > 0) || got.MaxRegression != c.max {
			t.Errorf("%s: %d regressions, %d withheld, max %v; want %d, %d, %v", c.name, got.Regressions, got.Withheld, got.MaxRegression, c.regressions, c.withheld, c.max)
		}
		if gate := got.Gate(); c.gate == "" && gate != nil || c.gate != "" && (gate == nil || !strings.Contains(gate.Error(), c.gate)) {
			t.Errorf("%s: gate %v; want %q", c.name, gate, c.gate)
		}
		if c.warning != "" && (len(got.Warnings) == 0 || !strings.Contains(got.Warnings[len(got.Warnings)-1], c.warning)) {
			t.Errorf("%s: warnings %q; want %q", c.name, got.Warnings, c.warning)
		}
		if got.Policy != stats.DefaultPolicy() {
			t.Errorf("%s: policy %+v; want the default", c.name, got.Policy)
		}
	}
	if _, err := CompareRuns(lat(100), lat(100), -1); err == nil {
		t.Error("CompareRuns(max -1 %) = nil error")
	}
}
