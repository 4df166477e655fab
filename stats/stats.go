// Package stats turns rounds into the figures tandem publishes: best, median
// and worst per target with the right direction, and a verdict for each pair
// that is honest about noise (docs/methods.md states the rules).
package stats

import (
	"fmt"
	"math"
	"slices"
)

// DefaultNoiseFloor is δ: relative differences below it are noise.
const DefaultNoiseFloor = 0.02

// Summary is best, median and worst of a set of headline values.
type Summary struct {
	N                   int
	Best, Median, Worst float64
	// Spread is |Best − Worst|.
	Spread float64
}

// Summarize returns the summary of values; higherBetter says which end is
// best (throughput) or not (latency). NaN values are ignored.
func Summarize(values []float64, higherBetter bool) Summary {
	vs := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return Summary{}
	}
	slices.Sort(vs)
	n := len(vs)
	med := vs[n/2]
	if n%2 == 0 {
		med = (vs[n/2-1] + vs[n/2]) / 2
	}
	best, worst := vs[0], vs[n-1]
	if higherBetter {
		best, worst = worst, best
	}
	return Summary{N: n, Best: best, Median: med, Worst: worst, Spread: math.Abs(best - worst)}
}

// Verdict words.
const (
	Faster            = "faster"
	Slower            = "slower"
	Indistinguishable = "indistinguishable"
	Withheld          = "withheld"
)

// Verdict compares a candidate against a base. It is Indistinguishable when
// the bests differ by less than the larger spread, or by less than
// noiseFloor relative to the base; otherwise Faster or Slower for the
// candidate. Ratio is candidate best / base best.
func Verdict(base, cand Summary, higherBetter bool, noiseFloor float64) (ratio float64, verdict, reason string) {
	if base.N == 0 || cand.N == 0 || base.Best == 0 {
		return math.NaN(), Withheld, "not enough successful rounds to compare"
	}
	ratio = cand.Best / base.Best
	diff := math.Abs(cand.Best - base.Best)
	spread := math.Max(base.Spread, cand.Spread)
	switch {
	case diff < spread:
		return ratio, Indistinguishable, fmt.Sprintf("difference of bests %.4g is within the run-to-run spread %.4g", diff, spread)
	case diff/math.Abs(base.Best) < noiseFloor:
		return ratio, Indistinguishable, fmt.Sprintf("relative difference below the %.0f%% noise floor", noiseFloor*100)
	}
	better := cand.Best < base.Best
	if higherBetter {
		better = !better
	}
	if better {
		return ratio, Faster, fmt.Sprintf("best differs by %.4g, more than the spread %.4g", diff, spread)
	}
	return ratio, Slower, fmt.Sprintf("best differs by %.4g, more than the spread %.4g", diff, spread)
}
