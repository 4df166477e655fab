package verdict

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/runfixture"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// resultsOf builds a file of one scenario with the targets' rounds.
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

func lat(vs ...float64) *results.Results {
	return resultsOf(rounds(false, map[string][]float64{"a": vs}, "a"), nil)
}

func tput(vs ...float64) *results.Results {
	return resultsOf(rounds(true, map[string][]float64{"a": vs}, "a"), nil)
}

// each applies f to every round of the file's first scenario.
func each(r *results.Results, f func(*results.Round)) *results.Results {
	for i := range r.Scenarios[0].Rounds {
		f(&r.Scenarios[0].Rounds[i])
	}
	return r
}

// Each change carries both sides' range of rounds and the Mann–Whitney p
// of their rounds.
func TestCompareRangesAndP(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base := runfixture.Latency("s", at, 100, 101, 99, 100.5, 100.2)
	head := runfixture.Latency("s", at, 130, 131, 129, 130.5, 130.2)
	c, err := CompareRuns(base, head, Options{MaxRegression: 5})
	if err != nil || len(c.Changes) != 1 {
		t.Fatalf("%v, %d changes", err, len(c.Changes))
	}
	ch := c.Changes[0]
	if ch.BaseRange != [2]float64{99e3, 101e3} || ch.HeadRange != [2]float64{129e3, 131e3} || math.Abs(ch.P-2.0/252) > 1e-12 {
		t.Errorf("ranges %v, %v, p %v; want the rounds' best and worst and p = 2/252", ch.BaseRange, ch.HeadRange, ch.P)
	}
	same, _ := CompareRuns(base, base, Options{MaxRegression: 5})
	if p := same.Changes[0].P; p != 1 {
		t.Errorf("a run against itself: p %v; want 1", p)
	}
}

func TestCompare(t *testing.T) {
	const n = 12
	busy := each(tput(around(50_000, n, 0.01)...), func(rd *results.Round) { rd.GeneratorCPUUse = 0.97 })
	failing := each(lat(around(100, 4, 0)...), func(rd *results.Round) {
		rd.Failed, rd.Error, rd.OK, rd.Errors = true, "no successful request", 0, map[string]int64{"refused": 1000}
	})
	dropping := func(vs ...float64) *results.Results {
		return each(lat(vs...), func(rd *results.Round) { rd.Dropped, rd.OfferedRate, rd.AchievedRate = 300, 1000, 700 })
	}
	loose := stats.DefaultPolicy()
	loose.NoiseFloor = 0.60
	looseHead := lat(around(150, n, 0.01)...)
	looseHead.Policy = &loose
	aaHead := lat(around(105, n, 0.005)...)
	aaHead.Scenarios[0].Comparisons = []results.Comparison{{Base: "a", Candidate: "a2", Concurrency: 1, Verdict: stats.NoiseReference, NoiseFloor: 0.08}}
	otherCall := lat(around(50, n, 0.01)...)
	otherCall.Scenarios[0].Call = "other"
	otherEngine := each(lat(around(290, n, 0.01)...), func(rd *results.Round) { rd.Engine = "workers" })
	cases := []struct {
		name       string
		base, head *results.Results
		o          Options
		want       stats.Verdict
		regression bool
		change     float64 // ± 1 %
	}{
		{"identical", lat(around(100, n, 0.01)...), lat(around(100, n, 0.01)...), Options{}, stats.Indistinguishable, false, 0},
		{"latency grew 50 %", lat(around(100, n, 0.01)...), lat(around(150, n, 0.01)...), Options{MaxRegression: 5}, stats.Slower, true, 0.5},
		{"latency grew within the allowance", lat(around(100, n, 0.01)...), lat(around(150, n, 0.01)...), Options{MaxRegression: 60}, stats.Slower, false, 0.5},
		{"throughput fell 4 %", tput(around(100_000, n, 0.002)...), tput(around(96_000, n, 0.002)...), Options{MaxRegression: 5}, stats.Slower, false, 0.04},
		{"throughput fell 8 %", tput(around(100_000, n, 0.002)...), tput(around(92_000, n, 0.002)...), Options{MaxRegression: 5}, stats.Slower, true, 0.08},
		{"throughput rose", tput(around(100_000, n, 0.01)...), tput(around(150_000, n, 0.01)...), Options{}, stats.Faster, false, -0.5},
		{"a busy generator in the head", tput(around(100_000, n, 0.01)...), busy, Options{MaxRegression: 5}, stats.Withheld, false, 0},
		{"head failing every round", lat(around(100, 4, 0.01)...), failing, Options{MaxRegression: 5}, stats.Failing, true, 0},
		// the head's own 60 % floor does not loosen the gate
		{"the head's noise floor", lat(around(100, n, 0.01)...), looseHead, Options{MaxRegression: 5}, stats.Slower, true, 0.5},
		{"the default noise floor", lat(around(100, n, 0.005)...), lat(around(105, n, 0.005)...), Options{}, stats.Slower, true, 0.05},
		{"the head's A/A floor", lat(around(100, n, 0.005)...), aaHead, Options{}, stats.Indistinguishable, false, 0},
		// one round has no spread: a gate that cannot tell is undecided, and fails by default
		{"one round each", lat(100), lat(300), Options{}, stats.Withheld, true, 0},
		{"one round each, passing", lat(100), lat(300), Options{OnInconclusive: InconclusivePasses}, stats.Withheld, false, 0},
		// three rounds a side cannot decide a 3× slowdown: inconclusive fails by default
		{"3× at three rounds", lat(100, 101, 99), lat(300, 303, 297), Options{}, stats.Inconclusive, true, 0},
		{"3× at three rounds, passing", lat(100, 101, 99), lat(300, 303, 297), Options{OnInconclusive: InconclusivePasses}, stats.Inconclusive, false, 0},
		{"the head could not keep up", lat(around(100, n, 0.01)...), dropping(around(90, n, 0.01)...), Options{}, stats.Withheld, true, 0},
		{"the base could not keep up", dropping(around(100, n, 0.01)...), lat(around(100, n, 0.01)...), Options{}, stats.Withheld, true, 0},
		{"the base failing every round", failing, lat(around(100, 4, 0.01)...), Options{}, stats.Withheld, true, 0},
		{"another call", lat(around(100, n, 0.01)...), otherCall, Options{}, stats.NotComparable, true, 0},
		{"another call, allowed", lat(around(100, n, 0.01)...), otherCall, Options{AllowChanged: true}, stats.NotComparable, false, 0},
		{"another engine", lat(around(100, n, 0.01)...), otherEngine, Options{}, stats.NotComparable, true, 0},
	}
	for _, c := range cases {
		cmp, err := CompareRuns(c.base, c.head, c.o)
		if err != nil || len(cmp.Changes) != 1 {
			t.Fatalf("%s: %+v, %v", c.name, cmp.Changes, err)
		}
		ch := cmp.Changes[0]
		if ch.Verdict != c.want || ch.Regression != c.regression || math.Abs(ch.Change-c.change) > 0.01 {
			t.Errorf("%s: %s (%s), regression %v, change %v; want %s, regression %v, change %v", c.name, ch.Verdict, ch.Reason, ch.Regression, ch.Change, c.want, c.regression, c.change)
		}
		if !ch.Verdict.Speed() && (strings.Contains(ch.Reason, "+Inf") || strings.Contains(ch.Reason, "e+")) {
			t.Errorf("%s: reason %q has an unreadable number", c.name, ch.Reason)
		}
	}
}

// Rows only one side has are listed: lost ones are regressions; an
// interrupted or empty head fails the gate.
func TestCompareMissingRows(t *testing.T) {
	two := resultsOf(rounds(false, map[string][]float64{"a": around(100, 8, 0.01), "b": around(100, 8, 0.01)}, "a", "b"), nil)
	one := resultsOf(rounds(false, map[string][]float64{"a": around(100, 8, 0.01)}, "a"), nil)
	cmp, err := CompareRuns(two, one, Options{})
	if err != nil || len(cmp.Changes) != 2 || cmp.Changes[1].Target != "b" || cmp.Changes[1].Verdict != Missing || !cmp.Changes[1].Regression {
		t.Errorf("target lost: %+v, %v", cmp.Changes, err)
	}
	cmp, _ = CompareRuns(one, two, Options{})
	if len(cmp.Changes) != 2 || cmp.Changes[1].Verdict != New || cmp.Changes[1].Regression {
		t.Errorf("target added: %+v", cmp.Changes)
	}
	none := results.New()
	none.Interrupted = true
	cmp, _ = CompareRuns(one, none, Options{})
	if len(cmp.Changes) != 1 || cmp.Changes[0].Verdict != Missing || !cmp.Changes[0].Regression || len(cmp.Failures) != 1 || cmp.Gate() == nil {
		t.Errorf("an empty interrupted head: %+v, failures %q", cmp.Changes, cmp.Failures)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), -0.01} {
		if _, err := CompareRuns(one, one, Options{MaxRegression: bad}); err == nil {
			t.Errorf("CompareRuns(max %v) = nil error", bad)
		}
	}
}

// Startup is compared: a target that fails to start is a regression, and
// slower ready times are judged.
func TestCompareStartup(t *testing.T) {
	withStarts := func(ready ...float64) *results.Results {
		r := lat(around(100, 8, 0.01)...)
		r.Targets = []results.Target{{Name: "a"}}
		for _, v := range ready {
			r.Targets[0].StartupRuns = append(r.Targets[0].StartupRuns, results.Startup{ReadyNs: int64(v)})
		}
		return r
	}
	startupRow := func(c Comparison) Change {
		for _, ch := range c.Changes {
			if ch.Kind == KindStartup {
				return ch
			}
		}
		t.Fatalf("no startup row in %+v", c.Changes)
		return Change{}
	}
	base := withStarts(around(1e9, 10, 0.01)...)
	slow := withStarts(around(10e9, 10, 0.01)...)
	cmp, _ := CompareRuns(base, slow, Options{MaxRegression: 5})
	if ch := startupRow(cmp); ch.Verdict != stats.Slower || !ch.Regression {
		t.Errorf("a 10× slower start: %+v", ch)
	}
	dead := withStarts(1e9)
	dead.Targets[0].Error = "exit status 1: cannot bind"
	cmp, _ = CompareRuns(base, dead, Options{})
	if ch := startupRow(cmp); ch.Verdict != stats.Failing || !ch.Regression || !cmp.Regressed() {
		t.Errorf("a head that fails to start: %+v", ch)
	}
}

// A search's knee is compared: a knee that fell beyond the search's
// resolution is a regression.
func TestCompareKnee(t *testing.T) {
	knee := func(sustained, saturated float64) *results.Results {
		r := results.New()
		r.Sweeps = []results.Sweep{{Scenario: "sat", Target: "a", Search: []results.SearchResult{{Connections: 4, Sustained: sustained, Saturated: saturated}}}}
		return r
	}
	for _, c := range []struct {
		base, head *results.Results
		want       stats.Verdict
		regression bool
	}{
		{knee(1585, 1700), knee(100, 120), stats.Slower, true},
		{knee(1585, 1700), knee(1600, 1690), stats.Indistinguishable, false},
		{knee(100, 120), knee(1585, 1700), stats.Faster, false},
	} {
		cmp, err := CompareRuns(c.base, c.head, Options{MaxRegression: 5})
		if err != nil || len(cmp.Changes) != 1 {
			t.Fatalf("%+v, %v", cmp.Changes, err)
		}
		if ch := cmp.Changes[0]; ch.Kind != KindKnee || ch.Verdict != c.want || ch.Regression != c.regression {
			t.Errorf("knee %v → %v: %+v; want %s, regression %v", c.base.Sweeps[0].Search, c.head.Sweeps[0].Search, ch, c.want, c.regression)
		}
	}
}

// Holm's step-down over the rows decides what Bonferroni left open.
func TestCompareFamily(t *testing.T) {
	sc := func(name string, vs []float64) results.Scenario {
		s := *rounds(false, map[string][]float64{"a": vs}, "a")
		s.Name = name
		s.Summary = []results.Summary{{Target: "a", Concurrency: 1}}
		return s
	}
	base, head := results.New(), results.New()
	for i := range 6 {
		name := string(rune('p' + i))
		base.Scenarios = append(base.Scenarios, sc(name, around(100, 8, 0.01)))
		head.Scenarios = append(head.Scenarios, sc(name, around(150, 8, 0.01)))
	}
	cmp, err := CompareRuns(base, head, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Family.Method != results.FamilyHolm || cmp.Family.Size != 6 {
		t.Errorf("family %+v; want Holm over 6 rows", cmp.Family)
	}
	for _, ch := range cmp.Changes {
		if ch.Verdict != stats.Slower || ch.Estimate == nil || !(ch.Estimate.Adjusted <= 0.05) {
			t.Errorf("%s: %s (%s); want slower with an adjusted p ≤ 0.05", ch.Scenario, ch.Verdict, ch.Reason)
		}
	}
}

// Holm's step-down decides a row that its Bonferroni share (α ÷ m) left
// inconclusive, and only at its own step: the same row among more rows
// stays open. Every row that reaches the shift rule is one family,
// whatever its kind: a startup row among six scenario rows is held at
// α ÷ 7, not at α ÷ 1. No speed verdict has an adjusted p above α.
func TestCompareFamilyHolm(t *testing.T) {
	sc := func(name string, vs ...float64) results.Scenario {
		s := *rounds(false, map[string][]float64{"a": vs}, "a")
		s.Name = name
		s.Summary = []results.Summary{{Target: "a", Concurrency: 1}}
		return s
	}
	starts := func(ready ...float64) []results.Target {
		tg := results.Target{Name: "a"}
		for _, v := range ready {
			tg.StartupRuns = append(tg.StartupRuns, results.Startup{ReadyNs: int64(v * 1e6)})
		}
		return []results.Target{tg}
	}
	// clear: 8 rounds a side wholly apart, p = 2/12,870; close: 5 rounds a
	// side with two of 25 pairs crossed, p = 8/252 = 0.0317 (decided at
	// α = 0.05, not at α ÷ 2)
	clearBase, clearHead := sc("clear", around(100, 8, 0.01)...), sc("clear", around(150, 8, 0.01)...)
	closeBase, closeHead := sc("close", 100, 101, 102, 103, 130), sc("close", 125, 128, 131, 140, 150)
	same := sc("same", around(100, 8, 0.01)...)
	run := func(scs ...results.Scenario) *results.Results {
		r := results.New()
		r.Scenarios = scs
		return r
	}
	nulls := func() []results.Scenario {
		var out []results.Scenario
		for i := range 6 {
			s := same
			s.Name = string(rune('p' + i))
			out = append(out, s)
		}
		return out
	}
	startupBase, startupHead := run(nulls()...), run(nulls()...)
	startupBase.Targets, startupHead.Targets = starts(100, 101, 102, 103, 130), starts(125, 128, 131, 140, 150)
	for _, c := range []struct {
		name       string
		base, head *results.Results
		row        string // the scenario of the row to check ("" the startup row)
		want       stats.Verdict
		size       int
		upgraded   int
	}{
		{"two rows: Holm decides the close one", run(clearBase, closeBase), run(clearHead, closeHead), "close", stats.Slower, 2, 1},
		{"three rows: the close one stays open at α ÷ 2", run(clearBase, closeBase, same), run(clearHead, closeHead, same), "close", stats.Inconclusive, 3, 0},
		{"a startup row among six scenario rows", startupBase, startupHead, "", stats.Inconclusive, 7, 0},
	} {
		cmp, err := CompareRuns(c.base, c.head, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if f := cmp.Family; f.Method != results.FamilyHolm || f.Alpha != 0.05 || f.Planned != c.size || f.Size != c.size || f.Upgraded != c.upgraded {
			t.Errorf("%s: family %+v; want Holm at 0.05 over %d rows, %d decided by it", c.name, f, c.size, c.upgraded)
		}
		for _, ch := range cmp.Changes {
			if ch.Estimate == nil {
				t.Errorf("%s: %s %s: no estimate", c.name, ch.Kind, ch.Scenario)
				continue
			}
			if ch.Verdict.Speed() && !(ch.Estimate.Adjusted <= 0.05) {
				t.Errorf("%s: %s %s is %s with an adjusted p of %v > α", c.name, ch.Kind, ch.Scenario, ch.Verdict, ch.Estimate.Adjusted)
			}
			if ch.Scenario != c.row {
				continue
			}
			byHolm := strings.Contains(ch.Reason, fmt.Sprintf("decided by Holm's step-down over the %d rows", c.size))
			if ch.Verdict != c.want || byHolm != (c.upgraded > 0) {
				t.Errorf("%s: %s %q: %s (%s); want %s", c.name, ch.Kind, ch.Scenario, ch.Verdict, ch.Reason, c.want)
			}
		}
	}
}

// Two runs are compared by the stricter of their policies.
func TestComparePolicy(t *testing.T) {
	loose, strict := stats.DefaultPolicy(), stats.DefaultPolicy()
	loose.NoiseFloor, loose.Alpha, loose.MaxErrorShareDiff = 0.6, 0.001, 0.5
	strict.NoiseFloor = 0.01
	b, h := results.New(), results.New()
	b.Policy, h.Policy = &strict, &loose
	p := ComparePolicy(b, h)
	if p.NoiseFloor != 0.01 || p.Alpha != stats.DefaultAlpha || p.MaxErrorShareDiff != 0.01 || p.Rule != stats.RuleShift {
		t.Errorf("ComparePolicy = %+v; want the stricter of each", p)
	}
	old := results.New() // a file from before rules were recorded
	old.Policy = &stats.Policy{NoiseFloor: 0.02, MaxErrorShareDiff: 0.01, MaxShortfall: 0.01, ClientBoundUse: 0.9, MinRounds: 2}
	if p := ComparePolicy(old, old); p.Rule != stats.RuleSpread {
		t.Errorf("two spread-rule files: rule %s; want spread", p.Rule)
	}
}

// Within gates one run on its own paired comparisons, as CompareRuns
// gates two.
func TestWithin(t *testing.T) {
	const n = 12
	run := func(b []float64, f func(*results.Round)) *results.Results {
		sc := rounds(false, map[string][]float64{"a": around(100e3, n, 0.01), "b": b}, "a", "b")
		if f != nil {
			for i := range sc.Rounds {
				if sc.Rounds[i].Target == "b" {
					f(&sc.Rounds[i])
				}
			}
		}
		Level(stats.DefaultPolicy(), sc, 1, []string{"a", "b"}, "a", nil, design(n))
		r := results.New()
		r.Scenarios = []results.Scenario{*sc}
		return r
	}
	for _, c := range []struct {
		name string
		r    *results.Results
		o    Options
		want stats.Verdict
		fail bool
	}{
		{"slower beyond the allowance", run(around(150e3, n, 0.01), nil), Options{MaxRegression: 5}, stats.Slower, true},
		{"slower within it", run(around(103e3, n, 0.002), nil), Options{MaxRegression: 5}, stats.Slower, false},
		{"the same", run(around(100e3, n, 0.01), nil), Options{}, stats.Indistinguishable, false},
		{"dropping", run(around(100e3, n, 0.01), func(rd *results.Round) { rd.Dropped, rd.OfferedRate, rd.AchievedRate = 10, 1000, 990 }), Options{}, stats.Withheld, true},
	} {
		cmp, err := Within(c.r, c.o)
		if err != nil || len(cmp.Changes) != 1 {
			t.Fatalf("%s: %+v, %v", c.name, cmp.Changes, err)
		}
		if ch := cmp.Changes[0]; ch.Verdict != c.want || cmp.Regressed() != c.fail || ch.Target != "b vs a" {
			t.Errorf("%s: %s (%s), fails %v; want %s, fails %v", c.name, ch.Verdict, ch.Reason, cmp.Regressed(), c.want, c.fail)
		}
	}
	if cmp, _ := Within(results.New(), Options{}); !cmp.Regressed() {
		t.Error("a run that compared nothing passed")
	}
}

// OnInconclusive is a flag's value: fail or pass, empty for fail, any
// other word refused and the value kept.
func TestOnInconclusiveFlag(t *testing.T) {
	for _, c := range []struct {
		in   string
		want OnInconclusive
		ok   bool
	}{{"fail", InconclusiveFails, true}, {"pass", InconclusivePasses, true}, {"", InconclusiveFails, true}, {"maybe", InconclusivePasses, false}} {
		o := InconclusivePasses
		err := o.Set(c.in)
		if (err == nil) != c.ok || o != c.want || o.String() != string(c.want) || o.Type() != "string" {
			t.Errorf("Set(%q): %q, %v; want %q, ok %v", c.in, o, err, c.want, c.ok)
		}
	}
}
