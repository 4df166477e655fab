// Package verdict applies the verdict policy (stats.Policy) to results:
// the comparisons of one run's targets at each scenario and level, and the
// changes between two runs that tandem compare gates on. Both judge by the
// same policy, recorded in results.json, so a run and a comparison of runs
// cannot disagree about what counts as faster, failing or noise.
package verdict

import (
	"fmt"
	"math"
	"slices"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// PolicyOf is the policy a results file was judged by: the recorded one,
// else (a file written before policies were recorded) the default.
func PolicyOf(r *results.Results) stats.Policy {
	if r.Policy != nil {
		return *r.Policy
	}
	return stats.DefaultPolicy()
}

// Metric is how a scenario's headline reads: its direction and its units.
func Metric(sc *results.Scenario) stats.Metric {
	if sc.Direction == results.Higher {
		return stats.Metric{HigherBetter: true, Format: func(v float64) string { return human.Number(v) + "/s" }}
	}
	return stats.Metric{Format: human.Duration}
}

// Level summarises every target's rounds at one level of a scenario and
// judges each against the baseline by the design d, appending to
// sc.Summary and sc.Comparisons. aa names an A/A pair (two targets of one
// build), if the study has one: how far apart it lands raises the noise
// floor, and its second target (the one that is not the baseline) is the
// noise reference, not a candidate.
func Level(p stats.Policy, sc *results.Scenario, level int, targets []string, baseline string, aa []string, d stats.Design) {
	for _, name := range targets {
		sum := sc.Side(name, level).Summary
		sc.Summary = append(sc.Summary, results.Summary{Target: name, Concurrency: level, N: sum.N,
			Best: sum.Best, Median: sum.Median, Worst: sum.Worst, Spread: sum.Spread})
	}
	sc.Comparisons = append(sc.Comparisons, judgeLevel(p, sc, level, targets, baseline, aa, d)...)
}

// Open lists the candidates at one level of a scenario that the design d
// leaves undecided (inconclusive) on the rounds so far: the comparisons
// more rounds could decide.
func Open(p stats.Policy, sc *results.Scenario, level int, targets []string, baseline string, aa []string, d stats.Design) []results.Comparison {
	var open []results.Comparison
	for _, c := range judgeLevel(p, sc, level, targets, baseline, aa, d) {
		if !c.Verdict.Decided() {
			open = append(open, c)
		}
	}
	return open
}

// Gated reports whether the health gate alone decides every candidate at
// one level on the rounds so far (failing, could not keep up,
// client-bound): more rounds would not give any of them a speed verdict.
func Gated(p stats.Policy, sc *results.Scenario, level int, targets []string, baseline string, aa []string) bool {
	base := sc.Side(baseline, level)
	for _, name := range targets {
		if name == baseline || len(aa) == 2 && slices.Contains(aa, baseline) && slices.Contains(aa, name) {
			continue
		}
		if _, stop := p.Gate(base, sc.Side(name, level)); !stop {
			return false
		}
	}
	return true
}

// judgeLevel judges every candidate at one level against the baseline.
func judgeLevel(p stats.Policy, sc *results.Scenario, level int, targets []string, baseline string, aa []string, d stats.Design) []results.Comparison {
	sides := map[string]stats.Side{}
	for _, name := range targets {
		sides[name] = sc.Side(name, level)
	}
	base, ok := sides[baseline]
	if !ok {
		return nil
	}
	floor, aaNote, twin := p.NoiseFloor, "", ""
	dist, distOK := 0.0, false
	if len(aa) == 2 {
		twin = aa[1]
		if twin == baseline {
			twin = aa[0]
		}
		if dist, distOK = aaDistance(p, sides[aa[0]], sides[aa[1]]); distOK {
			floor = p.Floor(dist)
			if dist > p.NoiseFloor {
				aaNote = fmt.Sprintf(" (noise floor %s from the A/A pair %s, %s)", stats.Percent(dist), aa[0], aa[1])
			}
		}
	}
	m := Metric(sc)
	var out []results.Comparison
	for _, name := range targets {
		if name == baseline {
			continue
		}
		c := results.Comparison{Base: baseline, Candidate: name, Concurrency: level, NoiseFloor: floor}
		if name == twin {
			c.Verdict = stats.NoiseReference
			other := aa[0]
			if twin == aa[0] {
				other = aa[1]
			}
			c.Reason = fmt.Sprintf("the A/A twin of %s: the same build, so how far apart they land is noise, not a verdict", other)
			if distOK {
				c.Reason += fmt.Sprintf("; they landed %s apart", stats.Percent(dist))
			}
			out = append(out, c)
			continue
		}
		j := p.Judge(base, sides[name], m, floor, d)
		setJudgement(&c, j)
		if j.Verdict.Speed() || j.Verdict == stats.Indistinguishable || j.Verdict == stats.Inconclusive {
			c.Reason += aaNote // the floor it was judged against
		}
		out = append(out, c)
	}
	return out
}

// setJudgement copies a judgement into a comparison.
func setJudgement(c *results.Comparison, j stats.Judgement) {
	c.Verdict, c.Reason, c.ClientBound = j.Verdict, j.Reason, j.ClientBound
	c.Ratio = 0
	if j.Verdict.Speed() && !math.IsNaN(j.Ratio) {
		c.Ratio = j.Ratio
	}
	c.Estimate, c.Unstable, c.Unhealthy, c.TooFewRounds, c.Paired = j.Estimate, j.Unstable, j.Unhealthy, j.TooFewRounds, nil
	if pr := j.Paired; pr != nil {
		c.Paired = &results.Paired{N: pr.N, Lo: pr.Lo, Hi: pr.Hi, Confidence: pr.Confidence, Above: pr.Above, Below: pr.Below, SignP: pr.SignP}
	}
}

// aaDistance is how far apart an A/A pair landed, as a fraction: by the
// spread rule the relative distance of their bests, by the shift rule the
// estimated shift of their paired rounds; ok is false unless both have a
// successful round (two, for a shift).
func aaDistance(p stats.Policy, a, b stats.Side) (float64, bool) {
	if p.Rule == stats.RuleSpread {
		if a.Summary.N == 0 || b.Summary.N == 0 || a.Summary.Best == 0 {
			return 0, false
		}
		return math.Abs(b.Summary.Best-a.Summary.Best) / math.Abs(a.Summary.Best), true
	}
	var d []float64
	for i := range min(len(a.Headlines), len(b.Headlines)) {
		if x, y := a.Headlines[i], b.Headlines[i]; x > 0 && y > 0 {
			d = append(d, math.Log(y/x))
		}
	}
	if len(d) < 2 {
		return 0, false
	}
	return math.Expm1(math.Abs(stats.PairedShift(d, 0.05).Est)), true
}
