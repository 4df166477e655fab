package runner

import (
	"math"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/verdict"
)

// familyLevel is one level of a run of targets a (the baseline), b and c
// over 10 paired rounds, judged as the run judges them, at α ÷ planned: b
// is 1.5× slower in every round; c is slower in 7 of 10 (0.90× to 1.30×),
// which α ÷ 2 leaves open.
func familyLevel(p stats.Policy, planned int) results.Scenario {
	const n = 10
	sc := results.Scenario{Name: "lat", Metric: "latency_p50_ns", Direction: "lower", Load: results.Load{Model: "closed", Concurrency: []int{1}}}
	for i, f := range []float64{1.1, 1.2, 1.3, 1.1, 0.97, 1.3, 1.1, 1.2, 0.95, 0.9} {
		a := 100e3 * (1 + 0.01*math.Sin(float64(i)))
		for _, t := range []struct {
			name string
			v    float64
		}{{"a", a}, {"b", 1.5 * a}, {"c", f * a}} {
			sc.Rounds = append(sc.Rounds, results.Round{Round: i + 1, Target: t.name, Concurrency: 1, Headline: t.v,
				Sample: results.Sample{Requests: 1000, OK: 1000}})
		}
	}
	alpha := p.Alpha / float64(planned)
	verdict.Level(p, &sc, 1, []string{"a", "b", "c"}, "a", nil, stats.Design{Paired: true, Alpha: alpha, Looks: stats.Final(stats.Schedule(alpha, n), n)})
	return sc
}

// judgeFamily records the run's family and lets Holm's step-down decide
// what each comparison's share left open, saying so on the progress; a
// run under the spread rule has no family (its verdicts take no α).
func TestJudgeFamily(t *testing.T) {
	for _, rule := range []stats.Rule{stats.RuleShift, stats.RuleSpread} {
		p := stats.DefaultPolicy()
		p.Rule = rule
		var progress strings.Builder
		r := &runner{s: &study.Study{Baseline: "a"}, o: Options{Progress: &progress}, res: results.New(), policy: p, family: 2}
		r.res.Scenarios = []results.Scenario{familyLevel(p, 2)}
		before := r.res.Scenarios[0].Comparisons[1]
		r.judgeFamily()
		c := r.res.Scenarios[0].Comparisons[1]
		if rule == stats.RuleSpread {
			if r.res.Family != nil || progress.Len() > 0 || c.Verdict != before.Verdict {
				t.Errorf("spread: family %+v, progress %q, c %s → %s; want no family and c as judged", r.res.Family, progress.String(), before.Verdict, c.Verdict)
			}
			continue
		}
		if before.Candidate != "c" || before.Verdict != stats.Inconclusive {
			t.Fatalf("c at α ÷ 2: %+v; the fixture wants it open", before)
		}
		want := results.Family{Method: results.FamilyHolm, Alpha: 0.05, Planned: 2, Size: 2, Upgraded: 1}
		if r.res.Family == nil || *r.res.Family != want {
			t.Errorf("family %+v; want %+v", r.res.Family, want)
		}
		if c.Verdict != stats.Slower || !(c.Estimate.Adjusted <= 0.05) || !strings.Contains(c.Reason, "decided by Holm's step-down") {
			t.Errorf("c after Holm: %+v; want slower, decided by Holm, adjusted p ≤ 0.05", c)
		}
		if !strings.Contains(progress.String(), "verdicts: Holm's step-down over the run's 2 comparisons decided 1 more\n") {
			t.Errorf("progress %q; want the line that says Holm decided one more", progress.String())
		}
	}
}
