//go:build unix

package host

import (
	"time"

	"golang.org/x/sys/unix"
)

// CPUTime is the CPU time (user and system) this process has used.
func CPUTime() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// Kernel is the kernel's release ("6.8.0-45-generic"), "" if unknown.
func Kernel() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}
