//go:build !race

package load_test

const raceSlack = 0

// raceEnabled says whether the race detector slows this test binary.
const raceEnabled = false
