package runner

import (
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
)

// A round's progress line gives its counts as whole numbers with
// thousands separators ("66 of 66 ok", never "66.0 of 66.0 ok"), an open
// loop's rates and drops too; a sweep's rate in the progress is whole
// without decimals, fractional with three significant digits, never
// e-notation.
func TestProgressFigures(t *testing.T) {
	for _, c := range []struct {
		rd   results.Round
		want string
	}{
		{results.Round{Sample: results.Sample{Requests: 66, OK: 66, UnitsPerS: 330, Unit: "request", LatencyNs: results.Distribution{P50: 1_500_000, P99: 2_000_000}}},
			"66 of 66 ok, p50 1.5ms, p99 2ms, 330 request/s"},
		{results.Round{Sample: results.Sample{Requests: 12_345, OK: 12_300, UnitsPerS: 12_345.6, Unit: "request", OfferedRate: 20_000, AchievedRate: 12_345.6, Dropped: 7_655}},
			"12,300 of 12,345 ok, p50 0ns, p99 0ns, 12,346 request/s (offered 20,000/s, achieved 12,346/s, dropped 7,655)"},
		{results.Round{Failed: true, Error: "no successful request"}, "failed: no successful request"},
	} {
		if got := describeRound(c.rd); got != c.want {
			t.Errorf("describeRound = %q; want %q", got, c.want)
		}
	}
	for _, c := range []struct {
		rate float64
		want string
	}{{20_000, "20,000"}, {50, "50"}, {12_345.6, "12,346"}, {0.25, "0.250"}, {12.5, "12.5"}} {
		if got := fmtRate(c.rate); got != c.want || strings.Contains(got, "e+") {
			t.Errorf("fmtRate(%v) = %q; want %q", c.rate, got, c.want)
		}
	}
}
