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
