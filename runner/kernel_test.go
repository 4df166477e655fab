package runner

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
)

// A target's network via the kernel: its requests cross a veth pair whose
// rules drop 5 % of the packets each way, the link's own 5 ms each way
// floors every answer, every request is still answered (TCP retransmits),
// and the results say via kernel and count the packets and the drops.
func TestNetworkViaKernel(t *testing.T) {
	tooltest.Long(t)
	tooltest.Kernel(t)
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

// Links between a group's nodes via the kernel: every fan is answered
// through 5 % loss each way, the results say via kernel, and the links
// that carried the fans count their packets and drops.
func TestGroupLinksViaKernel(t *testing.T) {
	tooltest.Long(t)
	if runtime.GOOS != "linux" {
		t.Skip("the nodes bind 127.0.0.2, which only Linux routes to loopback without set-up")
	}
	tooltest.Kernel(t)
	t.Parallel() // asserts counts, not speeds
	o := options(t, nil)
	src := `
version: 1
name: kernel links
defaults: {rounds: 1, warmup: 50ms}
targets:
  - name: net
    group:
      nodes: [{role: eu, count: 1}, {role: us, count: 1}]
      network: {via: kernel, delay: 2ms, loss: 0.05}
    start:
      command: ["${tandem}", --addr, "${node.host}:${port.http}", --peers, "${group.others.http}"]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://${node.host}:${port.http}/"}
    ready: {first_answer: {call: ping}, timeout: 5m}
calls:
  ping: {http: {path: ping}}
  fan: {http: {path: fan}}
scenarios:
  - name: fan
    call: fan
    load: {concurrency: 2}
    requests: 300
`
	res, err := Run(context.Background(), runtest.Parse(t, src), o)
	if err != nil {
		t.Fatal(err)
	}
	rd := res.Scenarios[0].Rounds[0]
	if rd.OK != 300 || len(rd.Errors) != 0 {
		t.Errorf("round: %d ok, errors %v; want every fan answered", rd.OK, rd.Errors)
	}
	pn := res.Targets[0].PeerNetwork
	if pn == nil || pn.Via != "kernel" || len(pn.Links) != 2 {
		t.Fatalf("peer network %+v; want via kernel, two links", pn)
	}
	var packets, lost int64
	for _, lk := range pn.Links {
		for _, f := range []*results.LinkFlow{lk.MeasuredUp, lk.MeasuredDown} {
			if f == nil {
				t.Fatalf("link %s→%s: nothing measured", lk.From, lk.To)
			}
			packets += f.Packets
			lost += f.Lost
		}
	}
	if packets < 600 || lost == 0 || lost > packets/5 {
		t.Errorf("%d packets, %d dropped; want 600 or more, about 5 %% dropped", packets, lost)
	}
}
