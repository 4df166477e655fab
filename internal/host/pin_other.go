//go:build !linux

package host

// PinProcess returns ErrPinning: threads are pinned on Linux only.
func PinProcess([]int) error { return ErrPinning }
