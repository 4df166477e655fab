//go:build !unix

package study

// openFileLimit is the process's open-file limit: unknown here, so only
// MaxConnections bounds a load.
func openFileLimit() (int, bool) { return 0, false }
