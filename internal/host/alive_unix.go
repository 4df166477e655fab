//go:build unix

package host

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// ProcessAlive reports whether a process with this pid exists (one of
// another user counts: it is not ours to judge).
func ProcessAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
