package verdict

import (
	"fmt"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// member is one comparison of a run's family: its sequential p-value,
// its verdict, and how to judge it again at another level.
type member struct {
	pseq    float64
	verdict stats.Verdict
	est     *stats.Estimate
	rejudge func(alpha float64) (stats.Judgement, func(stats.Judgement))
}

// Family holds the false-alarm rate of a run's comparisons together:
// each was judged during the run at p.Alpha/planned (Bonferroni over the
// comparisons the plan had); Holm's step-down over those that reached the
// speed rule then decides the ones that stayed inconclusive and whose
// adjusted sequential p-value is at most α, judged again at their Holm
// level on the same rounds and looks. It records each comparison's
// adjusted p-value and returns the family.
func Family(p stats.Policy, r *results.Results, planned int) results.Family {
	var ms []member
	for si := range r.Scenarios {
		sc := &r.Scenarios[si]
		m := Metric(sc)
		for ci := range sc.Comparisons {
			c := &sc.Comparisons[ci]
			if c.Estimate == nil {
				continue
			}
			e := *c.Estimate
			ms = append(ms, member{pseq: e.PSeq, verdict: c.Verdict, est: c.Estimate,
				rejudge: func(alpha float64) (stats.Judgement, func(stats.Judgement)) {
					j := p.Judge(sc.Side(c.Base, c.Concurrency), sc.Side(c.Candidate, c.Concurrency), m, e.Floor,
						stats.Design{Paired: e.Paired, Alpha: alpha, Looks: e.Looks})
					return j, func(j stats.Judgement) { setJudgement(c, j) }
				}})
		}
	}
	for i := range r.Targets {
		t := &r.Targets[i]
		c := t.StartupVerdict
		if c == nil || c.Estimate == nil {
			continue
		}
		bt := targetOf(r, c.Base)
		if bt == nil {
			continue
		}
		ms = append(ms, member{pseq: c.Estimate.PSeq, verdict: c.Verdict, est: c.Estimate,
			rejudge: func(alpha float64) (stats.Judgement, func(stats.Judgement)) {
				return judgeStartup(p, StartupSide(bt), StartupSide(t), alpha), func(j stats.Judgement) { setJudgement(c, j) }
			}})
	}
	for si := range r.Sweeps {
		sw := &r.Sweeps[si]
		for vi := range sw.Verdicts {
			v := &sw.Verdicts[vi]
			if v.Estimate == nil {
				continue
			}
			var bsw *results.Sweep
			for bi := range r.Sweeps {
				if r.Sweeps[bi].Scenario == sw.Scenario && r.Sweeps[bi].Target == v.Base {
					bsw = &r.Sweeps[bi]
				}
			}
			if bsw == nil {
				continue
			}
			k := CellKey{v.Connections, v.Rate}
			ms = append(ms, member{pseq: v.Estimate.PSeq, verdict: v.Verdict, est: v.Estimate,
				rejudge: func(alpha float64) (stats.Judgement, func(stats.Judgement)) {
					_, br := Cells(bsw)
					_, cr := Cells(sw)
					j := JudgeCell(p, CellSide(v.Base, br[k]), CellSide(sw.Target, cr[k]), br[k], cr[k], stats.Design{Paired: true, Alpha: alpha})
					return j, func(j stats.Judgement) {
						v.Verdict, v.Reason, v.Estimate, v.Ratio = j.Verdict, j.Reason, j.Estimate, 0
						if j.Verdict.Speed() {
							v.Ratio = j.Ratio
						}
					}
				}})
		}
	}
	ps := make([]float64, len(ms))
	for i, m := range ms {
		ps[i] = m.pseq
	}
	fam := results.Family{Method: results.FamilyHolm, Alpha: p.Alpha, Planned: planned, Size: len(ms)}
	adjusted := stats.Holm(ps)
	for i, m := range ms {
		m.est.Adjusted = adjusted[i]
		if m.verdict != stats.Inconclusive || adjusted[i] > p.Alpha {
			continue
		}
		j, set := m.rejudge(stats.HolmLevel(ps, ps[i], p.Alpha))
		if j.Verdict.Speed() {
			j.Estimate.Adjusted = adjusted[i]
			j.Reason += fmt.Sprintf("; decided by Holm's step-down over the run's %d comparisons (adjusted p = %s)", len(ms), stats.Sig(adjusted[i]))
			set(j)
			fam.Upgraded++
		}
	}
	return fam
}
