package target

import (
	"fmt"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// startPinned starts cmd from a thread pinned to cpus, so the child and
// everything it starts inherit the CPU set from its first instruction. The
// thread's own CPU set is restored right after the fork. The goroutine stays
// locked to that thread while the child lives, because Pdeathsig follows
// the thread that forked.
func startPinned(cmd *exec.Cmd, cpus []int, done <-chan struct{}) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var orig, set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &orig); err != nil {
			errc <- fmt.Errorf("read CPU set: %w", err)
			return
		}
		for _, c := range cpus {
			set.Set(c)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			errc <- fmt.Errorf("pin to CPUs %v: %w", cpus, err)
			return
		}
		err := cmd.Start()
		if rerr := unix.SchedSetaffinity(0, &orig); rerr != nil && err == nil {
			err = fmt.Errorf("restore CPU set: %w", rerr)
		}
		errc <- err
		if err == nil {
			<-done
		}
	}()
	return <-errc
}
