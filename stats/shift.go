package stats

import (
	"math"
	"slices"
	"sync"

	moremath "github.com/aclements/go-moremath/stats"
)

// Shift is a location shift between two sets of values with a
// distribution-free confidence interval: the Hodges–Lehmann estimate and
// the interval that inverts the Wilcoxon signed-rank test (paired values)
// or the Mann–Whitney test (two independent sets). tandem takes it on log
// values, so Est, Lo and Hi are log ratios.
type Shift struct {
	// N is the number of pairs (paired) or the smaller set's size.
	N int
	// Est is the estimate; Lo and Hi bound it with at least Confidence
	// (±Inf when the sets are too small for the level asked).
	Est, Lo, Hi float64
	Confidence  float64
	// P is the exact two-sided p-value of "no shift" (a normal
	// approximation beyond exactLimit values).
	P float64
}

// exactLimit is the size up to which distributions are counted exactly.
const exactLimit = 300

// PairedShift estimates the centre of the differences d (candidate −
// base of paired rounds) with a two-sided interval at level 1 − alpha:
// the median of the Walsh averages (dᵢ + dⱼ)/2, i ≤ j, and the order
// statistics of those averages that the signed-rank distribution picks
// (Hollander & Wolfe, Nonparametric Statistical Methods, §3.2). Valid for
// differences that are independent and symmetric about their centre,
// as paired rounds of two builds in alternating or shuffled order are
// when the builds are alike. NaNs are dropped.
func PairedShift(d []float64, alpha float64) Shift {
	d = finite(d)
	n := len(d)
	s := Shift{N: n, Est: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), P: 1}
	if n == 0 {
		return s
	}
	walsh := make([]float64, 0, n*(n+1)/2)
	for i := range d {
		for j := i; j < n; j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	c, tail := signedRankCritical(n, alpha/2)
	s.Confidence = 1 - 2*tail
	s.Est, s.Lo, s.Hi = orderStats(walsh, c)
	s.P = SignedRankP(d)
	return s
}

// TwoSampleShift estimates by how much y is shifted from x (two
// independent sets, such as the rounds of two runs) with a two-sided
// interval at level 1 − alpha: the median of the differences yⱼ − xᵢ and
// the order statistics of those differences that the Mann–Whitney
// distribution picks (Hollander & Wolfe, §4.3). NaNs are dropped.
func TwoSampleShift(x, y []float64, alpha float64) Shift {
	x, y = finite(x), finite(y)
	s := Shift{N: min(len(x), len(y)), Est: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), P: 1}
	if len(x) == 0 || len(y) == 0 {
		return s
	}
	diffs := make([]float64, 0, len(x)*len(y))
	for _, a := range x {
		for _, b := range y {
			diffs = append(diffs, b-a)
		}
	}
	c, tail := rankSumCritical(len(x), len(y), alpha/2)
	s.Confidence = 1 - 2*tail
	s.Est, s.Lo, s.Hi = orderStats(diffs, c)
	if r, err := moremath.MannWhitneyUTest(x, y, moremath.LocationDiffers); err == nil {
		s.P = r.P
	}
	return s
}

// signedRankCritical is the largest c with P(W⁺ ≤ c) ≤ tail for the
// signed-rank statistic of n pairs without ties, and that probability;
// c = −1 (and tail 0) when even P(W⁺ ≤ 0) = 2⁻ⁿ is above tail.
func signedRankCritical(n int, tail float64) (c int, p float64) {
	if n > exactLimit {
		mean := float64(n*(n+1)) / 4
		sd := math.Sqrt(float64(n*(n+1)*(2*n+1)) / 24)
		c = int(math.Floor(mean + sd*normalQuantile(tail)))
		if c < 0 {
			return -1, 0
		}
		return c, normalCDF((float64(c) + 0.5 - mean) / sd)
	}
	pmf := signedRankNull(n)
	c, cum := -1, 0.0
	for k, pk := range pmf {
		if cum+pk > tail*(1+1e-12) {
			break
		}
		c, cum = k, cum+pk
	}
	return c, cum
}

// rankSumCritical is the largest c with P(U ≤ c) ≤ tail for the
// Mann–Whitney statistic of sets of n1 and n2 without ties, and that
// probability; c = −1 when even P(U ≤ 0) is above tail.
func rankSumCritical(n1, n2 int, tail float64) (c int, p float64) {
	if n1+n2 > exactLimit {
		mean := float64(n1*n2) / 2
		sd := math.Sqrt(float64(n1*n2*(n1+n2+1)) / 12)
		c = int(math.Floor(mean + sd*normalQuantile(tail)))
		if c < 0 {
			return -1, 0
		}
		return c, normalCDF((float64(c) + 0.5 - mean) / sd)
	}
	d := moremath.UDist{N1: n1, N2: n2}
	c = -1
	for k := 0; k <= n1*n2; k++ {
		pk := d.CDF(float64(k))
		if pk > tail*(1+1e-12) {
			break
		}
		c, p = k, pk
	}
	return c, p
}

// nullTable holds the signed-rank null distributions for up to
// tableLimit pairs without ties, counted once: the sequential looks ask
// for them at every round.
var nullTable = sync.OnceValue(func() [][]float64 {
	t := make([][]float64, tableLimit+1)
	for n := range t {
		t[n] = signedRankPMF(ranks(n))
	}
	return t
})

const tableLimit = 100

// signedRankNull is P(W⁺ = k) for n pairs without ties.
func signedRankNull(n int) []float64 {
	if n <= tableLimit {
		return nullTable()[n]
	}
	return signedRankPMF(ranks(n))
}

// ranks is 1, 2, …, n, doubled (the signed-rank distribution is counted
// on doubled ranks, so that mid-ranks of ties stay integers).
func ranks(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = 2 * (i + 1)
	}
	return r
}

// signedRankPMF is the null distribution of the signed-rank statistic
// W⁺ (the sum of the ranks of the positive differences) for the given
// doubled ranks: each rank's sign is a fair coin. Index k holds
// P(2·W⁺ = k) for doubled ranks; for ranks(n) the zero entries at odd
// k are dropped, so index k is P(W⁺ = k).
func signedRankPMF(doubled []int) []float64 {
	total := 0
	for _, r := range doubled {
		total += r
	}
	pmf := make([]float64, total+1)
	pmf[0] = 1
	top := 0
	for _, r := range doubled {
		for k := top; k >= 0; k-- {
			if pmf[k] != 0 {
				pmf[k+r] += pmf[k] / 2
				pmf[k] /= 2
			}
		}
		top += r
	}
	allEven := true
	for _, r := range doubled {
		allEven = allEven && r%2 == 0
	}
	if !allEven {
		return pmf
	}
	half := make([]float64, total/2+1)
	for k := range half {
		half[k] = pmf[2*k]
	}
	return half
}

// SignedRankP is the exact two-sided p-value of the Wilcoxon signed-rank
// test that the differences d are centred on 0: zeros dropped, ties given
// mid-ranks and the distribution counted for those ranks (a normal
// approximation with the tie correction beyond exactLimit differences).
// NaNs are dropped; no difference left gives 1.
func SignedRankP(d []float64) float64 {
	var nz []float64
	for _, v := range d {
		if v != 0 && !math.IsNaN(v) {
			nz = append(nz, v)
		}
	}
	n := len(nz)
	if n == 0 {
		return 1
	}
	slices.SortFunc(nz, func(a, b float64) int {
		switch {
		case math.Abs(a) < math.Abs(b):
			return -1
		case math.Abs(a) > math.Abs(b):
			return 1
		}
		return 0
	})
	doubled := make([]int, n) // 2 × mid-rank
	var ties float64
	for i := 0; i < n; {
		j := i
		for j < n && math.Abs(nz[j]) == math.Abs(nz[i]) {
			j++
		}
		for k := i; k < j; k++ {
			doubled[k] = i + j + 1 // 2 × (i+1 + j)/2
		}
		if t := float64(j - i); t > 1 {
			ties += t*t*t - t
		}
		i = j
	}
	w2 := 0 // 2 × W⁺
	for i, v := range nz {
		if v > 0 {
			w2 += doubled[i]
		}
	}
	total := n * (n + 1) // 2 × n(n+1)/2
	if n > exactLimit {
		mean := float64(total) / 4
		sd := math.Sqrt(float64(n*(n+1)*(2*n+1))/24 - ties/48)
		z := (math.Abs(float64(w2)/2-mean) - 0.5) / sd
		return math.Min(1, 2*(1-normalCDF(max(z, 0))))
	}
	var pmf []float64
	if ties == 0 {
		pmf, w2, total = signedRankNull(n), w2/2, total/2
	} else if pmf = signedRankPMF(doubled); len(pmf) != total+1 { // halved: every rank even
		w2 /= 2
		total /= 2
	}
	// two-sided: the probability of a statistic at least as far from the
	// mean as the one seen
	mean := float64(total) / 2
	far := math.Abs(float64(w2) - mean)
	p := 0.0
	for k, pk := range pmf {
		if math.Abs(float64(k)-mean) >= far-1e-9 {
			p += pk
		}
	}
	return math.Min(1, p)
}

// orderStats is the median of xs and its c-th smallest and c-th largest
// values (counting from 0; ±Inf for c < 0), found by selection rather
// than a sort: the sequential looks ask for them at every round. It
// reorders xs.
func orderStats(xs []float64, c int) (med, lo, hi float64) {
	n := len(xs)
	lo, hi = math.Inf(-1), math.Inf(1)
	if c >= 0 && c < n {
		lo, hi = selectK(xs, c), selectK(xs, n-1-c)
	}
	med = selectK(xs, n/2)
	if n%2 == 0 {
		med = (selectK(xs, n/2-1) + med) / 2
	}
	return med, lo, hi
}

// selectK reorders xs so that xs[k] holds its k-th smallest value (from
// 0), nothing larger before it and nothing smaller after, and returns it
// (Hoare's selection, median-of-three pivots).
func selectK(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

func finite(vs []float64) []float64 {
	out := make([]float64, 0, len(vs))
	for _, v := range vs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// normalQuantile is the standard normal's quantile function.
func normalQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }
