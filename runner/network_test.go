package runner

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/link"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
)

// hostCounter is an HTTP server that counts its requests by their Host
// header and path: a request through a link names the link's address, one
// straight to the server the server's.
type hostCounter struct {
	*httptest.Server
	mu    sync.Mutex
	hosts map[string]int
}

func newHostCounter(t *testing.T) *hostCounter {
	h := &hostCounter{hosts: map[string]int{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hosts[r.Host+r.URL.Path]++
		h.mu.Unlock()
		io.WriteString(w, `{"ok": true}`)
	}))
	t.Cleanup(h.Close)
	return h
}

// count is how many requests for path named host.
func (h *hostCounter) count(host, path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hosts[host+path]
}

func (h *hostCounter) addr() string { return strings.TrimPrefix(h.URL, "http://") }

// TestNetworkDelay runs a target behind a link of 25 ms each way beside
// its twin without one: every request of the linked target's rounds took
// at least the 50 ms the two delays add (a floor: a busy machine adds,
// never takes away), its load and its compat case reached the server
// through the link (their Host is the link's address) while its readiness
// check went straight; the twin's every request went straight, and the
// results record the path, its conditions and the round trip measured
// through it.
func TestNetworkDelay(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // asserts floors and counts, not speeds
	far, near := newHostCounter(t), newHostCounter(t)
	o := options(t, nil)
	src := `
version: 1
name: network
defaults: {rounds: 1, warmup: 50ms}
targets:
  - name: far
    endpoints: {http: "http://` + far.addr() + `"}
    ready: {first_answer: {call: ping}}
    network: {delay: 25ms}
  - name: near
    endpoints: {http: "http://` + near.addr() + `"}
    ready: {first_answer: {call: ping}}
calls:
  ping: {http: {path: /ping}}
  work: {http: {path: /work}}
  case: {http: {path: /case}}
compat:
  cases: [{call: case}]
scenarios:
  - name: lat
    call: work
    load: {concurrency: 1}
    requests: 20
`
	if _, err := Run(context.Background(), runtest.Parse(t, src), o); err != nil {
		t.Fatal(err)
	}
	res := readResults(t, o.Out)
	tf, tn := res.Targets[0], res.Targets[1]
	if tn.Network != nil {
		t.Errorf("near has a network path: %+v", tn.Network)
	}
	nw := tf.Network
	if nw == nil || len(nw.Links) != 1 {
		t.Fatalf("far's network: %+v; want one link", nw)
	}
	lk := nw.Links[0]
	const floor = 50 * time.Millisecond
	want := results.LinkConditions{DelayNs: int64(25 * time.Millisecond)}
	if nw.Up != want || nw.Down != want || nw.Seed != 1 || lk.Endpoint != "http" || lk.Upstream != far.addr() ||
		lk.Listen == "" || lk.Listen == far.addr() {
		t.Errorf("far's network: %+v; want 25 ms each way, the study's seed 1, a link from a new address to %s", nw, far.addr())
	}
	if lk.RTTCall != "ping" || lk.RTTSamples != linkRTTAsks || time.Duration(lk.RTTNs) < floor || lk.DirectRTTNs <= 0 {
		t.Errorf("far's link: %+v; want %d asks of ping timed, at least %v through the link", lk, linkRTTAsks, floor)
	}
	sc := res.Scenarios[0]
	rounds := map[string]int{}
	for _, rd := range sc.Rounds {
		rounds[rd.Target]++
		if rd.OK == 0 || rd.Failed {
			t.Fatalf("%s's round: %d ok, failed %v", rd.Target, rd.OK, rd.Failed)
		}
		if rd.Target == "far" && time.Duration(rd.LatencyNs.Min) < floor {
			t.Errorf("far's fastest request took %v: less than the link's %v round trip", time.Duration(rd.LatencyNs.Min), floor)
		}
	}
	if rounds["far"] != 1 || rounds["near"] != 1 {
		t.Fatalf("rounds by target %v; want one each", rounds)
	}
	if c := res.Compat; c == nil || c.Failed != 0 || len(c.Cases) != 1 || c.Cases[0].Agreement != "identical" {
		t.Errorf("compat: %+v; want one identical case", c)
	}
	// the load (its warm-up and the round's 20 requests) and the compat
	// case went through the link, and nothing of them straight; the
	// readiness check and the straight round trips (ping) did not
	through, straight := lk.Listen, far.addr()
	if far.count(through, "/work") < 20 || far.count(straight, "/work") != 0 ||
		far.count(through, "/case") != 1 || far.count(straight, "/case") != 0 ||
		far.count(straight, "/ping") < 1+linkRTTAsks {
		t.Errorf("far saw %v; want the load's /work (20 or more) and the compat case's /case through %s, and at least %d /ping straight to %s",
			far.hosts, through, 1+linkRTTAsks, straight)
	}
	for hostPath := range near.hosts {
		if !strings.HasPrefix(hostPath, near.addr()+"/") {
			t.Errorf("near saw requests for %s (%v); want every one straight to %s", hostPath, near.hosts, near.addr())
		}
	}
	if near.count(near.addr(), "/work") < 20 || near.count(near.addr(), "/case") != 1 {
		t.Errorf("near saw %v; want the load's /work (20 or more) and one /case", near.hosts)
	}
}

// TestNetworkPerturbations cuts a target's path (it has no network: a
// pass-through link is put in front of it) under an open loop: the load
// fails only from the cut on and is answered again after; a degrade
// records the conditions it set; a partition fails nothing; and none ends
// before its for.
func TestNetworkPerturbations(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // asserts floors and counts, not speeds
	srv := newHostCounter(t)
	o := options(t, nil)
	src := `
version: 1
name: network perturbations
defaults: {rounds: 1, warmup: 50ms, max_rate_shortfall: 50}
targets:
  - name: cut
    endpoints: {http: "http://` + srv.addr() + `"}
    ready: {first_answer: {call: ping}, timeout: 5m}
calls:
  ping: {http: {path: /ping}}
scenarios:
  - name: outage
    call: ping
    load: {rate: 100, connections: 1}
    duration: 3s
    perturbations: [{at: 1s, action: disconnect, for: 300ms}]
  - name: slow
    call: ping
    load: {rate: 50, connections: 1}
    duration: 2s
    perturbations: [{at: 500ms, action: degrade, for: 300ms, network: {delay: 100ms, down: {bandwidth: 1MB/s}}}]
  - name: held
    call: ping
    load: {rate: 50, connections: 1}
    duration: 2s
    perturbations: [{at: 500ms, action: partition, for: 300ms}]
`
	if _, err := Run(context.Background(), runtest.Parse(t, src), o); err != nil {
		t.Fatal(err)
	}
	res := readResults(t, o.Out)
	nw := res.Targets[0].Network
	if nw == nil || len(nw.Links) != 1 || nw.Up != (results.LinkConditions{}) || nw.Down != (results.LinkConditions{}) {
		t.Fatalf("network: %+v; want one link that passes everything", nw)
	}
	one := func(sc int) (results.Round, results.Perturbation) {
		t.Helper()
		rds := res.Scenarios[sc].Rounds
		if len(rds) != 1 || rds[0].Failed || len(rds[0].Perturbations) != 1 {
			t.Fatalf("scenario %s: rounds %+v; want one, not failed, with one perturbation", res.Scenarios[sc].Name, rds)
		}
		ev := rds[0].Perturbations[0]
		if ev.Error != "" {
			t.Fatalf("%s: %s", ev.Action, ev.Error)
		}
		return rds[0], ev
	}
	rd, ev := one(0)
	var failed int64
	for _, n := range rd.Errors {
		failed += n
	}
	if ev.Action != "disconnect" || time.Duration(ev.AtNs) < time.Second || time.Duration(ev.DownNs) < 300*time.Millisecond ||
		ev.AnswersAfterNs < ev.DownNs || ev.ReadyAfterNs != ev.AnswersAfterNs {
		t.Errorf("disconnect: %+v; want at 1 s or later, cut for 300 ms or more, answering after that", ev)
	}
	// every failure of the round is the disconnect's (none before it), and
	// some ended while the path was cut (a request the cut reset may be
	// seen to fail only after the path is back)
	if ev.Errors == 0 || failed != ev.Errors || ev.ErrorsWhileDown == 0 || rd.OK == 0 {
		t.Errorf("the round has %d failed (%v) and %d ok; the disconnect counted %d, %d while cut; want a burst, all of it the disconnect's",
			failed, rd.Errors, rd.OK, ev.Errors, ev.ErrorsWhileDown)
	}
	back := ev.AtNs + ev.AnswersAfterNs
	var after int64
	for _, sec := range rd.Series {
		if sec.T*int64(time.Second) >= back {
			after += sec.OK
		}
	}
	if after == 0 {
		t.Errorf("the load was not answered after the path was back at %v: series %+v", time.Duration(back), rd.Series)
	}
	_, ev = one(1)
	want := &results.Degraded{Up: results.LinkConditions{DelayNs: int64(100 * time.Millisecond)},
		Down: results.LinkConditions{DelayNs: int64(100 * time.Millisecond), BandwidthBytesPerS: 1_000_000}}
	if ev.Action != "degrade" || ev.Degraded == nil || *ev.Degraded != *want || time.Duration(ev.DownNs) < 300*time.Millisecond {
		t.Errorf("degrade: %+v (degraded %+v); want %+v for 300 ms or more", ev, ev.Degraded, want)
	}
	// a partition holds and resets nothing: what waited is delivered
	rd, ev = one(2)
	if ev.Action != "partition" || ev.Errors != 0 || len(rd.Errors) != 0 || rd.OK == 0 || time.Duration(ev.DownNs) < 300*time.Millisecond {
		t.Errorf("partition: %+v, round errors %v, %d ok; want no failure, held 300 ms or more", ev, rd.Errors, rd.OK)
	}
}

// refusingFleet is a fleet that must not be asked to run anything.
type refusingFleet struct{ t *testing.T }

func (f refusingFleet) Load(context.Context, FleetPart) (results.Sample, error) {
	f.t.Error("a fleet ran a part of a study whose path goes through a link")
	return results.Sample{}, nil
}

// TestNetworkRefusesFleet holds that a study with a network path is not
// run on a fleet's workers, which would dial the target and not the link
// on this machine's loopback.
func TestNetworkRefusesFleet(t *testing.T) {
	for _, c := range []struct{ name, target, perturb string }{
		{"network", "network: {delay: 1ms}", ""},
		{"perturbation", "", "perturbations: [{at: 100ms, action: partition, for: 100ms}]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := options(t, nil)
			o.Fleet = refusingFleet{t}
			src := `
version: 1
name: fleet
targets:
  - name: a
    endpoints: {http: "http://127.0.0.1:1/"}
    ` + c.target + `
calls:
  ping: {http: {path: /}}
scenarios:
  - name: s
    call: ping
    load: {rate: 10}
    duration: 1s
    ` + c.perturb + `
`
			_, err := Run(context.Background(), runtest.Parse(t, src), o)
			if err == nil || !strings.Contains(err.Error(), "target a: a network path") {
				t.Fatalf("Run on a fleet = %v; want the network path refused", err)
			}
		})
	}
}

// TestOpenLinkRewrites holds that an endpoint pointed at its link keeps
// its scheme, user info, path and a loopback host name (TLS verifies the
// name and sends it as SNI), and takes the link's port, and its address
// when the host is one; and that the link forwards to the endpoint.
func TestOpenLinkRewrites(t *testing.T) {
	srv := newHostCounter(t)
	_, port, _ := strings.Cut(srv.addr(), ":")
	for _, c := range []struct{ ep, prefix, suffix string }{
		{"http://127.0.0.1:" + port + "/ping?x=1", "http://127.0.0.1:", "/ping?x=1"},
		{"https://localhost:" + port + "/v1", "https://localhost:", "/v1"},
		{"amqp://user:secret@127.0.0.1:" + port + "/vhost", "amqp://user:secret@127.0.0.1:", "/vhost"},
		{"127.0.0.1:" + port, "127.0.0.1:", ""},
	} {
		pl, got, err := openLink(context.Background(), "e", c.ep, link.Options{})
		if err != nil {
			t.Fatalf("openLink(%s): %v", c.ep, err)
		}
		_, linkPort, _ := strings.Cut(pl.Addr(), ":")
		if want := c.prefix + linkPort + c.suffix; got != want || linkPort == port {
			t.Errorf("openLink(%s) = %s; want %s", c.ep, got, want)
		}
		// the link forwards to the endpoint: a request through it reaches the server
		resp, err := http.Get("http://" + pl.Addr() + "/")
		if err != nil {
			t.Errorf("through the link of %s: %v", c.ep, err)
		} else {
			resp.Body.Close()
		}
		if err := pl.Close(); err != nil {
			t.Error(err)
		}
	}
	total := 0
	srv.mu.Lock()
	for _, n := range srv.hosts {
		total += n
	}
	srv.mu.Unlock()
	if total != 4 {
		t.Errorf("the server saw %d requests through the links (%v); want 4", total, srv.hosts)
	}
	if _, _, err := openLink(context.Background(), "e", "unix:///tmp/x.sock", link.Options{}); err == nil {
		t.Error("openLink of a unix socket: no error")
	}
}
