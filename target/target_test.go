package target

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestStartStopAndTail(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "data")
	os.MkdirAll(stale, 0o755)
	os.WriteFile(filepath.Join(stale, "old"), []byte("x"), 0o644)
	p, err := Start(context.Background(), Spec{Name: "sh", Command: []string{"sh", "-c", `echo one; echo two >&2; printf partial; exec sleep 30`}, Wipe: []string{stale}, WipeRoot: dir, Env: []string{"X=1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("wipe left %s: %v", stale, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(p.Tail()) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := strings.Join(p.Tail(), "|"); got != "one|two|partial" {
		t.Errorf("Tail = %q; want one|two|partial", got)
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Errorf("Stop: %v", err)
	}
	select {
	case <-p.Done():
	default:
		t.Error("process still running after Stop")
	}
}

func TestStopKillsStubbornProcess(t *testing.T) {
	p, err := Start(context.Background(), Spec{Name: "stubborn", Command: []string{"sh", "-c", `trap "" TERM; echo ready; while :; do sleep 1; done`}})
	if err != nil {
		t.Fatal(err)
	}
	for len(p.Tail()) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	err = p.Stop(300 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "killed after 300ms") {
		t.Errorf("Stop = %v; want a note that it was killed", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Stop took %v", el)
	}
}

func TestExitError(t *testing.T) {
	p, err := Start(context.Background(), Spec{Name: "failing", Command: []string{"sh", "-c", "echo cannot open database >&2; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	e := p.ExitErr()
	if !strings.Contains(e.Error(), "target failing exited: exit status 3") || !strings.Contains(e.Error(), "cannot open database") {
		t.Errorf("ExitErr = %q", e)
	}
	if _, err := Start(context.Background(), Spec{Name: "x", Command: []string{"/nonexistent/bin"}}); err == nil {
		t.Error("Start of a missing binary = nil error")
	}
	if _, err := Start(context.Background(), Spec{Name: "x", Command: []string{"true"}, Wipe: []string{"/"}}); err == nil {
		t.Error("Start with wipe / = nil error")
	}
}

func TestUsageAndPinning(t *testing.T) {
	cpus := []int{runtime.NumCPU() - 1}
	// Busy for a while, in a child of the shell, so the tree matters.
	p, err := Start(context.Background(), Spec{Name: "busy", CPUs: cpus, Command: []string{"sh", "-c", `sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo done'; sleep 30`}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	status, err := os.ReadFile("/proc/" + itoa(p.Pid()) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	want := "Cpus_allowed_list:\t" + itoa(cpus[0])
	if !strings.Contains(string(status), want) {
		t.Errorf("child not pinned: want %q in /proc status", want)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(strings.Join(p.Tail(), ""), "done") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cpu, rss := p.Usage()
	if cpu < 10*time.Millisecond || rss <= 0 {
		t.Errorf("Usage = %v CPU, %d bytes; want the busy child's CPU counted and a positive RSS", cpu, rss)
	}
	if runtime.NumCPU() > 1 {
		tasks, _ := filepath.Glob("/proc/self/task/*/status")
		for _, task := range tasks {
			st, _ := os.ReadFile(task)
			if strings.Contains(string(st), "Cpus_allowed_list:\t"+itoa(cpus[0])+"\n") {
				t.Errorf("pinning the child pinned a thread of the test process too: %s", task)
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestDiskUsageAndPorts(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), make([]byte, 1000), 0o644)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "b"), make([]byte, 24), 0o644)
	if d, err := DiskUsage(dir); d.Apparent != 1024 || d.Allocated <= 0 || err != nil {
		t.Errorf("DiskUsage = %+v, %v; want 1024 apparent, some allocated", d, err)
	}
	if d, err := DiskUsage(filepath.Join(dir, "missing")); d != (Disk{}) || err != nil {
		t.Errorf("DiskUsage(missing) = %+v, %v; want nothing, nil", d, err)
	}
	a, err1 := FreePort()
	b, err2 := FreePort()
	if err1 != nil || err2 != nil || a <= 0 || b <= 0 {
		t.Errorf("FreePort = %d %v, %d %v", a, err1, b, err2)
	}
}

// A wipe never leaves its root through a symlink, and removes a symlink
// itself as a link; a path opted in as outside is removed.
func TestWipeStaysInItsRoot(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	os.Symlink(outside, filepath.Join(root, "link"))
	os.MkdirAll(filepath.Join(root, "data", "sub"), 0o755)
	cases := []struct {
		path    string
		outside bool
		err     string
	}{
		{filepath.Join(root, "link", "victim"), false, "is a symlink"},
		{root + "/link/sub/..", false, "a .. component"}, // the text cleans to link, the kernel goes through it
		{root + "/data/../link/victim", false, "a .. component"},
		{root + "/../" + filepath.Base(outside) + "/victim", false, "a .. component"},
		{outside + "/victim", false, "not under"},
		{filepath.Join(root, "data"), false, ""},
		{filepath.Join(root, "link"), false, ""},
		{filepath.Join(root, "missing", "x"), false, ""},
		{root, false, ""}, // ${workdir} itself: emptied, kept
	}
	for _, c := range cases {
		err := wipe(c.path, root, c.outside)
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("wipe(%s) = %v; want %q", c.path, err, c.err)
		}
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "keep" {
		t.Errorf("the file outside the root: %q, %v; want it kept", b, err)
	}
	if _, err := os.Lstat(filepath.Join(root, "link")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the symlink itself is still there: %v", err)
	}
	if entries, err := os.ReadDir(root); err != nil || len(entries) != 0 {
		t.Errorf("the root after its wipe: %v, %v; want it there and empty", entries, err)
	}
	if err := wipe(victim, root, true); err != nil {
		t.Errorf("wipe of an opted-in outside path: %v", err)
	}
	if _, err := os.Stat(victim); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the opted-in outside path is still there: %v", err)
	}
}

// Ports for targets come from below the kernel's ephemeral range, where no
// outgoing connection takes them between the choice and the bind.
func TestFreePortOutsideEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	if lo <= minPort {
		t.Skipf("the ephemeral range starts at %d: no room below it", lo)
	}
	for range 20 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if p < minPort || p >= lo {
			t.Errorf("FreePort() = %d; want one in [%d, %d)", p, minPort, lo)
		}
	}
}
