package values

import (
	"fmt"
	"math"
	"testing"
)

// zipfProbs are the exact probabilities of ranks 0..n−1: (k+1)^−s over
// their sum.
func zipfProbs(n int, s float64) []float64 {
	p := make([]float64, n)
	var sum float64
	for k := n - 1; k >= 0; k-- { // small terms first
		p[k] = math.Pow(float64(k+1), -s)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
	return p
}

// chiSquareLimit is the chi-square quantile that a fit exceeds with
// probability 1e-4 (Wilson–Hilferty; z = 3.719).
func chiSquareLimit(df int) float64 {
	k := float64(df)
	c := 2 / (9 * k)
	return k * math.Pow(1-c+3.719*math.Sqrt(c), 3)
}

// The zipf source against the exact probabilities over 100,000 draws, for
// s ≤ 1 and above: each top rank's share within 5 % of its expected share
// (a top rank is one expected at least 6,400 times, where 5 % is at least
// 4 standard deviations), and every rank's count by a chi-square fit
// (ranks pooled into bins expected at least 50 times each).
func TestZipfFrequencies(t *testing.T) {
	const draws = 100_000
	for _, s := range []float64{0.5, 0.99, 1.0, 1.2, 2} {
		for _, n := range []int{10, 1000, 1_000_000} {
			t.Run(fmt.Sprintf("s=%v/n=%d", s, n), func(t *testing.T) {
				set := open(t, 42, map[string]Spec{"k": Zipf{N: uint64(n), S: s}})
				r := set.NewRenderer()
				g := set.gens["k"]
				counts := make([]int, n)
				for i := range uint64(draws) {
					v := g.value(r, i, zeroTime)
					if v.t != tInt || v.n < 0 || v.n >= int64(n) {
						t.Fatalf("request %d: rank %v is outside 0..%d", i, v, n-1)
					}
					counts[v.n]++
				}
				p := zipfProbs(n, s)
				top := 0
				for k := 0; k < n && p[k]*draws >= 6400; k++ {
					top++
					if got := float64(counts[k]) / draws; math.Abs(got/p[k]-1) > 0.05 {
						t.Errorf("rank %d: share %.5f; want %.5f ± 5 %%", k, got, p[k])
					}
				}
				if top == 0 && n == 10 {
					t.Errorf("no rank of %d is expected 6,400 times: the test checks no share", n)
				}
				chi, df := 0.0, -1
				var exp float64
				var got int
				for k := range n {
					exp += p[k] * draws
					got += counts[k]
					if exp >= 50 || k == n-1 {
						chi += (float64(got) - exp) * (float64(got) - exp) / exp
						df++
						exp, got = 0, 0
					}
				}
				if limit := chiSquareLimit(df); chi > limit {
					t.Errorf("chi-square %.1f over %d degrees of freedom; above %.1f, which a true Zipf exceeds once in 10,000", chi, df, limit)
				}
				t.Logf("%d top ranks within 5 %%; chi-square %.1f, %d df (limit %.1f)", top, chi, df, chiSquareLimit(df))
			})
		}
	}
}

// gammaInverse is SplitMix64's increment's inverse modulo 2^64: the state
// moved by d*gamma when d values were drawn.
func gammaInverse() uint64 {
	const gamma = 0x9e3779b97f4a7c15
	x := uint64(gamma) // Newton's iteration: each step doubles the bits right
	for range 6 {
		x *= 2 - gamma*x
	}
	return x
}

// The sampler's cost: the uniform draws it takes per value, on average,
// stay below 1.1 for every s and n (rejection-inversion rejects rarely).
func TestZipfDraws(t *testing.T) {
	inv := gammaInverse()
	for _, s := range []float64{0.01, 0.5, 0.99, 1, 1.2, 2, 10} {
		for _, n := range []uint64{1, 2, 10, 1000, 1 << 30} {
			z := newZipf(n, s)
			var used uint64
			const values = 20_000
			for i := range uint64(values) {
				r := draws(99, i)
				before := uint64(r)
				k := z.sample(&r)
				if k < 1 || k > n {
					t.Fatalf("s=%v n=%d: rank %d outside 1..%d", s, n, k, n)
				}
				used += (uint64(r) - before) * inv
			}
			avg := float64(used) / values
			t.Logf("s=%v n=%d: %.3f draws a value", s, n, avg)
			if avg > 1.1 {
				t.Errorf("s=%v n=%d: %.3f draws a value; want at most 1.1", s, n, avg)
			}
		}
	}
}
