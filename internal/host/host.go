// Package host reads what tandem needs to know about the machine it runs
// on (its own CPU time, the kernel) and pins threads to CPU cores, with a
// portable answer where an operating system offers no such thing.
package host

import (
	"fmt"
	"runtime"
)

// ErrPinning is the answer of PinProcess where threads cannot be pinned.
var ErrPinning = fmt.Errorf("CPU pinning needs Linux (this is %s)", runtime.GOOS)
