// Package runfixture makes small, valid runs for the tests of what reads
// results: one latency scenario on one target, rounds of given p50s.
package runfixture

import (
	"testing"
	"time"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// Latency is a run of study: scenario "lat" (call get, a closed loop of
// one client, lower is better) on target a, one round per p50 (in µs),
// made at the given time.
func Latency(study string, at time.Time, p50s ...float64) *results.Results {
	r := results.New()
	r.Study.Name = study
	r.CreatedAt = at
	r.Machine = results.Machine{CPUModel: "cpu", Cores: 2, OS: "linux", Arch: "amd64"}
	sc := results.Scenario{Name: "lat", Call: "get", Metric: "p50", Direction: results.Lower, Unit: "request",
		Load: results.Load{Model: "closed", Concurrency: []int{1}}}
	var vals []float64
	for i, v := range p50s {
		sc.Rounds = append(sc.Rounds, results.Round{Round: i + 1, Target: "a", Concurrency: 1, Headline: v * 1e3,
			Sample: results.Sample{Requests: 10, OK: 10}})
		vals = append(vals, v*1e3)
	}
	s := stats.Summarize(vals, false)
	sc.Summary = []results.Summary{{Target: "a", Concurrency: 1, N: len(vals), Best: s.Best, Median: s.Median, Worst: s.Worst}}
	r.Scenarios = []results.Scenario{sc}
	return r
}

// JSON is r's results.json.
func JSON(t testing.TB, r *results.Results) []byte {
	t.Helper()
	b, err := results.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
