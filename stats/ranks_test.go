package stats

import (
	"math"
	"testing"
)

func TestMannWhitney(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b []float64
		u, p float64
	}{
		// 4 against 4, fully separated: 2 of the 70 arrangements are as extreme
		{"separated 4:4", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0, 2.0 / 70},
		{"separated the other way", []float64{5, 6, 7, 8}, []float64{1, 2, 3, 4}, 16, 2.0 / 70},
		// interleaved: U at the mean, nothing to see
		{"interleaved", []float64{1, 4, 5, 8}, []float64{2, 3, 6, 7}, 8, 1},
		// 3 against 3 separated: 2 of 20, never below 0.05
		{"separated 3:3", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1},
		{"empty", nil, []float64{1}, 0, 1},
	} {
		u, p := MannWhitney(c.a, c.b)
		if u != c.u || math.Abs(p-c.p) > 1e-12 {
			t.Errorf("%s: U %v, p %.6f; want %v, %.6f", c.name, u, p, c.u, c.p)
		}
	}
	// ties go to the normal approximation: identical samples are p = 1
	if _, p := MannWhitney([]float64{1, 1, 1, 1}, []float64{1, 1, 1, 1}); p != 1 {
		t.Errorf("identical tied samples: p %v; want 1", p)
	}
	// large separated samples: tiny p either way
	var a, b []float64
	for i := range 30 {
		a, b = append(a, float64(i)), append(b, float64(100+i))
	}
	if _, p := MannWhitney(a, b); p > 1e-6 {
		t.Errorf("30 against 30, separated: p %v; want tiny", p)
	}
}
