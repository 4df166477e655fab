//go:build !unix && !windows

package host

import (
	"errors"
	"time"
)

// errNoCPUTime is CPUTime's answer where the OS does not report it.
var errNoCPUTime = errors.New("this OS does not report a process's CPU time")

// CPUTime is the CPU time this process has used; unknown here.
func CPUTime() (time.Duration, error) { return 0, errNoCPUTime }

// Kernel is "" here: unknown.
func Kernel() string { return "" }
