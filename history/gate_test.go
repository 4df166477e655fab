package history

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/runfixture"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/verdict"
)

// runOf is a small run of study "gate" made at day d of 2026 whose rounds
// have the given p50s (µs); change edits it.
func runOf(t *testing.T, d int, p50s []float64, change func(*results.Results)) []byte {
	t.Helper()
	r := runfixture.Latency("gate", time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC), p50s...)
	if change != nil {
		change(r)
	}
	return runfixture.JSON(t, r)
}

var steady = []float64{100, 101, 99, 100.5, 100.2}

func TestGate(t *testing.T) {
	opts := GateOptions{BaseBranch: "main", Baseline: "last", MaxRegression: 5, Alpha: 0.05}
	for _, c := range []struct {
		name   string
		head   []byte
		opts   func(*GateOptions)
		state  stats.Verdict
		failed bool
		reason string
	}{
		{"30 % slower", runOf(t, 10, []float64{130, 131, 129, 130.5, 130.2}, nil), nil, stats.Slower, true, "lat a c=1: slower"},
		{"within the limit", runOf(t, 10, []float64{103, 104, 102, 103.5, 103.2}, nil), nil, stats.Slower, false, ""},
		{"faster", runOf(t, 10, []float64{70, 71, 69, 70.5, 70.2}, nil), nil, stats.Faster, false, ""},
		{"3× slower on 3 rounds", runOf(t, 10, []float64{300, 310, 290}, nil), nil, stats.Slower, true, "slower"},
		{"rounds all over: undecided fails", runOf(t, 10, []float64{80, 200, 90, 150, 300}, nil), nil, stats.Inconclusive, true, "inconclusive"},
		{"rounds all over, --on-inconclusive pass", runOf(t, 10, []float64{80, 200, 90, 150, 300}, nil), func(o *GateOptions) {
			o.OnInconclusive = verdict.InconclusivePasses
		}, stats.Inconclusive, false, ""},
		{"another load", runOf(t, 10, []float64{130, 131, 129, 130.5, 130.2}, func(r *results.Results) {
			r.Scenarios[0].Load.Concurrency = []int{8}
		}), nil, stats.NotComparable, true, "changed between the runs"},
		{"another load, allowed", runOf(t, 10, []float64{130, 131, 129, 130.5, 130.2}, func(r *results.Results) {
			r.Scenarios[0].Load.Concurrency = []int{8}
		}), func(o *GateOptions) { o.AllowChanged = true }, stats.NotComparable, false, ""},
		{"a limit of 50 %", runOf(t, 10, []float64{130, 131, 129, 130.5, 130.2}, nil), func(o *GateOptions) { o.MaxRegression = 50 }, stats.Slower, false, ""},
		{"38 % of arrivals dropped", runOf(t, 10, steady, func(r *results.Results) {
			for i := range r.Scenarios[0].Rounds {
				rd := &r.Scenarios[0].Rounds[i]
				rd.Dropped, rd.OfferedRate, rd.AchievedRate = 380, 1000, 620
			}
		}), nil, stats.Withheld, true, "could not keep up"},
		{"newly failing", runOf(t, 10, steady, func(r *results.Results) {
			r.Scenarios[0].Comparisons = []results.Comparison{{Base: "b", Candidate: "a", Concurrency: 1, Verdict: stats.Failing, Reason: "failing: 40 % of requests failed"}}
		}), nil, stats.Indistinguishable, true, "is failing, not before"},
		{"a new compat difference", runOf(t, 10, steady, func(r *results.Results) {
			r.Compat = &results.Compat{Reference: "b", Cases: []results.Case{{Call: "get", Differences: []results.Difference{{Target: "a", Path: "height", Kind: "value"}}}}}
		}), nil, stats.Indistinguishable, true, "a new compat difference: get on a at height"},
		{"an empty interrupted run", runOf(t, 10, steady, func(r *results.Results) {
			r.Scenarios, r.Interrupted = nil, true
		}), nil, stats.Missing, true, "interrupted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for name, open := range stores(t) {
				t.Run(name, func(t *testing.T) {
					ctx := context.Background()
					s := open(t)
					if _, _, err := s.Add(ctx, runOf(t, 1, steady, nil), Meta{Branch: "main"}); err != nil {
						t.Fatal(err)
					}
					if _, _, err := s.Add(ctx, runOf(t, 2, []float64{500, 500, 500, 500, 500}, nil), Meta{Branch: "feature"}); err != nil {
						t.Fatal(err) // another branch's run is no baseline
					}
					o := opts
					if c.opts != nil {
						c.opts(&o)
					}
					g, err := s.GateRun(ctx, c.head, o)
					if err != nil {
						t.Fatal(err)
					}
					if len(g.Changes) == 0 || g.Changes[0].Verdict != c.state || g.Failed != c.failed || len(g.BaseRuns) != 1 {
						t.Fatalf("gate: rows %+v, failed %v (%v), base %v; want %s, failed %v", g.Changes, g.Failed, g.Reasons, g.BaseRuns, c.state, c.failed)
					}
					if c.reason != "" && !strings.Contains(strings.Join(g.Reasons, "\n"), c.reason) {
						t.Errorf("reasons %v; want %q", g.Reasons, c.reason)
					}
				})
			}
		})
	}
}

func TestGateBaselines(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			head := runOf(t, 10, []float64{130, 131, 129, 130.5, 130.2}, nil)
			o := GateOptions{BaseBranch: "main", Baseline: "last", MaxRegression: 5, Alpha: 0.05}
			// no baseline: a warning, or a failure when asked
			g, err := s.GateRun(ctx, head, o)
			if err != nil || g.Failed || len(g.Warnings) != 1 || !strings.Contains(g.Warnings[0], "no baseline") {
				t.Errorf("no baseline: %v, failed %v, warnings %v; want a warning and a pass", err, g.Failed, g.Warnings)
			}
			o.FailOnMissingBaseline = true
			if g, _ := s.GateRun(ctx, head, o); !g.Failed {
				t.Error("no baseline with --on-missing-baseline fail: passed")
			}
			o.FailOnMissingBaseline = false
			// the head itself, stored, is not its own baseline
			s.Add(ctx, head, Meta{Branch: "main"})
			if g, _ := s.GateRun(ctx, head, o); len(g.BaseRuns) != 0 {
				t.Errorf("the head was its own baseline: %v", g.BaseRuns)
			}
			// three slow runs then one fast: last sees the fast one, median:4 the slow
			var ids []string
			for d, v := range []float64{130, 130, 130, 100} {
				r, _, err := s.Add(ctx, runOf(t, 1+d, []float64{v, v + 1, v - 1, v + 0.5, v + 0.2}, nil), Meta{Branch: "main"})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, r.ID)
			}
			if g, _ := s.GateRun(ctx, head, o); g.Changes[0].Verdict != stats.Slower || !g.Failed || g.BaseRuns[0] != ids[3] {
				t.Errorf("last: %+v from %v; want slower against the newest", g.Changes[0], g.BaseRuns)
			}
			o.Baseline = "median:4"
			// three runs like the head and one faster, pooled: not slower (the
			// pooled rounds are bimodal, so the pair is undecided)
			if g, _ := s.GateRun(ctx, head, o); g.Changes[0].Verdict == stats.Slower || len(g.BaseRuns) != 4 || g.Changes[0].Estimate.N != 5 {
				t.Errorf("median:4: %+v from %d runs; want not slower against the rounds of 4 pooled", g.Changes[0], len(g.BaseRuns))
			}
			o.Baseline = "pinned"
			if g, _ := s.GateRun(ctx, head, o); len(g.BaseRuns) != 0 {
				t.Errorf("pinned with none pinned: %v", g.BaseRuns)
			}
			s.Pin(ctx, ids[0], true)
			if g, _ := s.GateRun(ctx, head, o); !slices.Equal(g.BaseRuns, ids[:1]) || g.Changes[0].Verdict != stats.Indistinguishable {
				t.Errorf("pinned: %v, %+v; want the pinned slow run, indistinguishable", g.BaseRuns, g.Changes[0])
			}
			for _, bad := range []string{"median:0", "first", "median:x"} {
				o.Baseline = bad
				if _, err := s.GateRun(ctx, head, o); err == nil {
					t.Errorf("--baseline %s accepted", bad)
				}
			}
		})
	}
}

func TestGateFailsOnErrorShare(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir()+"/history.db")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Add(ctx, runOf(t, 1, steady, nil), Meta{Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	head := runOf(t, 10, steady, func(r *results.Results) {
		for i := range r.Scenarios[0].Rounds {
			r.Scenarios[0].Rounds[i].OK = 1 // 90 % of requests failed, was 0 %
		}
	})
	g, err := s.GateRun(ctx, head, GateOptions{BaseBranch: "main", Baseline: "last", MaxRegression: 5, Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if !g.Failed {
		t.Fatalf("error share 0 -> 90 %%: gate passed; rows %+v", g.Changes)
	}
}

// The gate fails on what compare fails on that is not a slowdown: a
// target the baseline measured and the head lost, and a baseline that
// failed every request (it cannot vouch for the head, however fast).
func TestGateLostTargetAndFailingBaseline(t *testing.T) {
	withB := func(r *results.Results) { // target b beside a, the same rounds
		sc := &r.Scenarios[0]
		for _, rd := range slices.Clone(sc.Rounds) {
			rd.Target = "b"
			sc.Rounds = append(sc.Rounds, rd)
		}
		b := sc.Summary[0]
		b.Target = "b"
		sc.Summary = append(sc.Summary, b)
	}
	failing := func(r *results.Results) { // every request of every round failed
		for i := range r.Scenarios[0].Rounds {
			rd := &r.Scenarios[0].Rounds[i]
			rd.OK, rd.Failed, rd.Error, rd.Headline, rd.Errors = 0, true, "no successful request", 0, map[string]int64{"refused": rd.Requests}
		}
	}
	for _, c := range []struct {
		name       string
		base, head []byte
		target     string
		state      stats.Verdict
		reason     string
	}{
		{"a target lost", runOf(t, 1, steady, withB), runOf(t, 10, steady, nil), "b", verdict.Missing, "lat b c=1: missing: measured in the base, not in the head"},
		{"a baseline failing every request", runOf(t, 1, steady, failing), runOf(t, 10, steady, nil), "a", stats.Withheld, "the base run cannot vouch for the head"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for name, open := range stores(t) {
				t.Run(name, func(t *testing.T) {
					ctx := context.Background()
					s := open(t)
					if _, _, err := s.Add(ctx, c.base, Meta{Branch: "main"}); err != nil {
						t.Fatal(err)
					}
					for _, on := range []verdict.OnInconclusive{verdict.InconclusiveFails, verdict.InconclusivePasses} {
						g, err := s.GateRun(ctx, c.head, GateOptions{BaseBranch: "main", Baseline: "last", MaxRegression: 5, Alpha: 0.05, OnInconclusive: on})
						if err != nil {
							t.Fatal(err)
						}
						i := slices.IndexFunc(g.Changes, func(ch verdict.Change) bool { return ch.Target == c.target })
						if i < 0 || g.Changes[i].Verdict != c.state || !g.Changes[i].Regression || !g.Failed || len(g.BaseRuns) != 1 {
							t.Fatalf("--on-inconclusive %s: rows %+v, failed %v (%v), base %v; want %s on %s failing the gate", on, g.Changes, g.Failed, g.Reasons, g.BaseRuns, c.state, c.target)
						}
						if !strings.Contains(strings.Join(g.Reasons, "\n"), c.reason) {
							t.Errorf("--on-inconclusive %s: reasons %v; want %q", on, g.Reasons, c.reason)
						}
					}
				})
			}
		})
	}
}
