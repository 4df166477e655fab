package host

import (
	"runtime"
	"testing"
	"time"
)

func TestCPUTimeGrows(t *testing.T) {
	before, err := CPUTime()
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++ // burn CPU: the count grows with it
	}
	after, err := CPUTime()
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Fatalf("CPU time did not grow across %d iterations of a busy loop: %v then %v", x, before, after)
	}
}

func TestPinningElsewhere(t *testing.T) {
	if runtime.GOOS == "linux" {
		t.Skip("Linux pins: see host_linux_test.go")
	}
	if _, err := PinProcess([]int{0}); err != ErrPinning {
		t.Fatalf("PinProcess: %v, want ErrPinning", err)
	}
}
