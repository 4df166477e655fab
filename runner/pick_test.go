package runner

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
)

// A perturbation that picks its node by what the nodes report kills the
// node the probe names: the one whose leader field is its own name (a1),
// then the one whose height is highest (a2); each event records the node
// and how it was chosen. A pick no node matches is an event with its
// error, nothing killed.
func TestPerturbationPicksNodeByProbe(t *testing.T) {
	tooltest.Long(t)
	if runtime.GOOS != "linux" {
		t.Skip("the nodes bind 127.0.0.2 and 127.0.0.3, which only Linux routes to loopback without set-up")
	}
	t.Parallel()
	o := options(t, nil)
	src := `
version: 1
name: pick
defaults: {rounds: 1, warmup: 50ms, max_rate_shortfall: 10}
targets:
  - name: net
    group:
      nodes: [{role: a, count: 3}]
    start:
      command: ["${tandem}", --addr, "${node.host}:${port.http}",
                --status, '{"self": "${node.name}", "leader": "a1", "height": ${node.index}}']
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://${node.host}:${port.http}"}
    ready: {first_answer: {call: ping}, timeout: 5m}
calls:
  ping: {http: {path: /ping}}
  status: {http: {path: /status}}
scenarios:
  - name: faults
    call: ping
    load: {rate: 100, connections: 2}
    duration: 3s
    perturbations:
      - {at: 200ms, action: kill, pick: {call: status, field: leader, equals: "nobody"}}
      - {at: 500ms, action: kill, pick: {call: status, field: leader, equals_field: self}}
      - {at: 1500ms, action: kill, pick: {call: status, field: height, highest: true}}
`
	res, err := Run(context.Background(), runtest.Parse(t, src), o)
	if err != nil {
		t.Fatal(err)
	}
	sc := res.Scenarios[0]
	var evs []string
	for _, rd := range sc.Rounds {
		for _, ev := range rd.Perturbations {
			evs = append(evs, ev.Node+"|"+ev.Error)
			switch {
			case strings.Contains(ev.Chosen, "equals") || ev.Node == "a1":
				if !strings.Contains(ev.Chosen, "status leader (a0: a1; a1: a1; a2: a1)") {
					t.Errorf("the leader pick: %+v", ev)
				}
			case ev.Node == "a2":
				if !strings.Contains(ev.Chosen, "status height (a0: 0; a1: 1; a2: 2)") {
					t.Errorf("the highest pick: %+v", ev)
				}
			default:
				t.Errorf("an event on no picked node: %+v", ev)
			}
		}
	}
	// a kill waits for its node to be ready again: a busy machine's slow
	// restart of a1 can push the second kill past the round's end
	if len(evs) == 0 || evs[0] != "a1|" || len(evs) > 2 || len(evs) == 2 && evs[1] != "a2|" {
		t.Errorf("events %q; want a1 killed, then (time allowing) a2", evs)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, "kill on net at") && strings.Contains(w, "not done: pick: no node's leader matched: status leader (a0: a1; a1: a1; a2: a1)")
	}) {
		t.Errorf("warnings %q; want the pick that matched nothing said", res.Warnings)
	}
}
