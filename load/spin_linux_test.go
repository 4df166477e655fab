package load

import (
	"testing"
	"time"
)

// A closed loop polls before it sleeps only with few requests in flight
// and while answers come, on average, within twice spinMax: a slow server
// turns the polls off within a few answers, a fast one on again.
func TestSpins(t *testing.T) {
	for _, c := range []struct {
		name  string
		inUse int
		waits []time.Duration
		want  bool
	}{
		{"a fresh loop, one in flight", 1, nil, true},
		{"one in flight, fast answers", 1, repeat(20*time.Microsecond, 50), true},
		{"spinInFlight in flight", spinInFlight, repeat(20*time.Microsecond, 50), true},
		{"more in flight than spinInFlight", spinInFlight + 1, nil, false},
		{"a slow server: one 2 ms answer", 1, []time.Duration{2 * time.Millisecond}, false},
		{"a slow server, then fast again", 1, append(repeat(2*time.Millisecond, 20), repeat(20*time.Microsecond, 40)...), true},
		{"answers at twice spinMax", 1, repeat(2*spinMax, 100), true},
		{"answers just past twice spinMax", 1, repeat(2*spinMax+10*time.Microsecond, 100), false},
	} {
		l := &eventLoop{inUse: c.inUse}
		for _, d := range c.waits {
			l.waited(d)
		}
		if got := l.spins(); got != c.want {
			t.Errorf("%s: spins %v (average wait %v); want %v", c.name, got, l.waitAvg, c.want)
		}
		if l.waitAvg < 0 {
			t.Errorf("%s: average wait %v", c.name, l.waitAvg)
		}
	}
}

func repeat(d time.Duration, n int) []time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = d
	}
	return ds
}
