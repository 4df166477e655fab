//go:build !linux

package main

import (
	"errors"
	"time"
)

// openFloor is Linux's only (raw system calls on the sockets).
func openFloor(addr string, rate, conns int, d time.Duration) (sent, answered int64, lag time.Duration, err error) {
	return 0, 0, 0, errors.New("--open-floor: Linux only")
}
