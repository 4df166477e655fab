package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// A target does not run as tandem's direct child: a supervisor does, a
// second copy of the running binary that starts the target in its own
// process group and stays beside it. The kernel tells the supervisor when
// tandem dies, however it dies (SIGKILL included: the supervisor's parent
// death signal is SIGHUP), and the supervisor then kills the whole group,
// so the children of a wrapper script or an init command never outlive
// tandem. When the target exits by itself the supervisor kills what it
// left behind in the group and exits with the target's status.
//
// The supervisor is this package's init function: any binary that imports
// the package (tandem, and its test binaries) can serve as one.

// startedFD is the supervisor's descriptor on which it reports, with one
// byte, that the target has started.
const startedFD = 3

// superviseEnv carries the supervisor's mode to the re-executed binary; it
// is removed before the target starts.
const superviseEnv = "TANDEM_TARGET_SUPERVISOR"

func init() {
	if os.Getenv(superviseEnv) != "1" {
		return
	}
	os.Exit(supervise(os.Args[1:]))
}

// supervised returns a launch that runs argv under a supervisor, in a
// process group of its own, in dir with env added to tandem's environment;
// the supervisor reports the target's start on a pipe (one byte; EOF if it
// could not start it). The command's path is resolved as exec.Command
// would, against tandem's PATH.
func supervised(ctx context.Context, argv []string, dir string, env []string) (*launch, error) {
	path, err := commandPath(argv[0], dir)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find tandem's own binary to supervise %s: %w", argv[0], err)
	}
	startedR, startedW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, append([]string{path}, argv...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), superviseEnv+"=1")
	cmd.SysProcAttr = groupAttr()
	cmd.SysProcAttr.Pdeathsig = syscall.SIGHUP
	// cancelled: the whole group at once, not only the supervisor
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	cmd.ExtraFiles = []*os.File{startedW} // the supervisor's startedFD
	return &launch{cmd: cmd, startedR: startedR, startedW: startedW}, nil
}

// supervise runs args[1:] (whose binary is at args[0]) in the supervisor's
// process group and returns its exit status; see the package comment above.
func supervise(args []string) int {
	os.Unsetenv(superviseEnv)
	// the group it kills must be its own: never its parent's
	if syscall.Getpgrp() != os.Getpid() {
		if err := syscall.Setpgid(0, 0); err != nil {
			fmt.Fprintf(os.Stderr, "tandem supervisor: a process group of its own: %v\n", err)
			return 2
		}
	}
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "tandem supervisor: no command")
		return 2
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	// fd 3 tells tandem the moment the target started, so its startup
	// times do not include the supervisor's own start
	syscall.CloseOnExec(startedFD)
	started := os.NewFile(startedFD, "started")
	cmd := &exec.Cmd{Path: args[0], Args: args[1:], Env: os.Environ(), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "tandem supervisor: start %s: %v\n", args[1], err)
		return 127
	}
	started.Write([]byte{1})
	started.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			if s == syscall.SIGHUP { // tandem is gone
				killGroup()
				return 129
			}
			// SIGTERM or SIGINT went to the whole group, the target too:
			// wait for it to exit
		case err := <-done:
			killGroup() // what the target left behind
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					// said in the target's output, since the status can only
					// be the shell's 128 + n: raising the signal here would
					// meet the Go runtime's handler, not the default action
					fmt.Fprintf(os.Stderr, "tandem supervisor: the target was killed by signal %d (%v)\n", ws.Signal(), ws.Signal())
					return 128 + int(ws.Signal())
				}
				return exit.ExitCode()
			}
			if err != nil {
				return 1
			}
			return 0
		}
	}
}

// killGroup sends SIGKILL to every other process of the caller's process
// group.
func killGroup() {
	self, pgid := os.Getpid(), syscall.Getpgrp()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if st, ok := readStat(pid); ok && st.pgrp == pgid {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
