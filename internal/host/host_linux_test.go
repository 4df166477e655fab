package host

import (
	"runtime"
	"slices"
	"testing"
)

// affinity is the CPU set of the calling thread.
func affinity(t *testing.T) []int {
	t.Helper()
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
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
	if len(before) != runtime.NumCPU() {
		t.Errorf("AllowedCPUs = %v; want %d CPUs, as runtime.NumCPU says", before, runtime.NumCPU())
	}
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
