package history

import (
	"context"
	"testing"

	"github.com/tandem-bench/tandem/stats"
)

// Top movers say a move in the verdict engine's words: a 0.5 % wiggle is
// no change (it used to be coloured as one), a 30 % slowdown is slower,
// and the real changes come first.
func TestTopMoversJudged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		after  []float64
		expect stats.Verdict
	}{
		{"0.5 % wiggle", []float64{100.5, 101.4, 99.6, 101.0, 100.7}, stats.Indistinguishable},
		{"30 % slower", []float64{130, 131, 129, 130.5, 130.2}, stats.Slower},
		{"30 % faster", []float64{70, 71, 69, 70.5, 70.2}, stats.Faster},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := stores(t)["sqlite"](t)
			for d, p50s := range [][]float64{steady, tc.after} {
				if _, _, err := s.Add(ctx, runOf(t, d+1, p50s, nil), Meta{Branch: "main"}); err != nil {
					t.Fatal(err)
				}
			}
			ms, err := s.TopMovers(ctx, "gate", "main", 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				if m.Series.Metric == "headline" && m.Verdict != tc.expect {
					t.Errorf("%s: %s %+.1f %%: %s; want %s", tc.name, m.Series, m.Change*100, m.Verdict, tc.expect)
				}
			}
			if len(ms) == 0 {
				t.Fatal("no movers")
			}
		})
	}
}

// A series whose earlier runs scatter by several per cent between runs
// (each run's rounds tight) raises its movers' floor: a 4 % move that two
// runs' rounds alone would call slower is within the series' scatter.
func TestTopMoversFloorFromHistory(t *testing.T) {
	scaled := func(f float64) []float64 {
		out := make([]float64, len(steady))
		for i, v := range steady {
			out[i] = v * f
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		levels []float64 // each run's level; the last is the newest
		expect stats.Verdict
	}{
		{"no history", []float64{1, 1.04}, stats.Slower},
		{"scattered history", []float64{1, 0.94, 1.05, 0.97, 1.06, 0.95, 1, 1.04}, stats.Inconclusive},
		{"steady history", []float64{1, 1.001, 0.999, 1, 1.002, 0.998, 1, 1.04}, stats.Slower},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := stores(t)["sqlite"](t)
			for d, level := range tc.levels {
				if _, _, err := s.Add(ctx, runOf(t, d+1, scaled(level), nil), Meta{Branch: "main"}); err != nil {
					t.Fatal(err)
				}
			}
			ms, err := s.TopMovers(ctx, "gate", "main", 10)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, m := range ms {
				if m.Series.Metric == "headline" {
					found = true
					if m.Verdict != tc.expect || m.Floor < MoverFloor {
						t.Errorf("%s: %+.1f %% against a floor of %.1f %%: %s; want %s", m.Series, m.Change*100, m.Floor*100, m.Verdict, tc.expect)
					}
				}
			}
			if !found {
				t.Fatal("no headline mover")
			}
		})
	}
}
