package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/runner/internal/runtest"
	"github.com/tandem-bench/tandem/stats"
)

// spreadStudy is a study under rule: spread with one calibrated latency
// scenario of two targets.
const spreadStudy = `version: 1
name: spread
defaults: {rule: spread, warmup: 1s}
targets:
  - {name: a, endpoints: {http: "http://127.0.0.1:1/"}}
  - {name: b, endpoints: {http: "http://127.0.0.1:2/"}}
calls:
  ping: {http: {path: /}}
scenarios:
  - {name: lat, call: ping, load: {concurrency: 1}}
`

// A study under rule: spread plans the layered broker study's design: 3
// fixed rounds of 5 s on each target, no adaptive looks, no budget beyond
// the estimate, and no family of comparisons to hold at α.
func TestPlanSpreadRule(t *testing.T) {
	p := NewPlan(runtest.Parse(t, spreadStudy), Options{})
	if len(p.Steps) != 2 || p.Rule != stats.RuleSpread {
		t.Fatalf("plan (rule %s):\n%s", p.Rule, p)
	}
	st := p.Steps[1]
	// 2 warm-ups of 1 s, 2 calibrations of 3 × 5 s, 3 rounds × 2 targets × 5 s
	want := 2*time.Second + 30*time.Second + 30*time.Second
	if st.Name != "lat" || st.Detail != "1 level × 2 targets × 3 rounds of ~5s, calibrated" || st.Estimate != want || st.Budget != want || st.Units != 6 {
		t.Errorf("the scenario's step %+v; want 3 fixed rounds of ~5s, %v, no budget beyond it", st, want)
	}
	if txt := p.String(); strings.Contains(txt, "adaptive") || strings.Contains(txt, "verdicts:") || strings.Contains(txt, "Holm") {
		t.Errorf("the plan under rule spread speaks of adaptive rounds or a family:\n%s", txt)
	}
}

// Under rule: spread a run's verdicts are the spread rule's (bests against
// the larger spread, no interval, no estimate) and no family is recorded.
func TestSpreadRuleVerdicts(t *testing.T) {
	s := runtest.Parse(t, spreadStudy)
	r, sc, out, ls := summarizeRuns(0, 1000, 4000)
	r.s.Defaults = s.Defaults
	r.policy = s.Defaults.Policy()
	r.family = Comparisons(s, Options{})
	r.summarize(sc, out, ls, 8, stats.Design{Paired: true, Alpha: r.policy.Alpha / float64(r.family)})
	r.res.Scenarios = append(r.res.Scenarios, *out)
	r.judgeFamily()
	c := r.res.Scenarios[0].Comparisons[0]
	if c.Verdict != stats.Slower || c.Estimate != nil || c.Ratio != 4 || !strings.Contains(c.Reason, "the bests differ by") {
		t.Errorf("4× slower under rule spread: %+v; want slower by the bests, ratio 4, no estimate", c)
	}
	if r.res.Family != nil {
		t.Errorf("a family under rule spread: %+v", r.res.Family)
	}
}
