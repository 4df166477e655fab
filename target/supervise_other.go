//go:build !linux

package target

import (
	"context"
	"os/exec"
	"syscall"
	"time"
)

// supervised returns a launch that runs argv directly, in a process group
// of its own, in dir with env added to tandem's environment. Only Linux has
// a supervisor (it needs the kernel's parent-death signal): here a target
// that tandem does not stop itself, because tandem was killed, keeps
// running.
func supervised(ctx context.Context, argv []string, dir string, env []string) (*launch, error) {
	path, err := commandPath(argv[0], dir)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), env...)
	cmd.SysProcAttr = groupAttr()
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return &launch{cmd: cmd}, nil
}
