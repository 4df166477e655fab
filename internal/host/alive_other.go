//go:build !unix

package host

import (
	"io/fs"
	"os"
)

// ProcessAlive reports whether a process with this pid exists.
func ProcessAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// ownedByMe is true here: the OS keeps a user's temporary directory its own.
func ownedByMe(fs.FileInfo) bool { return true }
