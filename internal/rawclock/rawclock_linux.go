package rawclock

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Now is CLOCK_MONOTONIC's time.
func Now() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return time.Duration(ts.Nano())
}

// SleepUntil sleeps until the monotonic time t (clock_nanosleep,
// absolute, the thread's timer slack), as a raw system call; a signal
// that interrupts it early sleeps again.
func SleepUntil(t time.Duration) {
	ts := unix.NsecToTimespec(int64(t))
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		if e != unix.EINTR || Now() >= t {
			return
		}
	}
}
