package runner

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
)

// Links between a group's nodes: every node reaches each other node
// through a link of its own, 5 ms each way within a region and 30 ms
// between the two; node eu0's /fan asks eu1 then us0, so no answer can
// come before 2 × 5 ms + 2 × 30 ms. The results list each link as
// configured, and the first node's lists name the others through links.
func TestGroupLinks(t *testing.T) {
	tooltest.Long(t)
	if runtime.GOOS != "linux" {
		t.Skip("the nodes bind 127.0.0.2 and 127.0.0.3, which only Linux routes to loopback without set-up")
	}
	t.Parallel() // asserts floors, not speeds
	o := options(t, nil)
	src := `
version: 1
name: peers
defaults: {rounds: 1, warmup: 50ms}
targets:
  - name: net
    group:
      nodes: [{role: eu, count: 2}, {role: us, count: 1}]
      network: {delay: 5ms}
      regions: {west: [eu0, eu1], east: [us0]}
      latency: {west-east: 30ms}
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
    load: {concurrency: 1}
    requests: 20
`
	res, err := Run(context.Background(), runtest.Parse(t, src), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Read(filepath.Join(o.Out, ResultsFile)); err != nil {
		t.Fatalf("the results do not validate: %v", err)
	}
	pn := res.Targets[0].PeerNetwork
	if pn == nil || len(pn.Links) != 6 {
		t.Fatalf("peer network %+v; want a link for each of the 6 ordered pairs", pn)
	}
	seen := map[string]bool{}
	for _, l := range pn.Links {
		want := 5 * time.Millisecond
		if l.FromRegion != l.ToRegion {
			want = 30 * time.Millisecond
		}
		if l.Port != "http" || time.Duration(l.Up.DelayNs) != want || time.Duration(l.Down.DelayNs) != want || l.Listen == l.Upstream {
			t.Errorf("link %+v; want port http, %v each way, a listen address of its own", l, want)
		}
		if host := l.Listen[:strings.LastIndex(l.Listen, ":")]; host != l.Upstream[:strings.LastIndex(l.Upstream, ":")] {
			t.Errorf("link %s→%s listens on %s; want the host of %s", l.From, l.To, l.Listen, l.Upstream)
		}
		seen[l.From+">"+l.To] = true
	}
	if len(seen) != 6 || seen["eu0>eu0"] {
		t.Errorf("links between %v; want every ordered pair of distinct nodes", seen)
	}
	// what crossed the links: eu0's fans to eu1 and us0 at least, each
	// piece held its link's delay or more
	carried := 0
	for _, l := range pn.Links {
		up, down := l.MeasuredUp, l.MeasuredDown
		if up == nil || down == nil {
			t.Fatalf("link %s→%s: nothing measured", l.From, l.To)
		}
		if up.Pieces == 0 || down.Pieces == 0 {
			continue
		}
		carried++
		if up.MeanHeldNs < l.Up.DelayNs || down.MeanHeldNs < l.Down.DelayNs || up.MaxHeldNs < up.MeanHeldNs || up.Bytes == 0 {
			t.Errorf("link %s→%s: measured up %+v, down %+v; want each piece held %v or more", l.From, l.To, *up, *down, time.Duration(l.Up.DelayNs))
		}
	}
	if carried < 2 {
		t.Errorf("%d links carried bytes both ways; want eu0→eu1 and eu0→us0 at least", carried)
	}
	sc := res.Scenarios[0]
	if len(sc.Rounds) == 0 {
		t.Fatal("no rounds")
	}
	for _, rd := range sc.Rounds {
		s := rd.Sample
		if s.OK != s.Requests || s.Requests == 0 {
			t.Errorf("round %d: %d of %d ok, errors %v", rd.Round, s.OK, s.Requests, s.Errors)
		}
		if floor := 70 * time.Millisecond; time.Duration(s.LatencyNs.Min) < floor {
			t.Errorf("round %d: the fastest fan took %v, under the links' %v", rd.Round, time.Duration(s.LatencyNs.Min), floor)
		}
	}
}

// A disconnect done to a node of a group with links cuts it from its
// peers, not from the generator: eu0's fans fail while us0 is cut off (the
// link resets eu0's connections to it) and succeed again after; the event
// names us0 and lasts its for.
func TestGroupLinksDisconnectNode(t *testing.T) {
	tooltest.Long(t)
	if runtime.GOOS != "linux" {
		t.Skip("the nodes bind 127.0.0.2, which only Linux routes to loopback without set-up")
	}
	t.Parallel() // asserts what happened, not how fast
	o := options(t, nil)
	src := `
version: 1
name: peers cut
defaults: {rounds: 1, warmup: 50ms}
targets:
  - name: net
    group:
      nodes: [{role: eu, count: 1}, {role: us, count: 1}]
      network: {delay: 1ms}
    start:
      command: ["${tandem}", --addr, "${node.host}:${port.http}", --peers, "${group.others.http}"]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://${node.host}:${port.http}/"}
    ready: {first_answer: {call: ping}, timeout: 5m}
calls:
  ping: {http: {path: ping}}
  fan: {http: {path: fan}}
scenarios:
  - name: cut
    call: fan
    load: {concurrency: 1}
    duration: 4s
    perturbations: [{at: 1s, action: disconnect, for: 1s, node: us0}]
`
	res, err := Run(context.Background(), runtest.Parse(t, src), o)
	if err != nil {
		t.Fatal(err)
	}
	sc := res.Scenarios[0]
	if len(sc.Rounds) == 0 {
		t.Fatal("no rounds")
	}
	rd := sc.Rounds[0]
	if len(rd.Perturbations) != 1 {
		t.Fatalf("perturbations %+v; want the one disconnect", rd.Perturbations)
	}
	ev := rd.Perturbations[0]
	if ev.Node != "us0" || ev.Error != "" || time.Duration(ev.DownNs) < time.Second {
		t.Errorf("event %+v; want us0 cut for at least 1 s, no error", ev)
	}
	s := rd.Sample
	if s.Errors["http:502"] == 0 || s.OK == 0 {
		t.Errorf("round: %d ok, errors %v; want fans that failed while us0 was cut off, and fans that did not", s.OK, s.Errors)
	}
	if res.Targets[0].Network != nil {
		t.Errorf("the generator's path got a link (%+v): the disconnect is between the nodes", res.Targets[0].Network)
	}
}

// The generator's path to a group goes through a link to each node: the
// target's network puts 10 ms each way in front of both nodes (no ping
// answers under 20 ms, whichever node it went to), the results name each
// link's node, and a disconnect with generator: true cuts us0 from its
// peers and from the generator: the client on us0 fails while it lasts,
// the one on eu0 does not stop, and the event waits for us0 to answer
// through its path again.
func TestGroupGeneratorPath(t *testing.T) {
	tooltest.Long(t)
	if runtime.GOOS != "linux" {
		t.Skip("the nodes bind 127.0.0.2, which only Linux routes to loopback without set-up")
	}
	t.Parallel() // asserts floors and what happened, not speeds
	o := options(t, nil)
	src := `
version: 1
name: generator path
defaults: {rounds: 1, warmup: 50ms}
targets:
  - name: net
    group:
      nodes: [{role: eu, count: 1}, {role: us, count: 1}]
      network: {delay: 1ms}
      calls: round-robin
    network: {delay: 10ms}
    start:
      command: ["${tandem}", --addr, "${node.host}:${port.http}", --peers, "${group.others.http}"]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://${node.host}:${port.http}/"}
    ready: {first_answer: {call: ping}, timeout: 5m}
calls:
  ping: {http: {path: ping}}
scenarios:
  - name: cut
    call: ping
    load: {concurrency: 2}
    duration: 3s
    perturbations: [{at: 1s, action: disconnect, for: 500ms, node: us0, generator: true}]
`
	res, err := Run(context.Background(), runtest.Parse(t, src), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Read(filepath.Join(o.Out, ResultsFile)); err != nil {
		t.Fatalf("the results do not validate: %v", err)
	}
	nw := res.Targets[0].Network
	if nw == nil || len(nw.Links) != 2 {
		t.Fatalf("network %+v; want a link on the generator's path to each of the 2 nodes", nw)
	}
	for i, want := range []string{"eu0", "us0"} {
		lk := nw.Links[i]
		if lk.Node != want || lk.Endpoint != "http" || lk.RTTNs < int64(20*time.Millisecond) || lk.DirectRTTNs >= lk.RTTNs {
			t.Errorf("link %d: %+v; want node %s's http, a round trip of 20 ms or more through it and less straight", i, lk, want)
		}
		if m := lk.MeasuredUp; m == nil || m.Pieces == 0 || m.MeanHeldNs < int64(10*time.Millisecond) {
			t.Errorf("link %d: measured up %+v; want pieces, each held 10 ms or more", i, m)
		}
	}
	rd := res.Scenarios[0].Rounds[0]
	s := rd.Sample
	if floor := 20 * time.Millisecond; time.Duration(s.LatencyNs.Min) < floor {
		t.Errorf("the fastest ping took %v, under the path's %v", time.Duration(s.LatencyNs.Min), floor)
	}
	if len(rd.Perturbations) != 1 {
		t.Fatalf("perturbations %+v; want the one disconnect", rd.Perturbations)
	}
	ev := rd.Perturbations[0]
	if ev.Node != "us0" || ev.Error != "" || time.Duration(ev.DownNs) < 500*time.Millisecond || ev.AnswersAfterNs < ev.DownNs {
		t.Errorf("event %+v; want us0 cut for 500 ms or more, answering through its path after that, no error", ev)
	}
	if ev.Errors == 0 || s.OK == 0 {
		t.Errorf("round: %d ok, errors %v, the disconnect's %d; want requests to us0 that failed and others that did not", s.OK, s.Errors, ev.Errors)
	}
	if pn := res.Targets[0].PeerNetwork; pn == nil || len(pn.Links) != 2 {
		t.Errorf("peer network %+v; want the two links between the nodes as well", pn)
	}
}

// A disconnect between the sides of a split cuts the links from one side
// to the other and leaves those within a side: eu0's fans to eu1 (its own
// side) never fail, its fans to us0 fail while the split lasts; the event
// records the sides, regions resolved.
func TestGroupSplit(t *testing.T) {
	tooltest.Long(t)
	if runtime.GOOS != "linux" {
		t.Skip("the nodes bind 127.0.0.2 and 127.0.0.3, which only Linux routes to loopback without set-up")
	}
	t.Parallel() // asserts what happened, not how fast
	o := options(t, nil)
	src := `
version: 1
name: split
defaults: {rounds: 1, warmup: 50ms}
targets:
  - name: net
    group:
      nodes: [{role: eu, count: 2}, {role: us, count: 1}]
      regions: {west: [eu0, eu1], east: [us0]}
      latency: {west-east: 1ms}
    start:
      command: ["${tandem}", --addr, "${node.host}:${port.http}", --peers, "${group.others.http}"]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://${node.host}:${port.http}/"}
    ready: {first_answer: {call: ping}, timeout: 5m}
calls:
  ping: {http: {path: ping}}
  near: {http: {path: "fan?peer=0"}}
  far: {http: {path: "fan?peer=1"}}
scenarios:
  - name: within
    call: near
    load: {concurrency: 1}
    duration: 2500ms
    perturbations: [{at: 1s, action: disconnect, for: 500ms, sides: [[west]]}]
  - name: across
    call: far
    load: {concurrency: 1}
    duration: 2500ms
    perturbations: [{at: 1s, action: disconnect, for: 500ms, sides: [[west]]}]
`
	res, err := Run(context.Background(), runtest.Parse(t, src), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Read(filepath.Join(o.Out, ResultsFile)); err != nil {
		t.Fatalf("the results do not validate: %v", err)
	}
	for i, sc := range res.Scenarios {
		if len(sc.Rounds) != 1 || len(sc.Rounds[0].Perturbations) != 1 {
			t.Fatalf("%s: rounds %+v; want one with one perturbation", sc.Name, sc.Rounds)
		}
		rd := sc.Rounds[0]
		ev := rd.Perturbations[0]
		if ev.Error != "" || ev.Node != "" || len(ev.Sides) != 2 || strings.Join(ev.Sides[0], ",") != "eu0,eu1" ||
			strings.Join(ev.Sides[1], ",") != "us0" || time.Duration(ev.DownNs) < 500*time.Millisecond {
			t.Errorf("%s: event %+v; want sides [eu0 eu1] and [us0], cut 500 ms or more, no node, no error", sc.Name, ev)
		}
		// what holds on any machine: a fan within a side never fails, and
		// fans across fail while split; how many fit in the round, before
		// and after the split, is the machine's (a busy one fitted 4, all
		// of them failed), so the answers across are only logged
		failed := rd.Errors["http:502"]
		switch {
		case i == 0 && (failed != 0 || rd.OK == 0):
			t.Errorf("within: %d ok, errors %v, series %+v; want every fan to eu1 answered", rd.OK, rd.Errors, rd.Series)
		case i == 1 && failed == 0:
			t.Errorf("across: %d ok, errors %v, series %+v; want fans to us0 that failed while split", rd.OK, rd.Errors, rd.Series)
		case i == 1 && rd.OK == 0:
			t.Logf("across: no fan answered (errors %v, series %+v): the round fitted none outside the split on this machine", rd.Errors, rd.Series)
		}
	}
}
