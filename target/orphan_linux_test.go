package target

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary plays three parts, chosen by TANDEM_TEST_ROLE: a
// sleeper (a process that lingers, bounded), a wrapper (a script-like
// target that starts a sleeper and waits for it, writing both pids to
// PIDFILE), and a tandem (starts a wrapper as a target, or as an init
// command, and waits to be killed).
func TestMain(m *testing.M) {
	switch os.Getenv("TANDEM_TEST_ROLE") {
	case "sleeper":
		time.Sleep(60 * time.Second)
		os.Exit(0)
	case "wrapper":
		os.Exit(wrapper())
	case "tandem":
		os.Exit(fakeTandem())
	}
	os.Exit(m.Run())
}

func wrapper() int {
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), "TANDEM_TEST_ROLE=sleeper")
	if err := child.Start(); err != nil {
		return 1
	}
	pids := strconv.Itoa(os.Getpid()) + " " + strconv.Itoa(child.Process.Pid) + "\n"
	if err := os.WriteFile(os.Getenv("PIDFILE"), []byte(pids), 0o644); err != nil {
		return 1
	}
	child.Wait()
	return 0
}

func fakeTandem() int {
	spec := Spec{Name: "wrapped", Command: []string{os.Args[0]}, Env: []string{"TANDEM_TEST_ROLE=wrapper"}}
	if os.Getenv("AS_INIT") == "1" {
		spec.Init = [][]string{{os.Args[0]}}
		spec.Command = []string{"true"}
	}
	if _, err := Start(context.Background(), spec); err != nil {
		return 1
	}
	time.Sleep(60 * time.Second)
	return 0
}

// readPids waits for the wrapper's pid file: its own pid and its child's.
func readPids(t *testing.T, path string) []int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				pid, _ := strconv.Atoi(f)
				pids = append(pids, pid)
			}
			return pids
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the wrapper never wrote its pids")
	return nil
}

// alive reports whether pid runs (a zombie waiting for a reaper does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && !strings.HasPrefix(strings.TrimSpace(string(b[i+1:])), "Z")
}

// survivors waits up to 10 s for pids to end and returns those still
// running then, killing them.
func survivors(pids []int) []int {
	var left []int
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			left = append(left, pid)
		}
	}
	return left
}

// SIGKILL of tandem leaves no survivor: neither a wrapper target nor the
// child it started, nor those of a running init command.
func TestNoOrphansAfterSIGKILL(t *testing.T) {
	for _, asInit := range []string{"0", "1"} {
		pidfile := filepath.Join(t.TempDir(), "pids")
		tandem := exec.Command(os.Args[0], "-test.run=^$")
		tandem.Env = append(os.Environ(), "TANDEM_TEST_ROLE=tandem", "PIDFILE="+pidfile, "AS_INIT="+asInit)
		if err := tandem.Start(); err != nil {
			t.Fatal(err)
		}
		pids := readPids(t, pidfile)
		for _, pid := range pids {
			if !alive(pid) {
				t.Fatalf("init %s: pid %d is not running before the kill", asInit, pid)
			}
		}
		tandem.Process.Kill()
		tandem.Wait()
		for _, pid := range survivors(pids) {
			t.Errorf("init %s: pid %d survived tandem's SIGKILL", asInit, pid)
		}
	}
}

// Cancelling the run stops a running init command at once, and what it
// started with it.
func TestInitCancelled(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := Start(ctx, Spec{Name: "slow-init", Command: []string{"true"}, Init: [][]string{{os.Args[0]}},
			Env: []string{"TANDEM_TEST_ROLE=wrapper", "PIDFILE=" + pidfile}})
		errc <- err
	}()
	pids := readPids(t, pidfile)
	start := time.Now()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Start = %v; want context.Canceled", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Start still waits for its init command 15 s after the cancel")
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("the init command took %v to stop", el)
	}
	for _, pid := range survivors(pids) {
		t.Errorf("pid %d of the cancelled init command survived", pid)
	}
}
