package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/results"
)

// childrenOf lists the processes whose parent is pid.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var kids []int
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so read after ")"
		rest := string(b[bytes.LastIndexByte(b, ')')+1:])
		f := strings.Fields(rest)
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			if k, err := strconv.Atoi(filepath.Base(filepath.Dir(st))); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids
}

// alive says pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// coordinator starts tandem load over local workers as a process of its
// own and waits until its workers are started.
func coordinator(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *syncBuffer, []int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"load"}, args...)...)
	var out bytes.Buffer
	errb := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = &out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.Now().Add(3 * time.Minute) // a busy machine starts race-enabled workers slowly
	for !strings.Contains(string(errb.Bytes()), "start at") {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not start within 3 minutes:\n%s", string(errb.Bytes()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd, &out, errb, childrenOf(t, cmd.Process.Pid)
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// waitHits waits (at most a minute) until the server has served more than
// n requests: the load is under way.
func waitHits(t *testing.T, hits *atomic.Int64, n int64, errb *syncBuffer) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); hits.Load() <= n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server served %d requests in a minute; want more than %d:\n%s", hits.Load(), n, string(errb.Bytes()))
		}
	}
}

// TestWorkerKilled: a worker SIGKILLed mid-run is lost (10 s after it was
// last heard); by default the run stops (long before its 5 minutes), with
// continue it runs to its end; either way it exits 1 (its tallies are not
// all in: docs/distributed.md) and the results are whole JSON that name
// the loss.
func TestWorkerKilled(t *testing.T) {
	t.Parallel() // these tests wait more than they work: an open loop of a few hundred requests a second
	for _, onLoss := range []string{"fail", "continue"} {
		t.Run(onLoss, func(t *testing.T) {
			t.Parallel()
			url, hits := countingServer(t)
			duration := "300s"
			if onLoss == "continue" {
				duration = "3s"
			}
			launched := time.Now()
			cmd, out, errb, kids := coordinator(t, url, "--local-workers", "3", "--rate", "300", "--connections", "3", "--duration", duration,
				"--on-worker-loss", onLoss, "--format", "json")
			if len(kids) != 3 {
				t.Fatalf("%d worker processes; want 3", len(kids))
			}
			waitHits(t, hits, 3+100, errb) // the checks, then a third of a second of the load
			killed := time.Now()
			syscall.Kill(kids[0], syscall.SIGKILL)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(3 * time.Minute): // the loss, not the 5 minutes of the schedule, ends the run
				t.Fatalf("the coordinator still runs 3 minutes after a worker was killed:\n%s", string(errb.Bytes()))
			}
			if exitCode(err) != exitCheckFailed {
				t.Fatalf("exit %d; want %d\n%s", exitCode(err), exitCheckFailed, string(errb.Bytes()))
			}
			got := decodeFleet(t, out.String())
			if len(got.Fleet.Lost) != 1 || got.Requests == 0 || hits.Load() < got.Requests {
				t.Fatalf("lost %v, %d requests merged (server served %d)", got.Fleet.Lost, got.Requests, hits.Load())
			}
			if !strings.Contains(string(errb.Bytes()), "is lost") {
				t.Errorf("stderr does not say a worker was lost:\n%s", string(errb.Bytes()))
			}
			for _, w := range got.Fleet.Workers {
				// lost_after is when it was last heard, after the agreed
				// start: before the kill, which came less than the time
				// since the launch after that start
				if w.Lost && (w.LostAfterNs < 0 || w.LostAfterNs > int64(killed.Sub(launched))) {
					t.Errorf("worker %s last heard %v after the start; it was killed %v after the launch", w.ID, time.Duration(w.LostAfterNs),
						killed.Sub(launched))
				}
			}
		})
	}
}

// TestCoordinatorKilled: workers whose coordinator (and the NATS server
// it embeds) is SIGKILLed stop their load within their lease and exit.
func TestCoordinatorKilled(t *testing.T) {
	t.Parallel()
	url, hits := countingServer(t)
	cmd, _, errb, kids := coordinator(t, url, "--local-workers", "2", "--rate", "200", "--connections", "2", "--duration", "180s")
	if len(kids) != 2 {
		t.Fatalf("%d worker processes; want 2", len(kids))
	}
	for _, k := range kids {
		t.Cleanup(func() { syscall.Kill(k, syscall.SIGKILL) })
	}
	waitHits(t, hits, 2+20, errb) // the checks, then the load
	cmd.Process.Kill()
	cmd.Wait()
	killed := time.Now()
	// the load stops by the lease (8 s), not at the end of its 3 minutes …
	deadline := killed.Add(90 * time.Second)
	last, quietSince := hits.Load(), time.Now()
	for time.Now().Before(deadline) && time.Since(quietSince) < time.Second {
		time.Sleep(100 * time.Millisecond)
		if n := hits.Load(); n != last {
			last, quietSince = n, time.Now()
		}
	}
	if stopped := quietSince.Sub(killed); stopped > 60*time.Second {
		t.Errorf("requests kept coming %v after the coordinator died; the lease is 8 s", stopped)
	}
	// … and the workers exit once their last tally cannot be delivered
	for _, k := range kids {
		for alive(k) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if alive(k) {
			t.Errorf("worker %d still runs %v after its coordinator died", k, time.Since(killed))
		}
	}
}

// TestFleetInterrupted: SIGINT at the coordinator stops every worker; the
// run exits 130 with what every worker measured, marked interrupted.
func TestFleetInterrupted(t *testing.T) {
	t.Parallel()
	url, hits := countingServer(t)
	cmd, out, errb, kids := coordinator(t, url, "--local-workers", "2", "--rate", "200", "--connections", "2", "--duration", "300s", "--format", "json")
	// the checks, then the load: with a request at a time on each of the
	// two connections, some of these were answered before the signal
	waitHits(t, hits, 2+20, errb)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute): // the run's end is 5 minutes away
		t.Fatalf("the coordinator still runs 2 minutes after SIGINT:\n%s", string(errb.Bytes()))
	}
	if exitCode(err) != 130 {
		t.Fatalf("exit %d; want 130\n%s", exitCode(err), string(errb.Bytes()))
	}
	got := decodeFleet(t, out.String())
	if !got.Interrupted || len(got.Fleet.Lost) != 0 || got.Requests == 0 || got.Requests > hits.Load() {
		t.Fatalf("interrupted %v, lost %v, %d requests (server %d)", got.Interrupted, got.Fleet.Lost, got.Requests, hits.Load())
	}
	var sum int64
	for _, w := range got.Fleet.Workers {
		sum += w.Requests
	}
	if sum != got.Requests {
		t.Errorf("the workers' own counts sum to %d; merged %d", sum, got.Requests)
	}
	for _, k := range kids {
		deadline := time.Now().Add(2 * time.Minute)
		for alive(k) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(k) {
			t.Errorf("worker %d still runs after the interrupted run ended", k)
		}
	}
}

// TestLostWorkerShareAccounted: one of two workers of a 400/s open loop is
// SIGKILLed 2.5 s into a 6 s run and the run continues without it. The
// summary is of what ran: the offered and achieved rates hold the lost
// worker's part only as far as it ran (under the 400/s asked), the
// throughput never exceeds the achieved rate, the merged requests are the
// workers' own added up (the lost one's from its tallies), a warning names
// the lost share, and tandem exits 1 as the docs say of a run whose
// tallies are not all in.
func TestLostWorkerShareAccounted(t *testing.T) {
	t.Parallel() // waits more than it works
	url, hits := countingServer(t)
	cmd, out, errb, kids := coordinator(t, url, "--local-workers", "2", "--rate", "400", "--connections", "2", "--duration", "6s",
		"--on-worker-loss", "continue", "--format", "json")
	if len(kids) != 2 {
		t.Fatalf("%d worker processes; want 2", len(kids))
	}
	time.Sleep(2500 * time.Millisecond) // a few tallies of the victim in
	syscall.Kill(kids[0], syscall.SIGKILL)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the coordinator still runs 3 minutes after a worker was killed:\n%s", string(errb.Bytes()))
	}
	if exitCode(err) != exitCheckFailed || !strings.Contains(string(errb.Bytes()), "the run is not whole") {
		t.Errorf("exit %d; want %d, the run not whole\n%s", exitCode(err), exitCheckFailed, string(errb.Bytes()))
	}
	got := decodeFleet(t, out.String())
	if len(got.Fleet.Lost) != 1 {
		t.Fatalf("lost %v; want one worker", got.Fleet.Lost)
	}
	var sum int64
	var lost *results.FleetWorker
	for i, w := range got.Fleet.Workers {
		sum += w.Requests
		if w.Lost {
			lost = &got.Fleet.Workers[i]
		}
	}
	if lost == nil || lost.ID != got.Fleet.Lost[0] {
		t.Fatalf("no worker entry marked lost: %+v", got.Fleet.Workers)
	}
	if sum != got.Requests || got.Requests > hits.Load() {
		t.Errorf("the workers' requests add up to %d, the merged figure is %d (the server served %d)", sum, got.Requests, hits.Load())
	}
	if got.Throughput > got.Achieved || got.OfferedRate <= 0 || got.OfferedRate >= 400 || got.Achieved >= 400 {
		t.Errorf("offered %.1f/s, achieved %.1f/s, throughput %.1f/s: want the rates of what ran (under the 400/s asked), throughput within achieved",
			got.OfferedRate, got.Achieved, got.Throughput)
	}
	named := false
	for _, w := range got.Warnings {
		named = named || strings.Contains(w, "worker "+lost.ID+" was lost") && strings.Contains(w, lost.Share)
	}
	if !named {
		t.Errorf("no warning names the lost share (%s of %s): %q", lost.Share, lost.ID, got.Warnings)
	}
}
