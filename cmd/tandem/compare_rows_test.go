package main

import (
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
)

// startsAndKnee is a run with target a's starts from empty (ready after
// the given seconds, each ±1 %) and a search's knee at 4 connections.
func startsAndKnee(ready float64, sustained, saturated float64) *results.Results {
	r := results.New()
	r.Machine = results.Machine{CPUModel: "cpu", Cores: 2, Kernel: "6.1"}
	tg := results.Target{Name: "a"}
	for _, f := range []float64{0, 0.01, -0.01, 0.005, -0.005, 0.0025, -0.0075, 0.0075} {
		tg.StartupRuns = append(tg.StartupRuns, results.Startup{ReadyNs: int64(ready * 1e9 * (1 + f))})
	}
	r.Targets = []results.Target{tg}
	r.Sweeps = []results.Sweep{{Scenario: "sat", Target: "a", Load: "open", Confirm: "answer", Rule: "confirmed < 95 % of expected",
		Search: []results.SearchResult{{Connections: 4, Sustained: sustained, Saturated: saturated, Probes: 6, StopRule: "hi/lo ≤ 1.1"}}}}
	return r
}

// tandem compare lists a target's startup and a search's knee as rows of
// their own, in text and Markdown: a start 10× slower and a knee that fell
// from 1,585/s to 100/s are regressions.
func TestCompareShowsStartupAndKneeRows(t *testing.T) {
	base := writeResults(t, startsAndKnee(1, 1585, 1700))
	head := writeResults(t, startsAndKnee(10, 100, 120))
	for _, c := range []struct {
		format string
		want   []string
	}{
		{"text", []string{"\na startup (errors 0.0 % → 0.0 %): slower (head/base 10.0×: 900.0 % worse, [", "  REGRESSION\n",
			"\nsat a knee at 4 conns (errors –): slower (head/base 0.0631×: 93.7 % worse)  REGRESSION\n"}},
		{"md", []string{"|  | a | startup | **slower (head/base 10.0×: 900.0 % worse, \\[", "| sat | a | knee at 4 conns | **slower (head/base 0.0631×: 93.7 % worse), regression** | 0.0631× | – |"}},
	} {
		code, out, stderr := tandem(t, "compare", base, head, "--format", c.format)
		if code != exitCheckFailed {
			t.Errorf("%s: exit %d (%s); want %d", c.format, code, stderr, exitCheckFailed)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", c.format, w, out)
			}
		}
	}
}
