//go:build unix

package study

import (
	"math"
	"syscall"
)

// openFileLimit is the process's open-file limit (the soft RLIMIT_NOFILE,
// which Go raises to the hard one at start-up), or false if it is unknown
// or unlimited.
func openFileLimit() (int, bool) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, false
	}
	cur := uint64(lim.Cur)
	if cur == 0 || cur >= math.MaxInt32 {
		return 0, false // RLIM_INFINITY, or as good as
	}
	return int(cur), true
}
