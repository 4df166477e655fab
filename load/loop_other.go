//go:build !linux

package load

import (
	"context"

	"github.com/tandem-bench/tandem/results"
)

func (o Open) runLoop(context.Context, Wire) (results.Sample, error) {
	return results.Sample{}, errLoopLinux
}

func (c Closed) runLoop(context.Context, Wire) (results.Sample, error) {
	return results.Sample{}, errLoopLinux
}

// alarm is the runtime's timers here; Linux uses a timerfd.
type alarm = timerAlarm

func newAlarm() (*alarm, error) { return newTimerAlarm(), nil }
