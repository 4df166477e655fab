package host

import (
	"fmt"
	"time"

	"golang.org/x/sys/windows"
)

// CPUTime is the CPU time (user and kernel) this process has used.
func CPUTime() (time.Duration, error) {
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user); err != nil {
		return 0, err
	}
	// FILETIME counts 100 ns intervals
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration(ticks(kernel)+ticks(user)) * 100, nil
}

// Kernel is Windows' version ("10.0.22631").
func Kernel() string {
	v := windows.RtlGetVersion()
	return fmt.Sprintf("%d.%d.%d", v.MajorVersion, v.MinorVersion, v.BuildNumber)
}
