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
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Spec says how to start a target.
type Spec struct {
	Name    string
	Command []string
	Dir     string
	// Env is added to tandem's own environment.
	Env []string
	// Wipe paths are removed before the start; each must stay under
	// WipeRoot, symlinks resolved, unless it is also in WipeOutside.
	Wipe        []string
	WipeRoot    string
	WipeOutside []string
	// Init commands run to completion, in order, after the wipe.
	Init [][]string
	CPUs []int
	// ReadyLine, if set, is watched for in the output: LineSeen is closed
	// at the first line that matches.
	ReadyLine *regexp.Regexp
	// Redact, if set, hides secrets in what errors say of the commands.
	Redact func(string) string
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

// Start wipes spec's paths, runs its init commands and starts the command
// under a supervisor, in a process group of its own: Stop reaches its
// children too, and nothing of it outlives tandem (see supervise.go).
// Cancelling ctx stops a running init command; the target, once started,
// lives until Stop.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if len(spec.Command) == 0 {
		return nil, fmt.Errorf("target %s: empty command", spec.Name)
	}
	for _, w := range spec.Wipe {
		if err := wipe(w, spec.WipeRoot, slices.Contains(spec.WipeOutside, w)); err != nil {
			return nil, fmt.Errorf("target %s: %w", spec.Name, err)
		}
	}
	for _, ic := range spec.Init {
		init := spec
		init.Name = "target " + spec.Name + ": init"
		if err := RunOnce(ctx, init, ic); err != nil {
			return nil, err
		}
	}
	l, err := supervised(context.Background(), spec.Command, spec.Dir, spec.Env)
	if err != nil {
		return nil, fmt.Errorf("start target %s: %w", spec.Name, err)
	}
	defer l.close()
	cmd := l.cmd
	lt := newTail(40)
	lt.watch, lt.seen = spec.ReadyLine, make(chan struct{})
	cmd.Stdout, cmd.Stderr = lt, lt
	done := make(chan struct{})
	err = startPinned(cmd, spec.CPUs, done)
	l.started()
	if err != nil {
		return nil, fmt.Errorf("start target %s: %w", spec.Name, err)
	}
	l.waitTarget()
	p := &Process{Name: spec.Name, Started: time.Now(), cmd: cmd, log: lt, done: done}
	p.sampler = startSampler(cmd.Process.Pid, p.done)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// wipe removes path, refusing / and, unless outside is set, any path that
// is not under root as written, has a ".." component or passes through a
// symlink on its way: the removal goes through an os.Root at root, so a
// link swapped in meanwhile cannot lead it out either. The last component,
// if a symlink, is removed as a link. Wiping root itself empties it.
func wipe(path, root string, outside bool) error {
	if path == "" || filepath.Clean(path) == "/" {
		return fmt.Errorf("refusing to wipe %q", path)
	}
	if outside {
		if err := os.RemoveAll(path); err != nil {
			return fmt.Errorf("wipe %s: %w", path, err)
		}
		return nil
	}
	if root == "" {
		return fmt.Errorf("refusing to wipe %s: no directory to keep it in", path)
	}
	rest, ok := strings.CutPrefix(path, strings.TrimRight(root, "/")+"/")
	if path == root || path == root+"/" {
		rest, ok = ".", true
	}
	if !ok || filepath.IsAbs(rest) {
		return fmt.Errorf("refusing to wipe %s: it is not under %s", path, root)
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if slices.Contains(parts, "..") {
		return fmt.Errorf("refusing to wipe %s: a .. component (a link before it would lead it out of %s)", path, root)
	}
	r, err := os.OpenRoot(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing there to remove
	}
	if err != nil {
		return fmt.Errorf("wipe %s: %w", path, err)
	}
	defer r.Close()
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		fi, err := r.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("wipe %s: %w", path, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("refusing to wipe %s: %s is a symlink (a wipe never goes through a link)", path, filepath.Join(root, dir))
		}
	}
	if rest == "." {
		return emptyDir(r, path)
	}
	if err := r.RemoveAll(strings.Join(parts, "/")); err != nil {
		return fmt.Errorf("wipe %s: %w", path, err)
	}
	return nil
}

// emptyDir removes everything in r's directory, keeping the directory.
func emptyDir(r *os.Root, path string) error {
	d, err := r.Open(".")
	if err != nil {
		return fmt.Errorf("wipe %s: %w", path, err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("wipe %s: %w", path, err)
	}
	for _, n := range names {
		if err := r.RemoveAll(n); err != nil {
			return fmt.Errorf("wipe %s: %w", path, err)
		}
	}
	return nil
}

// initTimeout bounds one init command.
const initTimeout = 5 * time.Minute

// RunOnce runs argv to completion in spec's dir and environment, within
// ctx and at most 5 minutes, supervised like a target: when ctx ends, it and
// everything it started are killed. A failure carries the last lines of its
// output; a cancellation is ctx's error.
func RunOnce(ctx context.Context, spec Spec, argv []string) error {
	ctx, cancel := context.WithTimeout(ctx, initTimeout)
	defer cancel()
	if len(argv) == 0 {
		return fmt.Errorf("%s: empty command", spec.Name)
	}
	l, err := supervised(ctx, argv, spec.Dir, spec.Env)
	if err != nil {
		return fmt.Errorf("%s: %w", spec.Name, err)
	}
	defer l.close()
	cmd := l.cmd
	lt := newTail(20)
	cmd.Stdout, cmd.Stderr = lt, lt
	if err := cmd.Run(); err != nil {
		shown := strings.Join(argv, " ")
		if spec.Redact != nil {
			shown = spec.Redact(shown)
		}
		if cerr := ctx.Err(); cerr != nil && errors.Is(cerr, context.Canceled) {
			return fmt.Errorf("%s: %s: %w", spec.Name, shown, cerr)
		}
		msg := fmt.Sprintf("%s: %s: %v", spec.Name, shown, err)
		if lines := lt.lines(); len(lines) > 0 {
			msg += "; last output:\n    " + strings.Join(lines, "\n    ")
		}
		return errors.New(msg)
	}
	return nil
}

// commandPath resolves name as exec.Command would, against tandem's PATH;
// a path with a separator is not looked up, so it is checked here, against
// dir, where the error can still be returned.
func commandPath(name, dir string) (string, error) {
	c := exec.Command(name)
	if c.Err != nil {
		return "", c.Err
	}
	check := c.Path
	if !filepath.IsAbs(check) && dir != "" {
		check = filepath.Join(dir, check)
	}
	if _, err := exec.LookPath(check); err != nil {
		return "", err
	}
	return c.Path, nil
}

// launch is a target's command and, where a supervisor starts it, the
// pipe on which the supervisor reports that the target itself has started.
type launch struct {
	cmd                *exec.Cmd
	startedR, startedW *os.File // nil without a supervisor
}

// started closes the pipe's write end, which the command has inherited
// once it has started (or will never need if it could not).
func (l *launch) started() {
	if l.startedW != nil {
		l.startedW.Close()
	}
}

// waitTarget waits, at most 30 s, for the supervisor's word that the
// target has started (or EOF if it could not be), so startup times are the
// target's, not the supervisor's.
func (l *launch) waitTarget() {
	if l.startedR == nil {
		return
	}
	l.startedR.SetReadDeadline(time.Now().Add(30 * time.Second))
	l.startedR.Read(make([]byte, 1))
}

func (l *launch) close() {
	l.started()
	if l.startedR != nil {
		l.startedR.Close()
	}
}

// Pid is the process id of the target's supervisor, the leader of the
// target's process group.
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
	signalGroup(p.Pid(), syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
		signalGroup(p.Pid(), syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("target %s: killed after %v without exiting on SIGTERM", p.Name, grace)
	}
}

// Kill sends SIGKILL to the process group and waits until it has exited.
func (p *Process) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	signalGroup(p.Pid(), syscall.SIGKILL)
	<-p.done
}

// Pause stops every process of the group (SIGSTOP) until Resume.
func (p *Process) Pause() error { return pauseGroup(p.Pid(), true) }

// Resume lets a paused group run again (SIGCONT).
func (p *Process) Resume() error { return pauseGroup(p.Pid(), false) }

// Disk is what a directory's regular files take.
type Disk struct {
	// Allocated is the bytes of the blocks they hold, as du shows (a file
	// linked twice counted once; a sparse or preallocated file by what it
	// holds). Where the system does not say, the apparent size.
	Allocated int64
	// Apparent is the sum of their sizes.
	Apparent int64
}

// DiskUsage is what the regular files under dir take; a dir that does not
// exist takes nothing.
func DiskUsage(dir string) (Disk, error) {
	var d Disk
	seen := map[fileID]bool{}
	err := filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !e.Type().IsRegular() {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil // gone since the walk listed it
		}
		d.Apparent += info.Size()
		id, blocks, ok := allocated(info)
		switch {
		case !ok:
			d.Allocated += info.Size()
		case !seen[id]:
			seen[id] = true
			d.Allocated += blocks
		}
		return nil
	})
	return d, err
}

// FreePort returns a TCP port on 127.0.0.1 that is free now, chosen below
// the kernel's ephemeral range: a port the kernel hands out for outgoing
// connections (tandem's own among them) could be taken between now and
// the target's bind, and a target restarted on it could meet "address
// already in use". Only when no such port is free is one of the ephemeral
// range returned.
func FreePort() (int, error) {
	lo := ephemeralLow()
	for range 200 {
		if lo <= minPort {
			break
		}
		p := minPort + rand.IntN(lo-minPort)
		if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			ln.Close()
			return p, nil
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// minPort is the lowest port FreePort chooses: above the well-known and
// most registered services' ports.
const minPort = 10000

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// default 32768 where it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if f := strings.Fields(string(b)); err == nil && len(f) == 2 {
		if lo, err := strconv.Atoi(f[0]); err == nil {
			return lo
		}
	}
	return 32768
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
