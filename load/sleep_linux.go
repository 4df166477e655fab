package load

import (
	"context"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// precise returns a sleeper for the pacer goroutine. The Go runtime's
// timers wake up to a millisecond late (its poller waits in whole
// milliseconds), which would show as schedule lag the target never caused.
// The pacer instead locks its goroutine to a thread, sets that thread's
// timer slack to 1 ns and sleeps in nanosleep(2), in slices of at most
// 10 ms so that cancellation is seen promptly. The returned release undoes
// the lock.
func precise() (sleep func(ctx context.Context, until time.Time) bool, release func()) {
	runtime.LockOSThread()
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	sleep = func(ctx context.Context, until time.Time) bool {
		for {
			if ctx.Err() != nil {
				return false
			}
			d := time.Until(until)
			if d <= 0 {
				return true
			}
			d = min(d, 10*time.Millisecond)
			ts := unix.NsecToTimespec(int64(d))
			unix.Nanosleep(&ts, nil)
		}
	}
	// The thread keeps its 1 ns slack; unlocking returns it to the pool,
	// where a finer timer slack harms nothing.
	return sleep, runtime.UnlockOSThread
}
