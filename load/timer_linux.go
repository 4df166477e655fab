package load

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tandem-bench/tandem/internal/rawclock"
	"golang.org/x/sys/unix"
)

// alarm wakes one goroutine at a precise time. It is a timerfd(2) read
// through Go's netpoller: the goroutine parks like on any socket, and the
// kernel's high-resolution timer makes the poller return on time, where the
// runtime's own timers can wake up to a millisecond late when the process
// is idle (the poller waits in whole milliseconds). One wake-up per
// arrival, no extra thread.
type alarm struct {
	fd  int // kept apart: File.Fd would switch the file to blocking mode
	f   *os.File
	buf [8]byte
}

func newAlarm() (*alarm, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd: %w", err)
	}
	return &alarm{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}, nil
}

// wait returns at t (false if ctx ended first). Waits are cut into slices
// of at most 50 ms so that cancellation is seen promptly.
func (a *alarm) wait(ctx context.Context, t time.Time) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		d = min(d, 50*time.Millisecond)
		at := unix.NsecToTimespec(int64(rawclock.Now() + d))
		spec := unix.ItimerSpec{Value: at}
		if err := unix.TimerfdSettime(a.fd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
			time.Sleep(d) // cannot happen with a valid fd; fall back to a coarse wait
			continue
		}
		// Read tries once, then parks on the poller. (Skipping that first
		// read is not safe: preparing a read resets a readiness the poller
		// has already seen, and the wake-up would be lost.)
		if _, err := a.f.Read(a.buf[:]); err != nil {
			return ctx.Err() == nil
		}
	}
}

func (a *alarm) close() { a.f.Close() }
