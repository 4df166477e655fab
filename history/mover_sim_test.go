package history

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tandem-bench/tandem/stats"
)

// TestMoverVerdictErrorRates measures top movers' verdict by seeded
// simulation: runs of five rounds each, every round's value lognormal
// around its run's level, the newest run's level shifted by a step.
// Noise within a run (the rounds' spread) is what the interval sees;
// noise between runs (a machine's day) it cannot see, and only the floor
// keeps it from being called a change: the 2 % floor alone, or with the
// series' history (earlier runs), a floor raised to their scatter. The
// rates are in docs/history.md; the bounds here hold with room for the
// seeds.
func TestMoverVerdictErrorRates(t *testing.T) {
	const trials = 2000
	for _, tc := range []struct {
		name          string
		rounds, runs  float64 // noise: rounds' within a run, runs' between runs (log sd)
		history       int     // earlier runs known besides the one before
		step          float64
		maxSpeed      float64 // at most this share called slower or faster (no step)
		minSlower     float64 // at least this share called slower (a step)
		maxWrongSided float64
	}{
		{"A/A, 2 % rounds, 2 runs", 0.02, 0, 0, 0, 0.05, 0, 0},
		{"A/A, 2 % rounds, 10 runs", 0.02, 0, 8, 0, 0.05, 0, 0},
		{"A/A, 2 % rounds, 2 % runs, 2 runs", 0.02, 0.02, 0, 0, 0.40, 0, 0},
		{"A/A, 2 % rounds, 2 % runs, 10 runs", 0.02, 0.02, 8, 0, 0.05, 0, 0},
		{"+5 %, 2 % rounds, 10 runs", 0.02, 0, 8, 0.05, 1, 0.25, 0},
		{"+10 %, 2 % rounds, 10 runs", 0.02, 0, 8, 0.10, 1, 0.95, 0},
		{"+10 %, 2 % rounds, 2 % runs, 2 runs", 0.02, 0.02, 0, 0.10, 1, 0.8, 0.01},
		{"+10 %, 2 % rounds, 2 % runs, 10 runs", 0.02, 0.02, 8, 0.10, 1, 0.5, 0.01},
	} {
		rng := rand.New(rand.NewPCG(17, uint64(tc.step*1000)+uint64(tc.runs*1e4)+uint64(tc.history)<<20))
		run := func(level float64) Point {
			p := Point{Direction: "lower"}
			lv := level + rng.NormFloat64()*tc.runs
			for range 5 {
				p.Rounds = append(p.Rounds, 100*math.Exp(lv+rng.NormFloat64()*tc.rounds))
			}
			p.Value = p.Rounds[2]
			return p
		}
		counts := map[stats.Verdict]int{}
		for range trials {
			var earlier []float64
			for range tc.history {
				earlier = append(earlier, run(0).Value)
			}
			before := run(0)
			counts[moverVerdict(before, run(math.Log1p(tc.step)), runFloor(append(earlier, before.Value)))]++
		}
		speed := float64(counts[stats.Slower]+counts[stats.Faster]) / trials
		slower := float64(counts[stats.Slower]) / trials
		faster := float64(counts[stats.Faster]) / trials
		t.Logf("%s: slower %.1f %%, faster %.1f %%, indistinguishable %.1f %%, inconclusive %.1f %% of %d", tc.name,
			100*slower, 100*faster, 100*float64(counts[stats.Indistinguishable])/trials, 100*float64(counts[stats.Inconclusive])/trials, trials)
		if tc.step == 0 && speed > tc.maxSpeed {
			t.Errorf("%s: %.1f %% called a change; want at most %.0f %%", tc.name, 100*speed, 100*tc.maxSpeed)
		}
		if tc.step > 0 && (slower < tc.minSlower || faster > tc.maxWrongSided) {
			t.Errorf("%s: slower %.1f %%, faster %.1f %%; want at least %.0f %% slower, at most %.0f %% faster", tc.name,
				100*slower, 100*faster, 100*tc.minSlower, 100*tc.maxWrongSided)
		}
	}
}
