// Package stats turns rounds into the figures tandem publishes: best, median
// and worst per target with the right direction, and a verdict for each pair
// that is honest about noise (docs/methods.md states the rules).
package stats

import (
	"math"
	"slices"
)

// DefaultNoiseFloor is δ: relative differences at or below it are noise.
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

// Paired is what paired rounds say about a candidate against a base: round
// i of both is one pair, ratio rᵢ = candidate / base.
type Paired struct {
	N int
	// Lo and Hi are the smallest and largest ratio: a distribution-free
	// interval for the median ratio with confidence 1 − 2^(1−N).
	Lo, Hi     float64
	Confidence float64
	// Above and Below count the ratios above and below 1.
	Above, Below int
	// SignP is the exact two-sided sign test's p-value for "the median
	// ratio is 1" (ties dropped).
	SignP float64
}

// MinPaired is the fewest pairs worth an interval and a sign test.
const MinPaired = 6

// Pair computes the paired-ratio interval and the sign test from rounds
// aligned by index; pairs with a zero or NaN side are skipped.
func Pair(base, cand []float64) (Paired, bool) {
	var rs []float64
	for i := range min(len(base), len(cand)) {
		if base[i] > 0 && cand[i] > 0 && !math.IsNaN(base[i]) && !math.IsNaN(cand[i]) {
			rs = append(rs, cand[i]/base[i])
		}
	}
	if len(rs) < MinPaired {
		return Paired{N: len(rs)}, false
	}
	p := Paired{N: len(rs), Lo: slices.Min(rs), Hi: slices.Max(rs), Confidence: 1 - math.Pow(2, float64(1-len(rs)))}
	for _, r := range rs {
		switch {
		case r > 1:
			p.Above++
		case r < 1:
			p.Below++
		}
	}
	p.SignP = SignTest(p.Above, p.Below)
	return p, true
}

// SignTest is the exact two-sided binomial p-value of a and b successes
// and failures under p = ½.
func SignTest(a, b int) float64 {
	n := a + b
	if n == 0 {
		return 1
	}
	k := min(a, b)
	// P(X ≤ k) for X ~ Binomial(n, ½), doubled
	var tail float64
	c := 1.0 // C(n, 0)
	for i := 0; i <= k; i++ {
		if i > 0 {
			c = c * float64(n-i+1) / float64(i)
		}
		tail += c
	}
	return math.Min(1, 2*tail/math.Pow(2, float64(n)))
}
