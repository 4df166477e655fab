//go:build unix

package target

import "syscall"

// groupAttr starts a command in a process group of its own.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

// pauseGroup stops (SIGSTOP) or resumes (SIGCONT) the process group led by
// pid.
func pauseGroup(pid int, stop bool) error {
	sig := syscall.SIGCONT
	if stop {
		sig = syscall.SIGSTOP
	}
	return syscall.Kill(-pid, sig)
}
