package finding_test

import (
	"fmt"

	"github.com/tandem-bench/tandem/finding"
	"github.com/tandem-bench/tandem/results"
)

// A stall confirmed by its two probes, as results.json keeps it.
func ExampleStall_Finding() {
	probe := func(p50 int64, share float64) finding.Probe {
		return finding.Probe{Sample: results.Sample{LatencyNs: results.Distribution{P50: p50}}, Share: share}
	}
	f := finding.Stall{Target: "b", Scenario: "balance-latency", Call: "balance", Share: 0.91, Requests: 100,
		Probe: probe(44_007_423, 0.97), QuickACK: probe(217_087, 0)}.Finding()
	fmt.Println(f.ID, f.Evidence["probe_p50_ns"], f.Evidence["quickack_share_36_48ms"])
	fmt.Println(f.Summary)
	// Output:
	// delayed-ack-stall 44007423 0.000
	// b stalls ~40 ms on balance: 97% of its answers take 36–48 ms, 0% when the client ACKs at once (p50 44ms → 217µs): its responses wait for the client's delayed ACK (TCP_NODELAY off). Fix: set TCP_NODELAY on accepted sockets (Go does by default); write each response in one write.
}
