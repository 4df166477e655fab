//go:build !linux

package target

import (
	"os/exec"

	"github.com/tandem-bench/tandem/internal/host"
)

// startPinned starts cmd; asked to pin it, it refuses: CPU pinning needs
// Linux.
func startPinned(cmd *exec.Cmd, cpus []int, _ <-chan struct{}) error {
	if len(cpus) > 0 {
		return host.ErrPinning
	}
	return cmd.Start()
}
