//go:build unix

package results

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this pid exists (one of
// another user counts: it is not ours to judge).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
