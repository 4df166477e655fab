package stats

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	cases := []struct {
		values []float64
		higher bool
		want   Summary
	}{
		{[]float64{3, 1, 2}, false, Summary{N: 3, Best: 1, Median: 2, Worst: 3, Spread: 2}},
		{[]float64{3, 1, 2}, true, Summary{N: 3, Best: 3, Median: 2, Worst: 1, Spread: 2}},
		{[]float64{4, 1, 2, 3}, false, Summary{N: 4, Best: 1, Median: 2.5, Worst: 4, Spread: 3}},
		{[]float64{5}, true, Summary{N: 1, Best: 5, Median: 5, Worst: 5}},
		{[]float64{math.NaN(), 2}, false, Summary{N: 1, Best: 2, Median: 2, Worst: 2}},
		{nil, false, Summary{}},
	}
	for _, c := range cases {
		if got := Summarize(c.values, c.higher); got != c.want {
			t.Errorf("Summarize(%v, %v) = %+v; want %+v", c.values, c.higher, got, c.want)
		}
	}
}

func TestPairAndSignTest(t *testing.T) {
	base := []float64{100, 102, 98, 101, 99, 100}
	slower := []float64{120, 125, 118, 122, 119, 121}
	p, ok := Pair(base, slower)
	if !ok || p.N != 6 || p.Above != 6 || p.Lo < 1.18 || p.Hi > 1.23 || math.Abs(p.Confidence-(1-1.0/32)) > 1e-12 {
		t.Errorf("Pair(slower) = %+v, %v", p, ok)
	}
	if math.Abs(p.SignP-2.0/64) > 1e-12 {
		t.Errorf("sign test 6 of 6 above: p = %v; want 2/64", p.SignP)
	}
	same := []float64{101, 99, 99, 102, 98, 101}
	if p, _ := Pair(base, same); p.SignP < 0.5 || p.Lo > 1 || p.Hi < 1 {
		t.Errorf("Pair(same) = %+v; want an interval around 1 and a large p", p)
	}
	if _, ok := Pair(base[:5], slower[:5]); ok {
		t.Error("Pair with 5 rounds gave an interval")
	}
	cases := []struct {
		a, b int
		want float64
	}{{0, 0, 1}, {3, 3, 1}, {5, 0, 2.0 / 32}, {9, 1, 22.0 / 1024}, {1, 9, 22.0 / 1024}}
	for _, c := range cases {
		if got := SignTest(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("SignTest(%d, %d) = %v; want %v", c.a, c.b, got, c.want)
		}
	}
}
