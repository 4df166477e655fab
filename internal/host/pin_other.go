//go:build !linux

package host

// PinProcess returns ErrPinning: threads are pinned on Linux only.
func PinProcess([]int) (restore func() error, err error) { return nil, ErrPinning }

// AllowedCPUs returns ErrPinning: CPU sets are read on Linux only.
func AllowedCPUs() ([]int, error) { return nil, ErrPinning }
