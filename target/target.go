// Package target starts a build under test from empty and watches it: it
// wipes the data paths, starts the command (argv, no shell) pinned to its
// CPUs, keeps the last lines of its output, samples its process tree from
// /proc, and stops it with SIGTERM, then SIGKILL after a grace period.
package target

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Spec says how to start a target.
type Spec struct {
	Name    string
	Command []string
	Dir     string
	// Env is added to tandem's own environment.
	Env  []string
	Wipe []string
	// Init commands run to completion, in order, after the wipe.
	Init [][]string
	CPUs []int
	// ReadyLine, if set, is watched for in the output: LineSeen is closed
	// at the first line that matches.
	ReadyLine *regexp.Regexp
}

// Process is a running target.
type Process struct {
	Name    string
	Started time.Time
	cmd     *exec.Cmd
	log     *tail
	done    chan struct{}
	waitErr error
	sampler *sampler
}

// ExitError is a target's unexpected exit, with its last output lines.
type ExitError struct {
	Name  string
	State string
	Tail  []string
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("target %s exited: %s", e.Name, e.State)
	if len(e.Tail) > 0 {
		msg += "; last output:\n    " + strings.Join(e.Tail, "\n    ")
	}
	return msg
}

// Start wipes spec's paths and starts the command. The process is in its
// own process group so Stop reaches its children too.
func Start(spec Spec) (*Process, error) {
	if len(spec.Command) == 0 {
		return nil, fmt.Errorf("target %s: empty command", spec.Name)
	}
	for _, w := range spec.Wipe {
		if w == "" || filepath.Clean(w) == "/" {
			return nil, fmt.Errorf("target %s: refusing to wipe %q", spec.Name, w)
		}
		if err := os.RemoveAll(w); err != nil {
			return nil, fmt.Errorf("target %s: wipe %s: %w", spec.Name, w, err)
		}
	}
	for _, ic := range spec.Init {
		init := spec
		init.Name = "target " + spec.Name + ": init"
		if err := RunOnce(context.Background(), init, ic); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = append(os.Environ(), spec.Env...)
	lt := newTail(40)
	lt.watch, lt.seen = spec.ReadyLine, make(chan struct{})
	cmd.Stdout, cmd.Stderr = lt, lt
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	done := make(chan struct{})
	if err := startPinned(cmd, spec.CPUs, done); err != nil {
		return nil, fmt.Errorf("start target %s: %w", spec.Name, err)
	}
	p := &Process{Name: spec.Name, Started: time.Now(), cmd: cmd, log: lt, done: done}
	p.sampler = startSampler(cmd.Process.Pid, p.done)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// initTimeout bounds one init command.
const initTimeout = 5 * time.Minute

// RunOnce runs argv to completion in spec's dir and environment, within
// ctx and at most 5 minutes; a failure carries the last lines of its
// output.
func RunOnce(ctx context.Context, spec Spec, argv []string) error {
	ctx, cancel := context.WithTimeout(ctx, initTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = append(os.Environ(), spec.Env...)
	lt := newTail(20)
	cmd.Stdout, cmd.Stderr = lt, lt
	if err := cmd.Run(); err != nil {
		msg := fmt.Sprintf("%s: %s: %v", spec.Name, strings.Join(argv, " "), err)
		if lines := lt.lines(); len(lines) > 0 {
			msg += "; last output:\n    " + strings.Join(lines, "\n    ")
		}
		return errors.New(msg)
	}
	return nil
}

// startPinned starts cmd from a thread pinned to cpus, so the child and
// everything it starts inherit the CPU set from its first instruction. The
// thread's own CPU set is restored right after the fork. The goroutine stays
// locked to that thread while the child lives, because Pdeathsig follows
// the thread that forked.
func startPinned(cmd *exec.Cmd, cpus []int, done <-chan struct{}) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var orig, set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &orig); err != nil {
			errc <- fmt.Errorf("read CPU set: %w", err)
			return
		}
		for _, c := range cpus {
			set.Set(c)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			errc <- fmt.Errorf("pin to CPUs %v: %w", cpus, err)
			return
		}
		err := cmd.Start()
		if rerr := unix.SchedSetaffinity(0, &orig); rerr != nil && err == nil {
			err = fmt.Errorf("restore CPU set: %w", rerr)
		}
		errc <- err
		if err == nil {
			<-done
		}
	}()
	return <-errc
}

// Pid is the target's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitErr describes the exit of a process that has ended.
func (p *Process) ExitErr() *ExitError {
	state := "exit status 0"
	if p.cmd.ProcessState != nil {
		state = p.cmd.ProcessState.String()
	} else if p.waitErr != nil {
		state = p.waitErr.Error()
	}
	return &ExitError{Name: p.Name, State: state, Tail: p.log.lines()}
}

// LineSeen is closed once an output line matched Spec.ReadyLine.
func (p *Process) LineSeen() <-chan struct{} { return p.log.seen }

// Tail returns the last lines the process wrote.
func (p *Process) Tail() []string { return p.log.lines() }

// Usage returns the CPU time and the peak resident memory of the process
// tree so far.
func (p *Process) Usage() (cpu time.Duration, peakRSS int64) {
	p.sampler.sample(p.Pid())
	return p.sampler.usage()
}

// StopSampling ends the background sampling of /proc (every 50 ms), so
// that it does not take the generator's CPU during measured rounds.
func (p *Process) StopSampling() { p.sampler.halt() }

// Stop sends SIGTERM to the process group and SIGKILL after grace.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	syscall.Kill(-p.Pid(), syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
		syscall.Kill(-p.Pid(), syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("target %s: killed after %v without exiting on SIGTERM", p.Name, grace)
	}
}

// DiskUsage is the total size of the regular files under dir.
func DiskUsage(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	return total, err
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Wait blocks until ctx ends or the process exits; an exit is an
// *ExitError.
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-p.done:
		return p.ExitErr()
	}
}

// tail keeps the last n lines written to it.
type tail struct {
	mu      sync.Mutex
	n       int
	buf     []string
	partial []byte
	watch   *regexp.Regexp
	seen    chan struct{}
	matched bool
}

func newTail(n int) *tail { return &tail{n: n} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	data := append(t.partial, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		line := string(data[:i])
		if t.watch != nil && !t.matched && t.watch.MatchString(line) {
			t.matched = true
			close(t.seen)
		}
		t.buf = append(t.buf, line)
		if len(t.buf) > t.n {
			t.buf = t.buf[len(t.buf)-t.n:]
		}
		data = data[i+1:]
	}
	if len(data) > 4096 {
		data = data[len(data)-4096:]
	}
	t.partial = append([]byte(nil), data...)
	return len(p), nil
}

func (t *tail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.buf...)
	if len(t.partial) > 0 {
		out = append(out, string(t.partial))
	}
	if len(out) > 10 {
		out = out[len(out)-10:]
	}
	return out
}
