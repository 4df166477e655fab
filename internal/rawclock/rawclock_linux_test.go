package rawclock

import (
	"testing"
	"time"
)

// SleepUntil never returns before its time, and the clock never runs
// backwards.
func TestSleepUntil(t *testing.T) {
	for _, d := range []time.Duration{-time.Millisecond, 0, 50 * time.Microsecond, 2 * time.Millisecond} {
		at := Now() + d
		SleepUntil(at)
		if now := Now(); now < at {
			t.Errorf("SleepUntil(now%+v) returned %v early", d, at-now)
		}
	}
	a := Now()
	if b := Now(); b < a {
		t.Errorf("the clock ran backwards: %v then %v", a, b)
	}
}
