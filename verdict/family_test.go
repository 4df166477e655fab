package verdict

import (
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// familyRun is one level of a run whose candidates were judged during the
// run at α ÷ planned (Bonferroni over the plan's comparisons), over 10
// paired rounds: b is 1.5× slower in every round; c is slower in 7 of 10
// rounds (ratios 0.90 to 1.30), which α ÷ 2 leaves open; and, when
// withSame, d is a twin of a.
func familyRun(planned int, withSame bool) *results.Results {
	const n = 10
	a := around(100e3, n, 0.01)
	c := make([]float64, n)
	for i, f := range []float64{1.1, 1.2, 1.3, 1.1, 0.97, 1.3, 1.1, 1.2, 0.95, 0.9} {
		c[i] = a[i] * f
	}
	targets := map[string][]float64{"a": a, "b": around(150e3, n, 0.01), "c": c}
	order := []string{"a", "b", "c"}
	if withSame {
		targets["d"] = a
		order = append(order, "d")
	}
	p := stats.DefaultPolicy()
	alpha := p.Alpha / float64(planned)
	sc := rounds(false, targets, order...)
	Level(p, sc, 1, order, "a", nil, stats.Design{Paired: true, Alpha: alpha, Looks: stats.Final(stats.Schedule(alpha, n), n)})
	r := results.New()
	r.Policy = &p
	r.Scenarios = []results.Scenario{*sc}
	return r
}

// Family: Holm's step-down over a run's comparisons decides the one its
// Bonferroni share left open, says so in its reason, records every
// comparison's adjusted p and the family (method, α, planned, size, how
// many it decided); among more comparisons the same one stays open at its
// step. A comparison without an estimate (withheld) is no member.
func TestFamily(t *testing.T) {
	for _, tc := range []struct {
		name     string
		r        *results.Results
		planned  int
		want     stats.Verdict
		size     int
		upgraded int
	}{
		{"two comparisons", familyRun(2, false), 2, stats.Slower, 2, 1},
		{"three comparisons", familyRun(3, true), 3, stats.Inconclusive, 3, 0},
	} {
		if got := comparison(t, &tc.r.Scenarios[0], "c"); got.Verdict != stats.Inconclusive {
			t.Fatalf("%s: c during the run: %s (%s); the fixture wants it open at α ÷ %d", tc.name, got.Verdict, got.Reason, tc.planned)
		}
		// a withheld comparison (one round of e) is no member of the family
		sc := &tc.r.Scenarios[0]
		sc.Comparisons = append(sc.Comparisons, results.Comparison{Base: "a", Candidate: "e", Concurrency: 1, Verdict: stats.Withheld, Reason: "one round"})
		fam := Family(stats.DefaultPolicy(), tc.r, tc.planned)
		want := results.Family{Method: results.FamilyHolm, Alpha: 0.05, Planned: tc.planned, Size: tc.size, Upgraded: tc.upgraded}
		if fam != want {
			t.Errorf("%s: family %+v; want %+v", tc.name, fam, want)
		}
		c := comparison(t, sc, "c")
		if c.Verdict != tc.want || strings.Contains(c.Reason, "decided by Holm's step-down over the run's") != (tc.upgraded > 0) {
			t.Errorf("%s: c after Holm: %s (%s); want %s", tc.name, c.Verdict, c.Reason, tc.want)
		}
		if c.Verdict.Speed() && (c.Ratio <= 1 || c.Estimate.Alpha <= 0.05/float64(tc.planned)) {
			t.Errorf("%s: c decided by Holm: ratio %v, judged at %v; want a ratio above 1, judged above α ÷ %d", tc.name, c.Ratio, c.Estimate.Alpha, tc.planned)
		}
		for _, cmp := range sc.Comparisons {
			switch e := cmp.Estimate; {
			case e == nil:
			case !(e.Adjusted >= e.PSeq && e.Adjusted <= 1):
				t.Errorf("%s: %s: adjusted p %v, sequential p %v; want PSeq ≤ adjusted ≤ 1", tc.name, cmp.Candidate, e.Adjusted, e.PSeq)
			case cmp.Verdict.Speed() && e.Adjusted > 0.05:
				t.Errorf("%s: %s is %s with an adjusted p of %v > α", tc.name, cmp.Candidate, cmp.Verdict, e.Adjusted)
			}
		}
	}
}
