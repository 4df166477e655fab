package stats

import (
	"math"
	"sort"
)

// MannWhitney tests whether the values of a and b come from one
// distribution (rounds of two runs, not paired): it returns the U
// statistic of a and the two-sided p-value, exact (every arrangement of
// the ranks counted) for samples of at most 20 each without ties, else by
// the normal approximation with a correction for ties. p is 1 when either
// sample is empty.
func MannWhitney(a, b []float64) (u, p float64) {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 0, 1
	}
	type obs struct {
		v     float64
		fromA bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	// mid-ranks, and the tie term Σ(t³ − t)
	var rankA, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		mid := float64(i+j+1) / 2 // ranks i+1 … j
		for k := i; k < j; k++ {
			if all[k].fromA {
				rankA += mid
			}
		}
		if t := float64(j - i); t > 1 {
			ties += t*t*t - t
		}
		i = j
	}
	u = rankA - float64(n1*(n1+1))/2
	mean := float64(n1*n2) / 2
	if ties == 0 && n1 <= 20 && n2 <= 20 {
		return u, exactU(n1, n2, u)
	}
	n := float64(n1 + n2)
	variance := float64(n1*n2) / 12 * ((n + 1) - ties/(n*(n-1)))
	if variance <= 0 {
		return u, 1
	}
	z := (math.Abs(u-mean) - 0.5) / math.Sqrt(variance) // with continuity correction
	return u, math.Min(1, math.Erfc(max(z, 0)/math.Sqrt2))
}

// exactU is the two-sided p-value of U = u for samples of n1 and n2
// without ties: the share of the C(n1+n2, n1) arrangements whose U is at
// least as far from the mean.
func exactU(n1, n2 int, u float64) float64 {
	// c(i, m, k) counts the arrangements of i values of a and m of b
	// with U = k: the largest value is b's, c(i, m-1, k), or a's, which
	// beats all m of b, c(i-1, m, k-m). prev holds layer m-1, counts
	// layer m, filled in order of i.
	maxU := n1 * n2
	layer := func() [][]float64 {
		l := make([][]float64, n1+1)
		for i := range l {
			l[i] = make([]float64, maxU+1)
		}
		return l
	}
	prev, counts := layer(), layer()
	for i := 0; i <= n1; i++ {
		prev[i][0] = 1 // m = 0: one arrangement, U = 0
	}
	for m := 1; m <= n2; m++ {
		for i := 0; i <= n1; i++ {
			for k := 0; k <= maxU; k++ {
				c := prev[i][k]
				if i > 0 && k-m >= 0 {
					c += counts[i-1][k-m]
				}
				counts[i][k] = c
			}
		}
		prev, counts = counts, prev
	}
	dist := prev[n1]
	total := 0.0
	for _, c := range dist {
		total += c
	}
	mean := float64(maxU) / 2
	far := math.Abs(u - mean)
	tail := 0.0
	for k, c := range dist {
		if math.Abs(float64(k)-mean) >= far-1e-9 {
			tail += c
		}
	}
	return math.Min(1, tail/total)
}
