package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteSignedRankP counts every assignment of signs to the mid-ranks of
// |d| (zeros dropped): the two-sided p-value by definition.
func bruteSignedRankP(d []float64) float64 {
	var nz []float64
	for _, v := range d {
		if v != 0 {
			nz = append(nz, v)
		}
	}
	n := len(nz)
	abs := make([]float64, n)
	for i, v := range nz {
		abs[i] = math.Abs(v)
	}
	rank := make([]float64, n)
	for i := range nz {
		less, same := 0, 0
		for j := range nz {
			switch {
			case abs[j] < abs[i]:
				less++
			case abs[j] == abs[i]:
				same++
			}
		}
		rank[i] = float64(less) + float64(same+1)/2
	}
	w, total := 0.0, 0.0
	for i, v := range nz {
		total += rank[i]
		if v > 0 {
			w += rank[i]
		}
	}
	mean, hits := total/2, 0
	for mask := 0; mask < 1<<n; mask++ {
		s := 0.0
		for i := range n {
			if mask&(1<<i) != 0 {
				s += rank[i]
			}
		}
		if math.Abs(s-mean) >= math.Abs(w-mean)-1e-9 {
			hits++
		}
	}
	return float64(hits) / float64(int(1)<<n)
}

func TestSignedRankP(t *testing.T) {
	cases := []struct {
		d    []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4, 5, 6}, 2.0 / 64},            // all one way: the two extremes
		{[]float64{-1, -2, -3, -4, -5, -6}, 2.0 / 64},      // either way
		{[]float64{1, -2, 3, -4, 5, -6, 7, -8, 9, -10}, 0}, // filled in below by brute force
		{[]float64{0, 0, 0}, 1},
		{nil, 1},
	}
	for _, c := range cases {
		want := c.want
		if want == 0 {
			want = bruteSignedRankP(c.d)
		}
		if got := SignedRankP(c.d); math.Abs(got-want) > 1e-12 {
			t.Errorf("SignedRankP(%v) = %v; want %v", c.d, got, want)
		}
	}
	// n = 10, W⁺ = 8: the tabled critical value at α = 0.05 two-sided
	d := []float64{-1, -2, 3, -4, 5, -6, -7, -8, -9, -10} // W⁺ = 3 + 5 = 8
	if got := SignedRankP(d); math.Abs(got-0.048828125) > 1e-9 {
		t.Errorf("n=10 W+=8: p = %v; want 0.0488 (Wilcoxon's table)", got)
	}
	// ties and zeros, against counting every sign
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		n := 1 + rng.IntN(11)
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(rng.IntN(7) - 3) // many ties, some zeros
		}
		if got, want := SignedRankP(d), bruteSignedRankP(d); math.Abs(got-want) > 1e-9 {
			t.Fatalf("SignedRankP(%v) = %v; brute force %v", d, got, want)
		}
	}
}

// The interval covers the true centre at least as often as it says, for
// symmetric differences of several shapes.
func TestPairedShiftCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	shapes := map[string]func() float64{
		"normal":  rng.NormFloat64,
		"uniform": func() float64 { return rng.Float64() - 0.5 },
		"heavy":   func() float64 { return rng.NormFloat64() / math.Max(0.05, math.Abs(rng.NormFloat64())) }, // Cauchy-like
	}
	for name, draw := range shapes {
		for _, n := range []int{8, 15, 40} {
			const trials, alpha, centre = 2000, 0.05, 0.3
			covered, confidence := 0, 0.0
			for range trials {
				d := make([]float64, n)
				for i := range d {
					d[i] = centre + draw()
				}
				s := PairedShift(d, alpha)
				if s.Lo <= centre && centre <= s.Hi {
					covered++
				}
				confidence = s.Confidence
			}
			got := float64(covered) / trials
			// three standard errors below the stated confidence
			if floor := confidence - 3*math.Sqrt(confidence*(1-confidence)/trials); got < floor {
				t.Errorf("%s n=%d: covered %.3f of trials; the interval says %.3f", name, n, got, confidence)
			}
			if confidence < 1-alpha {
				t.Errorf("%s n=%d: confidence %.4f below the level asked, %.2f", name, n, confidence, 1-alpha)
			}
		}
	}
}

func TestPairedShiftSmall(t *testing.T) {
	// five pairs cannot bound anything at 95 % (2^-5 > 2.5 %)
	s := PairedShift([]float64{1, 2, 3, 4, 5}, 0.05)
	if !math.IsInf(s.Lo, -1) || !math.IsInf(s.Hi, 1) || s.Est != 3 {
		t.Errorf("five pairs: %+v; want an unbounded interval around 3", s)
	}
	// six pairs: the extremes of the Walsh averages at 1 − 2/64
	s = PairedShift([]float64{1, 2, 3, 4, 5, 6}, 0.05)
	if s.Lo != 1 || s.Hi != 6 || math.Abs(s.Confidence-(1-2.0/64)) > 1e-12 {
		t.Errorf("six pairs: %+v; want [1, 6] at 96.9 %%", s)
	}
	// one wild pair moves the estimate little
	s = PairedShift([]float64{0.1, 0.12, 0.09, 0.11, 0.1, 0.13, 0.08, 0.1, 0.11, 50}, 0.05)
	if s.Est < 0.09 || s.Est > 0.13 || s.Lo <= 0 {
		t.Errorf("one erratic pair: %+v; want about 0.1, clear of 0", s)
	}
}

func TestTwoSampleShift(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	y := []float64{11, 12, 13, 14, 15, 16, 17, 18}
	s := TwoSampleShift(x, y, 0.05)
	if s.Est != 10 || s.Lo <= 0 || s.P > 0.001 {
		t.Errorf("shifted by 10: %+v", s)
	}
	// against the definition: the differences' order statistics
	var diffs []float64
	for _, a := range x {
		for _, b := range y {
			diffs = append(diffs, b-a)
		}
	}
	slices.Sort(diffs)
	c, tail := rankSumCritical(8, 8, 0.025)
	if c != 13 || s.Lo != diffs[13] || s.Hi != diffs[63-13] {
		// 13: the tabled lower critical value of U for 8 and 8 at 0.025 one-sided
		t.Errorf("critical value %d (tail %v), interval [%v, %v]; want 13 and [%v, %v]", c, tail, s.Lo, s.Hi, diffs[13], diffs[50])
	}
	if s := TwoSampleShift(nil, y, 0.05); s.P != 1 || !math.IsNaN(s.Est) {
		t.Errorf("empty base: %+v", s)
	}
}

func TestHolm(t *testing.T) {
	got := Holm([]float64{0.01, 0.04, 0.03, math.NaN(), 0.005})
	want := []float64{0.03, 0.06, 0.06, math.NaN(), 0.02}
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || !math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("Holm = %v; want %v", got, want)
			break
		}
	}
	if l := HolmLevel([]float64{0.01, 0.04, 0.03, 0.005}, 0.03, 0.05); math.Abs(l-0.025) > 1e-12 {
		t.Errorf("HolmLevel = %v; want 0.05/2", l)
	}
}

func TestSchedule(t *testing.T) {
	for _, c := range []struct {
		alpha float64
		max   int
	}{{0.05, 40}, {0.05 / 15, 40}, {0.0125, 30}, {0.05, 6}, {0.05, 3}, {0.001, 12}} {
		looks := Schedule(c.alpha, c.max)
		total := 0.0
		for i, l := range looks {
			total += l.Share
			if i > 0 && l.Rounds <= looks[i-1].Rounds {
				t.Errorf("Schedule(%v, %d) = %v: rounds not increasing", c.alpha, c.max, looks)
			}
			if l.Rounds > c.max {
				t.Errorf("Schedule(%v, %d) = %v: past the budget", c.alpha, c.max, looks)
			}
		}
		if math.Abs(total-1) > 1e-9 {
			t.Errorf("Schedule(%v, %d) = %v: shares add up to %v", c.alpha, c.max, looks, total)
		}
		if last := looks[len(looks)-1]; last.Rounds != c.max {
			t.Errorf("Schedule(%v, %d) = %v: the last look is not at the budget", c.alpha, c.max, looks)
		}
		if len(looks) > 1 && math.Pow(2, float64(1-looks[0].Rounds)) > c.alpha*looks[0].Share {
			t.Errorf("Schedule(%v, %d) = %v: a first look that cannot decide", c.alpha, c.max, looks)
		}
		t.Logf("Schedule(%.4g, %d) = %v", c.alpha, c.max, looks)
	}
	plan := Schedule(0.05, 40)
	f := Final(plan, 17)
	spent := 0.0
	for _, l := range f {
		spent += l.Share
	}
	if f[len(f)-1].Rounds != 17 || math.Abs(spent-1) > 1e-9 {
		t.Errorf("Final(%v, 17) = %v: want a last look at 17 spending the rest", plan, f)
	}
	if f := Final(plan, plan[1].Rounds); len(f) != 2 || f[1].Rounds != plan[1].Rounds || math.Abs(f[1].Share-(1-plan[0].Share)) > 1e-9 {
		t.Errorf("Final at a planned look = %v; want the first two looks, the second spending the rest", f)
	}
}

func TestOrderStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 500 {
		n := 1 + rng.IntN(60)
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(rng.IntN(20)) // ties too
		}
		sorted := slices.Sorted(slices.Values(xs))
		c := rng.IntN(n+2) - 1
		med, lo, hi := orderStats(slices.Clone(xs), c)
		wantLo, wantHi := math.Inf(-1), math.Inf(1)
		if c >= 0 && c < n {
			wantLo, wantHi = sorted[c], sorted[n-1-c]
		}
		if med != median(sorted) || lo != wantLo || hi != wantHi {
			t.Fatalf("orderStats(%v, %d) = %v, %v, %v; want %v, %v, %v", xs, c, med, lo, hi, median(sorted), wantLo, wantHi)
		}
	}
}
