//go:build !linux

package host

// PinProcess returns ErrPinning: threads are pinned on Linux only.
func PinProcess([]int) (restore func() error, err error) { return nil, ErrPinning }
