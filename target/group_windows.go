package target

import (
	"errors"
	"os"
	"syscall"
)

// groupAttr starts a command in a process group of its own.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// signalGroup ends the process pid: Windows has no signals to send, so
// SIGTERM and SIGKILL both terminate it at once (its children are not
// reached).
func signalGroup(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// pauseGroup cannot pause a process: Windows has no SIGSTOP.
func pauseGroup(int, bool) error {
	return errors.New("pausing a target needs SIGSTOP, which Windows does not have")
}
