package host

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestKernelAndPinning(t *testing.T) {
	if Kernel() == "" {
		t.Error("Kernel is empty on Linux")
	}
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
	// to the cores it may already use: nothing changes for the rest of the
	// test binary, but every thread is set
	if err := PinProcess(cpus); err != nil {
		t.Fatal(err)
	}
	if err := PinProcess([]int{1 << 20}); err == nil {
		t.Error("pinning to a core that does not exist: no error")
	}
}
