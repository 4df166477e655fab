package host

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// PinProcess pins every thread of this process to cpus; threads created
// later inherit the set from their creator. The returned function gives
// every thread back the set the calling thread had before, so a library
// caller's process is not left pinned.
func PinProcess(cpus []int) (restore func() error, err error) {
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		return nil, err
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if err := setAll(&set); err != nil {
		return nil, err
	}
	return func() error { return setAll(&before) }, nil
}

// AllowedCPUs lists the CPUs the calling thread may run on (its affinity
// mask: the process's, unless its threads were pinned apart), in order.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("CPU affinity: %w", err)
	}
	cpus := make([]int, 0, set.Count())
	for c := 0; len(cpus) < cap(cpus); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// setAll sets the affinity of every thread of this process.
func setAll(set *unix.CPUSet) error {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, e := range entries {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return err
		}
	}
	return nil
}
