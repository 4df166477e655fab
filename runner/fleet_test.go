package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/fleet"
	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
)

// inProcessFleet is a fleet of one worker in this process: each part
// travels as JSON and runs as a worker runs it (FleetJob: Split, then
// RunFleetPart), and the engine each part was given is recorded by target.
type inProcessFleet struct {
	mu      sync.Mutex
	engines map[string][]string
}

func (f *inProcessFleet) Load(ctx context.Context, p FleetPart) (results.Sample, error) {
	f.mu.Lock()
	f.engines[p.Target] = append(f.engines[p.Target], p.Spec.Engine)
	f.mu.Unlock()
	b, err := json.Marshal(p)
	if err != nil {
		return results.Sample{}, err
	}
	rep, err := FleetJob(ctx, &fleet.Part{Assignment: fleet.Assignment{Index: 0, Count: 1, Spec: b}})
	return rep.Sample, err
}

// A scenario run on a fleet obeys the rule of one machine: every target
// on one engine, the workers when the event loop cannot run one of them
// (here a target on IPv6, which the loop does not reach): each part goes
// out with it. Where the loop can run them all, the parts leave it to the
// worker (its system decides, for all its targets alike); each sample
// names the engine that ran.
func TestFleetOneEngine(t *testing.T) {
	tooltest.Long(t)
	if runtime.GOOS != "linux" {
		t.Skip("the event loop is Linux's: elsewhere every target runs on the workers anyway")
	}
	t.Parallel()
	v4 := newHostCounter(t)
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	v6 := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"ok": true}`) })}
	go v6.Serve(ln)
	t.Cleanup(func() { v6.Close() })
	for _, c := range []struct {
		name, targets, want string
	}{
		{"both IPv4", "[a, b]", ""},
		{"one on IPv6", "[a, six]", load.EngineWorkers},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := options(t, nil)
			f := &inProcessFleet{engines: map[string][]string{}}
			o.Fleet = f
			src := `
version: 1
name: fleet engines
defaults: {rounds: 1, warmup: 50ms}
targets:
  - {name: a, endpoints: {http: "http://` + v4.addr() + `"}}
  - {name: b, endpoints: {http: "http://` + v4.addr() + `"}}
  - {name: six, endpoints: {http: "http://` + ln.Addr().String() + `"}}
calls:
  ping: {http: {path: /ping}}
scenarios:
  - name: s
    call: ping
    targets: ` + c.targets + `
    load: {concurrency: 2}
    requests: 50
`
			res, err := Run(context.Background(), runtest.Parse(t, src), o)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.engines) != 2 {
				t.Fatalf("parts for %v; want two targets", f.engines)
			}
			for target, engines := range f.engines {
				for _, e := range engines {
					if e != c.want {
						t.Errorf("target %s: a part on engine %q; want %s for every part", target, e, c.want)
					}
				}
			}
			ran := cmp.Or(c.want, load.EngineLoop) // left to a Linux worker: the loop, for both
			for _, rd := range res.Scenarios[0].Rounds {
				if rd.Engine != ran || rd.OK == 0 {
					t.Errorf("round of %s: engine %q, %d ok; want %s, answers", rd.Target, rd.Engine, rd.OK, ran)
				}
			}
		})
	}
}

// A part's share: the load's (load.Spec.Split), a closed gRPC loop's
// shared connections shared out alike, tandem load's rate named; a worker
// left without a shared connection is refused.
func TestFleetPartSplit(t *testing.T) {
	closed := FleetPart{Target: "t", Shared: 5, Spec: load.Spec{Kind: load.KindClosed, Clients: 100}}
	var shared, clients int
	for i := range 2 {
		p, words, err := closed.Split(i, 2)
		if err != nil {
			t.Fatal(err)
		}
		shared, clients = shared+p.Shared, clients+p.Spec.Clients
		if !strings.Contains(words, "shared connections") {
			t.Errorf("share %d: %q names no shared connections", i, words)
		}
	}
	if shared != 5 || clients != 100 {
		t.Errorf("the shares hold %d shared connections and %d clients; want 5 and 100", shared, clients)
	}
	if _, _, err := (FleetPart{Target: "t", Shared: 1, Spec: load.Spec{Kind: load.KindClosed, Clients: 4}}).Split(1, 2); err == nil {
		t.Error("a worker without a shared connection: no error")
	}
	open := FleetPart{Target: "t", Rate: "100-200", Spec: load.Spec{Kind: load.KindOpen, Connections: 4, Schedule: load.Ramp{From: 100, To: 200, Duration: time.Second}}}
	if _, words, err := open.Split(0, 2); err != nil || !strings.HasSuffix(words, " (of 100-200/s)") {
		t.Errorf("an open share: %q, %v; want it to name the rate as given", words, err)
	}
}

// A worker refuses a share it cannot run: an engine it does not know, a
// quantum without the event loop, more clients than its open files hold.
func TestFleetFits(t *testing.T) {
	for _, c := range []struct {
		spec load.Spec
		want string
	}{
		{load.Spec{Kind: load.KindClosed, Clients: 1, Engine: "fast"}, "engine fast"},
		{load.Spec{Kind: load.KindOpen, Connections: 1, Quantum: time.Millisecond}, "quantum"},
		{load.Spec{Kind: load.KindClosed, Clients: 1 << 30}, "more than this worker holds"},
	} {
		if err := fits(c.spec, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error saying %q", c.spec, err, c.want)
		}
	}
	if err := fits(load.Spec{Kind: load.KindBatched, Connections: 2}, nil); err != nil {
		t.Errorf("a batched share: %v", err)
	}
}
