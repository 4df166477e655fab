package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/fleet"
)

// netnsLab is a bridge in this namespace and network namespaces on it,
// each with an address of the test's own in 10.250.N.0/24.
type netnsLab struct {
	t      *testing.T
	prefix string
	bridge string
	net    int
}

// newNetnsLab makes the bridge, or skips the test where this machine does
// not allow it.
func newNetnsLab(t *testing.T) *netnsLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root: run the suite as root (test.sh does on a fresh machine)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("network namespaces need the ip command (iproute2)")
	}
	l := &netnsLab{t: t, net: 1 + rand.IntN(250)}
	l.prefix = fmt.Sprintf("tdm%d", os.Getpid()%100000)
	l.bridge = l.prefix + "br"
	if out, err := exec.Command("ip", "link", "add", l.bridge, "type", "bridge").CombinedOutput(); err != nil {
		t.Skipf("this machine does not let the test make a bridge (%v: %s): skipping the namespaces test", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { exec.Command("ip", "link", "del", l.bridge).Run() })
	l.must("ip", "addr", "add", l.addr(1)+"/24", "dev", l.bridge)
	l.must("ip", "link", "set", l.bridge, "up")
	return l
}

func (l *netnsLab) addr(host int) string { return fmt.Sprintf("10.250.%d.%d", l.net, host) }

func (l *netnsLab) must(args ...string) {
	l.t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		l.t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// namespace makes a namespace with address host on the bridge (a veth
// pair, one end in it) and returns its name; skips where namespaces are
// not allowed.
func (l *netnsLab) namespace(name string, host int) string {
	l.t.Helper()
	ns := l.prefix + name
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		l.t.Skipf("this machine does not let the test make a network namespace (%v: %s): skipping", err, bytes.TrimSpace(out))
	}
	l.t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	outer, inner := ns+"a", ns+"b"
	l.must("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
	l.must("ip", "link", "set", inner, "netns", ns)
	l.must("ip", "link", "set", outer, "master", l.bridge, "up")
	l.must("ip", "-n", ns, "addr", "add", l.addr(host)+"/24", "dev", inner)
	l.must("ip", "-n", ns, "link", "set", inner, "up")
	l.must("ip", "-n", ns, "link", "set", "lo", "up")
	return ns
}

// TestWorkersInNetworkNamespaces: two workers, each in a network
// namespace of its own, drive a target in a third; the coordinator and
// its NATS server are in this one. Nothing reaches the target but over
// the bridge the test made, and the merged count is exact.
func TestWorkersInNetworkNamespaces(t *testing.T) {
	lab := newNetnsLab(t)
	targetNS := lab.namespace("t", 2)
	workerNS := []string{lab.namespace("w1", 3), lab.namespace("w2", 4)}

	target := exec.Command("ip", "netns", "exec", targetNS, os.Args[0])
	target.Env = append(os.Environ(), "TANDEM_TEST_PONG="+lab.addr(2)+":8080")
	var served bytes.Buffer
	targetOut, err := target.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Process.Kill(); target.Wait() })
	line := make([]byte, len("listening\n"))
	if _, err := targetOut.Read(line); err != nil || string(line) != "listening\n" {
		t.Fatalf("the target did not start: %q %v", line, err)
	}

	ids := []string{"ns-1", "ns-2"}
	nats, err := fleet.Embed(fleet.EmbedOptions{Host: lab.addr(1), Fleet: "netns", Workers: ids})
	if err != nil {
		t.Fatal(err)
	}
	defer nats.Close()
	coordSeed := filepath.Join(t.TempDir(), "coordinator.nk")
	if err := os.WriteFile(coordSeed, nats.CoordinatorSeed(), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, ns := range workerNS {
		w := exec.Command("ip", "netns", "exec", ns, os.Args[0], "worker", "--nats", nats.URL(), "--fleet", "netns",
			"--id", ids[i], "--wait", "30s")
		seed, _ := nats.WorkerSeed(ids[i])
		w.Env = append(os.Environ(), fleet.NKeyEnv+"="+string(seed))
		var errb bytes.Buffer
		w.Stderr = &errb
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			w.Process.Kill()
			if w.Wait(); t.Failed() {
				t.Logf("worker %d said: %s", i+1, errb.String())
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"load", "http://" + lab.addr(2) + ":8080/", "--workers", "2", "--nats", nats.URL(), "--nats-nkey", coordSeed, "--fleet", "netns",
		"--concurrency", "4", "--requests", "2001", "--join-wait", "30s", "--format", "json"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	got := decodeFleet(t, out.String())
	target.Process.Signal(syscall.SIGTERM)
	rest := make([]byte, 64)
	n, _ := targetOut.Read(rest)
	served.Write(rest[:n])
	hits, err := strconv.ParseInt(strings.TrimSpace(served.String()), 10, 64)
	if err != nil {
		t.Fatalf("the target's count: %q", served.String())
	}
	// each worker checks the target with one request before its load
	if got.Requests != 2001 || got.OK != 2001 || hits != 2001+2 {
		t.Fatalf("merged %d requests (%d ok); the target in its namespace served %d; want 2001 and a check per worker", got.Requests, got.OK, hits)
	}
	for _, w := range got.Fleet.Workers {
		if w.Requests < 1000 || w.Requests > 1001 || w.RTTNs <= 0 {
			t.Errorf("worker %s: %d requests, rtt %v", w.ID, w.Requests, time.Duration(w.RTTNs))
		}
	}
	if !strings.HasPrefix(got.Fleet.NATS, lab.addr(1)) {
		t.Errorf("fleet NATS %q; want the bridge's address", got.Fleet.NATS)
	}
}
