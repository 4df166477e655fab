//go:build race

package load_test

// raceSlack is the extra per-request cost of the race detector's
// instrumentation, allowed on top of the accuracy bounds.
const raceSlack = 400_000 // ns

// raceEnabled says whether the race detector slows this test binary.
const raceEnabled = true
