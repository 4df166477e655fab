package host

import (
	"runtime"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// affinity is the CPU set of the calling thread.
func affinity(t *testing.T) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for c := range 1024 {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

func TestKernelAndPinning(t *testing.T) {
	if Kernel() == "" {
		t.Error("Kernel is empty on Linux")
	}
	runtime.LockOSThread() // affinity is per thread: ask the same one
	defer runtime.UnlockOSThread()
	before := affinity(t)
	restore, err := PinProcess(before[len(before)-1:])
	if err != nil {
		t.Fatal(err)
	}
	if got := affinity(t); !slices.Equal(got, before[len(before)-1:]) {
		t.Errorf("pinned to %v, want %v", got, before[len(before)-1:])
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if got := affinity(t); !slices.Equal(got, before) {
		t.Errorf("after restore: %v, want %v as before", got, before)
	}
	if _, err := PinProcess([]int{1 << 20}); err == nil {
		t.Error("pinning to a core that does not exist: no error")
	}
}
