package runner

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/link/veth"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
)

// A target's network via the kernel: its requests cross a veth pair whose
// rules drop 5 % of the packets each way, the link's own 5 ms each way
// floors every answer, every request is still answered (TCP retransmits),
// and the results say via kernel and count the packets and the drops.
func TestNetworkViaKernel(t *testing.T) {
	tooltest.Long(t)
	if err := veth.Probe(); err != nil {
		if os.Geteuid() != 0 {
			t.Skipf("the kernel's path is refused here (not root): %v", err)
		}
		t.Fatalf("root, and the probe failed: %v", err)
	}
	t.Parallel() // asserts floors and counts, not speeds
	srv := newHostCounter(t)
	o := options(t, nil)
	src := `
version: 1
name: kernel path
defaults: {rounds: 1, warmup: 50ms}
targets:
  - name: lossy
    endpoints: {http: "http://` + srv.addr() + `"}
    ready: {first_answer: {call: ping}}
    network: {via: kernel, delay: 5ms, loss: 0.05}
calls:
  ping: {http: {path: /ping}}
scenarios:
  - name: lat
    call: ping
    load: {concurrency: 4}
    requests: 400
`
	if _, err := Run(context.Background(), runtest.Parse(t, src), o); err != nil {
		t.Fatal(err)
	}
	res := readResults(t, o.Out)
	nw := res.Targets[0].Network
	if nw == nil || nw.Via != "kernel" || len(nw.Links) != 1 || nw.Up.Loss != 0.05 {
		t.Fatalf("network %+v; want via kernel, one link, loss 0.05", nw)
	}
	rd := res.Scenarios[0].Rounds[0]
	if rd.OK != 400 || len(rd.Errors) != 0 {
		t.Errorf("round: %d ok, errors %v; want all 400 answered", rd.OK, rd.Errors)
	}
	if floor := 10 * time.Millisecond; time.Duration(rd.LatencyNs.Min) < floor {
		t.Errorf("the fastest answer took %v, under the link's %v", time.Duration(rd.LatencyNs.Min), floor)
	}
	lk := nw.Links[0]
	for name, f := range map[string]*results.LinkFlow{"up": lk.MeasuredUp, "down": lk.MeasuredDown} {
		if f == nil || f.Packets < 400 || f.Lost == 0 || f.Lost > f.Packets/5 {
			t.Errorf("%s: measured %+v; want 400 packets or more, some of them (about 5 %%) dropped", name, f)
		}
	}
}
