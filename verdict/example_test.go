package verdict_test

import (
	"fmt"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/verdict"
)

// run is a results file of one latency scenario: target a's rounds at
// the given p50s, in nanoseconds.
func run(p50s ...float64) *results.Results {
	r := results.New()
	sc := results.Scenario{Name: "lat", Direction: "lower", Summary: []results.Summary{{Target: "a", Concurrency: 1, N: len(p50s)}}}
	for i, v := range p50s {
		sc.Rounds = append(sc.Rounds, results.Round{Round: i + 1, Target: "a", Concurrency: 1, Headline: v,
			Sample: results.Sample{Requests: 1000, OK: 1000}})
	}
	r.Scenarios = append(r.Scenarios, sc)
	return r
}

// The head's latency grew by half: beyond a 5 % allowance, a regression.
func ExampleCompareRuns() {
	base := run(100_000, 101_000, 100_500, 99_800, 100_200, 100_900, 99_900, 100_100)
	head := run(150_000, 151_000, 150_500, 149_800, 150_200, 150_900, 149_900, 150_100)
	c, err := verdict.CompareRuns(base, head, verdict.Options{MaxRegression: 5})
	if err != nil {
		panic(err)
	}
	for _, ch := range c.Changes {
		fmt.Printf("%s %s: %s, regression %v\n", ch.Scenario, ch.Target, ch.Verdict, ch.Regression)
	}
	fmt.Println(c.Gate())
	// Output:
	// lat a: slower, regression true
	// 1 regressions (beyond 5 %, failing, dropping, missing or changed)
}
