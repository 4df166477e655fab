package stats

import (
	"fmt"
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

func TestVerdict(t *testing.T) {
	s := func(vals ...float64) Summary { return Summarize(vals, false) }
	h := func(vals ...float64) Summary { return Summarize(vals, true) }
	cases := []struct {
		name       string
		base, cand Summary
		higher     bool
		want       string
	}{
		{"identical builds, three noisy rounds", s(100, 104, 98), s(101, 97, 103), false, Indistinguishable},
		{"within the spread", s(100, 110, 120), s(105, 108, 111), false, Indistinguishable},
		{"below the noise floor", s(100, 100, 100), s(101, 101, 101), false, Indistinguishable},
		{"4x slower latency", s(100, 102, 101), s(400, 410, 405), false, Slower},
		{"4x faster latency", s(400, 410, 405), s(100, 102, 101), false, Faster},
		{"4x more throughput", h(100, 98, 99), h(400, 390, 395), true, Faster},
		{"4x less throughput", h(400, 390, 395), h(100, 98, 99), true, Slower},
		{"no rounds", s(), s(1), false, Withheld},
	}
	for _, c := range cases {
		ratio, got, reason := Verdict(c.base, c.cand, c.higher, DefaultNoiseFloor)
		if got != c.want || reason == "" {
			t.Errorf("%s: Verdict = %v (%s, ratio %v); want %v", c.name, got, reason, ratio, c.want)
		}
	}
}

func ExampleVerdict() {
	base := Summarize([]float64{1.00, 1.02, 1.05}, false) // ms, three rounds
	same := Summarize([]float64{1.01, 1.03, 0.99}, false)
	slow := Summarize([]float64{4.10, 4.00, 4.20}, false)
	_, v1, _ := Verdict(base, same, false, DefaultNoiseFloor)
	ratio, v2, _ := Verdict(base, slow, false, DefaultNoiseFloor)
	fmt.Println(v1)
	fmt.Printf("%s %.1f\n", v2, ratio)
	// Output:
	// indistinguishable
	// slower 4.0
}
