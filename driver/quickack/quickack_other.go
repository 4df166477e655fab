//go:build !linux

package quickack

// set does nothing: only Linux has TCP_QUICKACK.
func (c Conn) set() {}
