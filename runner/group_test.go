package runner

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
)

// A group target of three HTTP nodes, each on a loopback address of its
// own: the setup runs once, every node starts from the one template and
// is reported, the load goes round-robin, and a kill every 1.5 s rotates
// over the role it names (a0, a1, a0) while b0 is left alone. A kill waits
// for the node before it to be ready again, so a busy machine's slow
// restarts can push the third past the load's end: the kills are a0, a1
// and perhaps a0 again, and every node listened once more than it was
// killed.
func TestGroupTarget(t *testing.T) {
	tooltest.Long(t)
	if runtime.GOOS != "linux" {
		t.Skip("the nodes bind 127.0.0.2 and 127.0.0.3, which only Linux routes to loopback without set-up")
	}
	t.Parallel() // asserts what happened, not how fast
	o := options(t, nil)
	src := `
version: 1
name: group
defaults: {rounds: 1, warmup: 50ms, max_rate_shortfall: 10}
targets:
  - name: net
    group:
      nodes: [{role: a, count: 2}, {role: b, count: 1}]
      setup: [[touch, "${workdir}/setup-ran-${group.port.shared}"]]
      calls: round-robin
    start:
      command: ["${tandem}", --addr, "${node.host}:${port.http}", --listen-log, "${workdir}/${node.name}.listens"]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://${node.host}:${port.http}/ping"}
    ready: {first_answer: {call: ping}, timeout: 5m}
calls:
  ping: {http: {path: ""}}
scenarios:
  - name: rotate
    call: ping
    load: {rate: 300, connections: 3}
    duration: 4s
    perturbations: [{at: 500ms, action: kill, role: a, every: 1500ms}]
`
	res, err := Run(context.Background(), runtest.Parse(t, src), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Read(filepath.Join(o.Out, ResultsFile)); err != nil {
		t.Fatalf("the results do not validate: %v", err)
	}
	tg := res.Targets[0]
	if len(tg.Nodes) != 3 || tg.Startup == nil {
		t.Fatalf("nodes %+v, startup %+v; want 3 nodes and the group's startup", tg.Nodes, tg.Startup)
	}
	var hosts []string
	for i, n := range tg.Nodes {
		want := []string{"a0", "a1", "b0"}[i]
		if n.Name != want || n.Index != i || n.Startup == nil || n.Error != "" {
			t.Errorf("node %d: %+v; want %s, started", i, n, want)
		}
		hosts = append(hosts, n.Endpoints["http"][:len("http://127.0.0.N")])
		if tg.Startup.ReadyNs < n.Startup.ReadyNs {
			t.Errorf("the group was ready after %v, before node %s (%v)", time.Duration(tg.Startup.ReadyNs), n.Name, time.Duration(n.Startup.ReadyNs))
		}
	}
	if !slices.Equal(hosts, []string{"http://127.0.0.1", "http://127.0.0.2", "http://127.0.0.3"}) {
		t.Errorf("node hosts %v; want one loopback address each", hosts)
	}
	if m, _ := filepath.Glob(filepath.Join(o.Out, "work", "net", "setup-ran-*")); len(m) != 1 {
		t.Errorf("setup ran %d times; want once", len(m))
	}
	rd := res.Scenarios[0].Rounds[0]
	var nodes []string
	for _, ev := range rd.Perturbations {
		nodes = append(nodes, ev.Node)
		if ev.Error != "" || ev.AnswersAfterNs <= 0 {
			t.Errorf("perturbation %+v", ev)
		}
	}
	// the second kill needs only the first node back within the 3.5 s
	// left of the load: a hang guard, where the third needs it within 1.5 s
	if rotation := []string{"a0", "a1", "a0"}; len(nodes) < 2 || !slices.Equal(nodes, rotation[:min(len(nodes), len(rotation))]) {
		t.Errorf("killed %v; want a0, a1 (and a0 again if there was time) in turn", nodes)
	}
	if rd.Failed || rd.OK == 0 || rd.Errors["refused"]+rd.Errors["reset"]+rd.Errors["eof"] == 0 {
		t.Errorf("round %+v; want the load through the kills, with their failures", rd.Sample)
	}
	for _, name := range []string{"a0", "a1", "b0"} {
		starts := 1 + len(slices.DeleteFunc(slices.Clone(nodes), func(n string) bool { return n != name }))
		b, err := os.ReadFile(filepath.Join(o.Out, "work", "net", name+".listens"))
		if n := len(strings.Fields(string(b))); err != nil || n != starts {
			t.Errorf("%s listened %d times (%v); want %d: once and after each of the kills %v", name, n, err, starts, nodes)
		}
	}
}
