package changepoint

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// series makes runs of a benchmark: each run's level is the true level
// (times step from run at on) with run-to-run noise, and rounds around it.
func series(rng *rand.Rand, runs, rounds int, runNoise, roundNoise float64, at int, step float64) []Run {
	out := make([]Run, runs)
	for i := range out {
		level := 1000.0
		if at >= 0 && i >= at {
			level *= step
		}
		level *= math.Exp(rng.NormFloat64() * runNoise)
		vs := make([]float64, rounds)
		for j := range vs {
			vs[j] = level * math.Exp(rng.NormFloat64()*roundNoise)
		}
		out[i] = Run{Values: vs}
	}
	return out
}

// simulate runs the detector over many seeded series and counts the
// change points found, and those within ±1 run of at.
func simulate(t *testing.T, n, runs, rounds int, runNoise float64, at int, step float64) (found, near, series_ int) {
	t.Helper()
	for seed := range uint64(n) {
		rng := rand.New(rand.NewPCG(seed, 7))
		cs, err := Detect(series(rng, runs, rounds, runNoise, 0.02, at, step), Options{})
		if err != nil {
			t.Fatal(err)
		}
		found += len(cs)
		for _, c := range cs {
			if at >= 0 && c.Index >= at-1 && c.Index <= at+1 {
				near++
				break
			}
		}
	}
	return found, near, n
}

// On stationary noise (runs varying 3 % from one to the next, the busy
// machine's figure) the detector calls at most one change per 100 runs
// (docs/history.md records the rate).
func TestStationaryNoiseFalseAlarms(t *testing.T) {
	for _, noise := range []float64{0.01, 0.03, 0.05} {
		found, _, n := simulate(t, 100, 30, 10, noise, -1, 1)
		rate := float64(found) / float64(n*30) * 100
		t.Logf("run noise %.0f %%: %d change points over %d runs (%.2f per 100 runs)", noise*100, found, n*30, rate)
		if rate > 1 {
			t.Errorf("run noise %.0f %%: %.2f false change points per 100 runs; want at most 1", noise*100, rate)
		}
	}
}

// A +10 % step three runs before the end of 23 is found at its run ±1 in at
// least 95 % of series at 2 % run noise; +5 % with ten runs after it at 1 %.
func TestStepFound(t *testing.T) {
	for _, tc := range []struct {
		name     string
		runs, at int
		step     float64
		noise    float64
		want     float64
	}{
		{"+10 % three runs before the end", 23, 20, 1.10, 0.02, 0.95},
		{"−10 % (an improvement) three runs before the end", 23, 20, 0.90, 0.02, 0.95},
		{"+5 % ten runs before the end", 30, 20, 1.05, 0.01, 0.95},
	} {
		_, near, n := simulate(t, 100, tc.runs, 10, tc.noise, tc.at, tc.step)
		t.Logf("%s: found at its run ±1 in %d of %d", tc.name, near, n)
		if float64(near) < tc.want*float64(n) {
			t.Errorf("%s: found in %d of %d; want at least %.0f %%", tc.name, near, n, tc.want*100)
		}
	}
}

// Two steps are two change points, each with its ratio and an interval
// around it; the same series gives the same answer every time.
func TestTwoStepsAndDeterminism(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 1))
	runs := series(rng, 40, 10, 0.01, 0.02, -1, 1)
	for i := range runs {
		for j := range runs[i].Values {
			switch {
			case i >= 30:
				runs[i].Values[j] *= 1.2 * 0.8
			case i >= 15:
				runs[i].Values[j] *= 1.2
			}
		}
	}
	cs, err := Detect(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Index != 15 || cs[1].Index != 30 {
		t.Fatalf("changes %+v; want at runs 15 and 30", cs)
	}
	if r := cs[0].Ratio; r < 1.15 || r > 1.25 || cs[0].Lo > r || cs[0].Hi < r || cs[0].Lo <= 1 {
		t.Errorf("first change ratio %.3f [%.3f … %.3f]; want about 1.2, the interval above 1", r, cs[0].Lo, cs[0].Hi)
	}
	if r := cs[1].Ratio; r < 0.75 || r > 0.85 || cs[1].Hi >= 1 {
		t.Errorf("second change ratio %.3f [%.3f … %.3f]; want about 0.8", r, cs[1].Lo, cs[1].Hi)
	}
	again, _ := Detect(runs, Options{})
	if len(again) != len(cs) || again[0] != cs[0] || again[1] != cs[1] {
		t.Errorf("a second Detect gave %+v, the first %+v", again, cs)
	}
}

// A shift inside the noise floor is not a change point however sure; the
// newest run can start one with MinRuns 1.
func TestFloorAndNewestRun(t *testing.T) {
	flat := make([]Run, 30)
	for i := range flat {
		v := 1000.0
		if i >= 15 {
			v = 1010 // +1 %: certain, and below the 2 % floor
		}
		flat[i] = Run{Values: []float64{v * 0.999, v, v * 1.001}}
	}
	if cs, _ := Detect(flat, Options{}); len(cs) != 0 {
		t.Errorf("a 1 %% shift: %+v; want none (below the floor)", cs)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	runs := series(rng, 20, 10, 0.01, 0.02, 19, 1.3)
	cs, _ := Detect(runs, Options{MinRuns: 1})
	if len(cs) != 1 || cs[0].Index != 19 || cs[0].RunsRight != 1 {
		t.Errorf("a +30 %% newest run with MinRuns 1: %+v; want a change at run 19", cs)
	}
	if cs, _ := Detect(runs, Options{}); len(cs) != 0 {
		t.Errorf("the same with MinRuns 2: %+v; want none (one run after)", cs)
	}
}

func TestBadValues(t *testing.T) {
	for _, vs := range [][]float64{nil, {0}, {-1, 2}, {math.NaN()}, {math.Inf(1)}} {
		if _, err := Detect([]Run{{Values: []float64{1}}, {Values: vs}}, Options{}); !errors.Is(err, ErrValue) {
			t.Errorf("values %v: %v; want ErrValue", vs, err)
		}
	}
}
