package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/verdict"
)

// A grid run in rounds gets a table of its cells over their runs with each
// target's verdict against the baseline; a grid run once does not.
func TestCellSummaryTable(t *testing.T) {
	grid := func(target string, means ...float64) results.Sweep {
		sw := results.Sweep{Scenario: "qa", Target: target, Load: "batched", Confirm: "answer", Rule: "confirmed < expected", Rounds: len(means)}
		for i, m := range means {
			sw.Cells = append(sw.Cells, results.Cell{Connections: 2, Rate: 50, DurationNs: 3e9, Expected: 200, Sent: 200, OK: 200,
				Confirmed: 200, Round: i + 1, LatencyNs: results.Distribution{Mean: m, P99: int64(2 * m)}})
		}
		return sw
	}
	for _, tc := range []struct {
		name  string
		a, b  []float64
		wants []string
	}{
		{"rounds", []float64{10e6, 11e6, 10.5e6, 10.2e6, 10.7e6, 10.4e6, 10.9e6}, []float64{20e6, 21e6, 20.5e6, 20.4e6, 21.4e6, 20.8e6, 21.8e6},
			[]string{"Sweep qa: cells over their rounds", "2 conns × 50/s", "10ms [10.5ms … 11ms]", "b is 2.00× slower than a"}},
		{"once", []float64{10e6}, []float64{20e6}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := results.New()
			r.Sweeps = []results.Sweep{grid("a", tc.a...), grid("b", tc.b...)}
			verdict.Sweep(stats.DefaultPolicy(), []*results.Sweep{&r.Sweeps[0], &r.Sweeps[1]}, "a", 0.05)
			var b bytes.Buffer
			if err := Text(&b, r); err != nil {
				t.Fatal(err)
			}
			if tc.wants == nil && strings.Contains(b.String(), "cells over their rounds") {
				t.Errorf("a grid run once has a summary table:\n%s", b.String())
			}
			for _, want := range tc.wants {
				if !strings.Contains(b.String(), want) {
					t.Errorf("the text report lacks %q:\n%s", want, b.String())
				}
			}
		})
	}
}

// A cell saturated because its latency grew, not because it fell short,
// says so in its state.
func TestCellLatencyGrowsShown(t *testing.T) {
	r := results.New()
	r.Sweeps = []results.Sweep{{Scenario: "edge", Target: "a", Load: "open", Confirm: "answer",
		Rule: "confirmed < 95 % of expected, or the latency grows over the cell", Cells: []results.Cell{
			{Connections: 1, Rate: 50, DurationNs: 2e9, Expected: 50, Sent: 50, OK: 50, Confirmed: 50, ThirdsP50Ns: []int64{1e6, 1e6, 1e6}},
			{Connections: 1, Rate: 90, DurationNs: 2e9, Expected: 90, Sent: 90, OK: 90, Confirmed: 88, Saturated: true, LatencyGrows: true,
				ThirdsP50Ns: []int64{5e6, 40e6, 80e6}},
		}}}
	var b bytes.Buffer
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(b.String(), "latency grows"); got != 2 { // the rule, and the cell's state
		t.Errorf("%q appears %d times; want in the rule and the one cell's state:\n%s", "latency grows", got, b.String())
	}
	if !strings.Contains(b.String(), "SATURATED, latency grows") {
		t.Errorf("the saturated cell's state does not say its latency grew:\n%s", b.String())
	}
}
