// Package verdict applies the verdict policy (stats.Policy) to results:
// the comparisons of one run's targets at each scenario and level, and the
// changes between two runs that tandem compare gates on. Both judge by the
// same policy, recorded in results.json, so a run and a comparison of runs
// cannot disagree about what counts as faster, failing or noise.
package verdict

import (
	"fmt"
	"math"

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
	if sc.Direction == "higher" {
		return stats.Metric{HigherBetter: true, Format: func(v float64) string { return human.Number(v) + "/s" }}
	}
	return stats.Metric{Format: human.Duration}
}

// Level summarises every target's rounds at one level of a scenario and
// judges each against the baseline, appending to sc.Summary and
// sc.Comparisons. aa names an A/A pair (two targets of one build), if the
// study has one: how far apart it lands raises the noise floor, and its
// second target (the one that is not the baseline) is the noise reference,
// not a candidate.
func Level(p stats.Policy, sc *results.Scenario, level int, targets []string, baseline string, aa []string) {
	sides := map[string]stats.Side{}
	for _, name := range targets {
		s := sc.Side(name, level)
		sides[name] = s
		sum := s.Summary
		sc.Summary = append(sc.Summary, results.Summary{Target: name, Concurrency: level, N: sum.N,
			Best: sum.Best, Median: sum.Median, Worst: sum.Worst, Spread: sum.Spread})
	}
	base, ok := sides[baseline]
	if !ok {
		return
	}
	floor, aaNote, twin := p.NoiseFloor, "", ""
	if len(aa) == 2 {
		twin = aa[1]
		if twin == baseline {
			twin = aa[0]
		}
		a, b := sides[aa[0]], sides[aa[1]]
		if d, ok := aaDistance(a.Summary, b.Summary); ok {
			floor = p.Floor(d)
			if d > p.NoiseFloor {
				aaNote = fmt.Sprintf(" (noise floor %s from the A/A pair %s, %s)", stats.Percent(d), aa[0], aa[1])
			}
		}
	}
	m := Metric(sc)
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
			if d, ok := aaDistance(sides[aa[0]].Summary, sides[aa[1]].Summary); ok {
				c.Reason += fmt.Sprintf("; they landed %s apart", stats.Percent(d))
			}
			sc.Comparisons = append(sc.Comparisons, c)
			continue
		}
		j := p.Judge(base, sides[name], m, floor)
		c.Verdict, c.Reason, c.ClientBound = j.Verdict, j.Reason, j.ClientBound
		if j.Verdict == stats.Faster || j.Verdict == stats.Slower || j.Verdict == stats.Indistinguishable {
			c.Reason += aaNote
		}
		if !math.IsNaN(j.Ratio) {
			c.Ratio = j.Ratio
		}
		if pr := j.Paired; pr != nil {
			c.Paired = &results.Paired{N: pr.N, Lo: pr.Lo, Hi: pr.Hi, Confidence: pr.Confidence, Above: pr.Above, Below: pr.Below, SignP: pr.SignP}
		}
		sc.Comparisons = append(sc.Comparisons, c)
	}
}

// aaDistance is how far apart an A/A pair's bests landed, relative to the
// first; ok is false unless both have a successful round.
func aaDistance(a, b stats.Summary) (float64, bool) {
	if a.N == 0 || b.N == 0 || a.Best == 0 {
		return 0, false
	}
	return math.Abs(b.Best-a.Best) / math.Abs(a.Best), true
}
