package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/results"
)

// tandem run (of a small study like the demo's) as a child process, stopped by SIGTERM or
// killed by SIGKILL once its targets are up: SIGTERM exits 143 and leaves
// results.json marked interrupted; either way no target still listens.
func TestRunStoppedBySignal(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // child processes and waits; asserts outcomes, not speed
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 143}, {syscall.SIGKILL, -1}} {
		t.Run(cli.SignalName(c.sig), func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command(os.Args[0], "run", smallStudy(t), "--pin=false", "--out", out)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// wait until both targets are up and a scenario has begun
			var addrs []string
			deadline := time.Now().Add(5 * time.Minute) // race-enabled targets on a busy machine
			for len(addrs) == 0 {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					<-done
					t.Fatal("the targets were not up within 5 minutes")
				}
				time.Sleep(100 * time.Millisecond)
				r, err := results.Read(filepath.Join(out, "results.json"))
				if err != nil || len(r.Scenarios) == 0 {
					continue
				}
				for _, tg := range r.Targets {
					for _, arg := range tg.Command {
						addrs = append(addrs, regexp.MustCompile(`127\.0\.0\.1:\d+`).FindAllString(arg, -1)...)
					}
				}
			}
			cmd.Process.Signal(c.sig)
			var err error
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute): // a hang guard
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running 2 minutes after %v", c.sig)
			}
			var ee *exec.ExitError
			if c.code > 0 {
				if !errors.As(err, &ee) || ee.ExitCode() != c.code {
					t.Errorf("exit %v; want status %d", err, c.code)
				}
				r, err := results.Read(filepath.Join(out, "results.json"))
				if err != nil || !r.Interrupted {
					t.Errorf("results after %v: %v, interrupted %v; want them marked interrupted", c.sig, err, r != nil && r.Interrupted)
				}
			}
			// the targets die with tandem, SIGKILL included
			for _, addr := range addrs {
				if stillListens(addr, 10*time.Second) {
					t.Errorf("a target still listens on %s 10 s after tandem's %v", addr, c.sig)
				}
			}
		})
	}
}

// stillListens reports whether addr still accepts connections after
// within: a target that should be gone is given that long to go.
func stillListens(addr string, within time.Duration) bool {
	for deadline := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		if time.Now().After(deadline) {
			return true
		}
	}
}
