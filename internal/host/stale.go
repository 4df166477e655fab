package host

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// StaleName is a name for something this process leaves in a shared
// directory (the system's temporary directory, an output directory):
// prefix, this process's pid, a dash. os.CreateTemp and os.MkdirTemp add
// a random nonce to it; RemoveStale can then tell a dead process's
// leftovers from anything else.
func StaleName(prefix string) string { return prefix + strconv.Itoa(os.Getpid()) + "-" }

// RemoveStale removes from dir what a process that ended without cleaning
// up left there under a StaleName(prefix) name: entries named prefix,
// PID, "-", a nonce of digits (and, if suffix is set, suffix), owned by
// this user, whose process is no longer running. It returns the names
// removed. Nothing else is touched: not another user's, not a live
// process's, not a name that merely looks alike.
func RemoveStale(dir, prefix, suffix string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if !Stale(path, prefix, suffix) {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			return removed, err
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}

// Stale reports whether path, named by StaleName(prefix) (a nonce of
// digits and suffix after it), is this user's (not a symlink) and its
// process is no longer running.
func Stale(path, prefix, suffix string) bool {
	pid, ok := StalePID(filepath.Base(path), prefix, suffix)
	if !ok || pid == os.Getpid() || ProcessAlive(pid) {
		return false
	}
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeSymlink == 0 && ownedByMe(fi)
}

// StalePID returns the pid in a name StaleName(prefix) made (followed by
// a nonce of digits and suffix), or false.
func StalePID(name, prefix, suffix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	if rest, ok = strings.CutSuffix(rest, suffix); !ok {
		return 0, false
	}
	pid, nonce, ok := strings.Cut(rest, "-")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || n <= 0 || nonce == "" || strings.Trim(nonce, "0123456789") != "" {
		return 0, false
	}
	return n, true
}
