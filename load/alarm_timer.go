package load

import (
	"context"
	"time"
)

// timerAlarm wakes one goroutine at a time through the runtime's timers,
// which may wake up to a millisecond late when the process is idle; it is
// the alarm where there is no timerfd.
type timerAlarm struct {
	t *time.Timer
}

func newTimerAlarm() *timerAlarm {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &timerAlarm{t: t}
}

// wait returns at t (false if ctx ended first).
func (a *timerAlarm) wait(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	a.t.Reset(d)
	select {
	case <-ctx.Done():
		a.t.Stop()
		return false
	case <-a.t.C:
		return true
	}
}

func (a *timerAlarm) close() { a.t.Stop() }
