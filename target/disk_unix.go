//go:build unix

package target

import (
	"io/fs"
	"syscall"
)

// fileID names a file apart from its links.
type fileID struct{ dev, ino uint64 }

// allocated is a file's identity and the bytes of the blocks it holds
// (st_blocks counts 512-byte units on every Unix).
func allocated(info fs.FileInfo) (fileID, int64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, 0, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, int64(st.Blocks) * 512, true
}
