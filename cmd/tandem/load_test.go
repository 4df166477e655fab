package main

import (
	"bytes"
	"testing"

	"github.com/tandem-bench/tandem/internal/golden"
	"github.com/tandem-bench/tandem/results"
)

// A fixed open-loop sample that missed its rate: the reports and the
// reasons given are compared with golden files.
func TestLoadReportsGolden(t *testing.T) {
	d := func(base int64) results.Distribution {
		return results.Distribution{Min: base, Mean: float64(base) * 2.5, P50: base * 2, P90: base * 3, P99: base * 5, P999: base * 8, Max: base * 10}
	}
	lag := d(10_000)
	first := d(50_000)
	s := results.Sample{Requests: 40_000, OK: 39_990, Errors: map[string]int64{"http:503": 7, "timeout": 3}, DurationNs: 10_000_000_000,
		Throughput: 3_999, Unit: "message", UnitsPerS: 39_990, LatencyNs: d(200_000), ServiceTimeNs: d(100_000),
		ScheduleLagNs: &lag, FirstMessageNs: &first, Dropped: 10_000, OfferedRate: 5_000, AchievedRate: 4_000}
	warnings := diagnose(s, 0, 2)
	for _, c := range []struct {
		file   string
		render func(*bytes.Buffer) error
	}{
		{"testdata/load.txt", func(b *bytes.Buffer) error { return loadText(b, s, warnings) }},
		{"testdata/load.md", func(b *bytes.Buffer) error { return loadMarkdown(b, s, warnings) }},
	} {
		var b bytes.Buffer
		if err := c.render(&b); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, c.file, b.Bytes())
	}
	if len(warnings) != 1 {
		t.Fatalf("warnings %q; want one about the missed rate", warnings)
	}
}
