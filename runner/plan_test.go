package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/runner/internal/runtest"
)

// A plan is the study's arithmetic: starts, cases, warm-ups, calibrations,
// rounds and cells, each at the study's lengths or the plan's assumptions.
func TestPlan(t *testing.T) {
	src := `version: 1
name: plan
defaults: {rounds: 3, warmup: 500ms, min_duration: 2s}
startup: {runs: 2}
targets:
  - {name: a, start: {command: [srv]}, endpoints: {http: "http://127.0.0.1:${port.http}/"}}
  - {name: b, start: {command: [srv]}, endpoints: {http: "http://127.0.0.1:${port.http}/"}}
calls:
  ping: {http: {path: /}}
  get: {http: {path: "/${k}"}}
compat:
  cases:
    - {call: get, vary: {k: [x, y, z]}}
scenarios:
  - {name: closed, call: ping, load: {concurrency: [1, 8]}}
  - {name: counted, call: ping, load: {concurrency: 1}, requests: 100, rounds: 2}
  - {name: open, call: ping, load: {rate: 100}, duration: 3s}
  - {name: cells, call: ping, sweep: {connections: [1, 4], rate: [10, 20], duration: 3s}}
`
	s := runtest.Parse(t, src)
	p := NewPlan(s, Options{})
	want := []struct {
		phase, name string
		estimate    time.Duration
	}{
		{"startup", "", 4 * planStart},
		{"compat", "", 6 * planCase},
		{"probes", "", 2 * planProbe},
		// 2 levels × (2 warm-ups of 0.5s + 2 calibrations of 3 × 2s + 3 rounds × 2 targets × 2s)
		{"scenario", "closed", 2 * (time.Second + 12*time.Second + 12*time.Second)},
		// a count: no calibration; 2 warm-ups, 2 rounds × 2 targets × ~2s
		{"scenario", "counted", time.Second + 8*time.Second},
		{"scenario", "open", time.Second + 18*time.Second},
		{"sweep", "cells", 8 * 3 * time.Second},
	}
	if len(p.Steps) != len(want) {
		t.Fatalf("plan:\n%s", p)
	}
	var total time.Duration
	for i, w := range want {
		st := p.Steps[i]
		if st.Phase != w.phase || st.Name != w.name || st.Estimate != w.estimate {
			t.Errorf("step %d: %s %s %v (%s); want %s %s %v", i, st.Phase, st.Name, st.Estimate, st.Detail, w.phase, w.name, w.estimate)
		}
		total += w.estimate
	}
	if p.Total != total {
		t.Errorf("total %v, want %v", p.Total, total)
	}
	if txt := p.String(); !strings.Contains(txt, "2 levels × 2 targets × 3 rounds of ~2s, calibrated") || !strings.Contains(txt, "total") {
		t.Errorf("the plan as text:\n%s", txt)
	}
	// --only and --rounds: only what runs is planned
	p = NewPlan(s, Options{Only: []string{"compat", "open"}, Rounds: 1})
	if len(p.Steps) != 4 || p.Steps[0].Detail != "2 targets started from empty" || p.Steps[3].Name != "open" ||
		p.Steps[3].Estimate != time.Second+6*time.Second {
		t.Errorf("--only compat,open --rounds 1:\n%s", p)
	}
}

func TestRoundEstimate(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{1500 * time.Millisecond, "1.5s"}, {90 * time.Second, "1m30s"}, {2 * time.Minute, "2m"}, {time.Hour, "1h"}, {time.Hour + 30*time.Second, "1h0m30s"}} {
		if got := roundEstimate(c.d); got != c.want {
			t.Errorf("roundEstimate(%v) = %q; want %q", c.d, got, c.want)
		}
	}
}
