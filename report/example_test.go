package report_test

import (
	"fmt"
	"os"

	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
)

// The formats of a load run's sample, and the sample in one of them.
func ExampleSample() {
	fmt.Println("formats:", report.FormatList(report.ForSample))
	s := results.Sample{Requests: 100, OK: 100, DurationNs: 1e9, Unit: "request", Throughput: 100, UnitsPerS: 100,
		LatencyNs: results.Distribution{Min: 200_000, Mean: 250_000, P50: 240_000, P90: 300_000, P99: 400_000, P999: 450_000, Max: 500_000}}
	if err := report.Sample(os.Stdout, "md", report.SampleRun{Sample: s}); err != nil {
		panic(err)
	}
	// Output:
	// formats: text, md or json
	// | requests | ok | failed | duration | offered/s | achieved/s | throughput/s | dropped |
	// |---|---|---|---|---|---|---|---|
	// | 100 | 100 | 0 | 1s | 0.00 | 0.00 | 100 | 0 |
	//
	// | | min | mean | p50 | p90 | p99 | p99.9 | max |
	// |---|---|---|---|---|---|---|---|
	// | latency | 200µs | 250µs | 240µs | 300µs | 400µs | 450µs | 500µs |
	//
	// errors: none
}
