package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tandem-bench/tandem/internal/golden"
	"github.com/tandem-bench/tandem/results"
)

func TestExports(t *testing.T) {
	res, err := results.Read("testdata/demo-results.json")
	if err != nil {
		t.Fatal(err)
	}
	rounds, cells := 0, 0
	for _, sc := range res.Scenarios {
		rounds += len(sc.Rounds)
	}
	for _, sw := range res.Sweeps {
		cells += len(sw.Cells)
	}
	var b bytes.Buffer
	if err := CSV(&b, res); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != rounds+cells+1 || rows[0][0] != "scenario" || cells == 0 {
		t.Errorf("CSV: %v, %d rows for %d rounds and %d sweep cells", err, len(rows), rounds, cells)
	}
	kinds := map[string]int{}
	for _, row := range rows[1:] {
		kinds[row[len(row)-5]]++
	}
	if kinds["round"] != rounds || kinds["cell"] != cells {
		t.Errorf("CSV kinds %v; want %d rounds and %d cells", kinds, rounds, cells)
	}
	b.Reset()
	if err := Bench(&b, res); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/demo.bench", b.Bytes())
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n")[4:] {
		if f := strings.Fields(line); len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || f[3] != "ns/op" {
			t.Errorf("not a Go benchmark line: %q", line)
		}
	}
	b.Reset()
	if err := HDRLog(&b, res); err != nil {
		t.Fatal(err)
	}
	r := hdrhistogram.NewHistogramLogReader(&b)
	n := 0
	// each interval starts where the one before ended, on a timeline from
	// the run's creation, in the format's seconds (read back as ms)
	var durations []int64
	for _, sc := range res.Scenarios {
		for _, rd := range sc.Rounds {
			if rd.HDR != "" {
				durations = append(durations, max(rd.DurationNs/1e6, 1))
			}
		}
	}
	at := res.CreatedAt.UnixMilli()
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		if h.TotalCount() == 0 || h.Tag() == "" {
			t.Errorf("interval %d: %d values, tag %q", n, h.TotalCount(), h.Tag())
		}
		if d := h.StartTimeMs() - at; d < -1 || d > 1 {
			t.Errorf("interval %d starts at %d ms; want %d (the run's start and the rounds before it)", n, h.StartTimeMs(), at)
		}
		if n < len(durations) {
			at += durations[n]
		}
		n++
	}
	if n != rounds {
		t.Errorf("%d intervals in the HDR log; want one per round (%d)", n, rounds)
	}
}
