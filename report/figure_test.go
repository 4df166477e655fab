package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/metrics"
	"github.com/tandem-bench/tandem/results"
)

func TestAligned(t *testing.T) {
	f := aligned(figure{ID: "x"}, []line{
		{label: "a", color: 0, pts: [][2]float64{{1, 10}, {3, 30}}},
		{label: "b", color: 1, pts: [][2]float64{{2, 20}, {3, 31}}},
		{label: "empty", color: 2},
	})
	if f == nil || !slices.Equal(f.Xs, []float64{1, 2, 3}) || len(f.Series) != 2 {
		t.Fatalf("aligned: %+v; want x 1, 2, 3 and the two series with points", f)
	}
	val := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	var a, b []float64
	for i := range f.Xs {
		a, b = append(a, val(f.Series[0].Ys[i])), append(b, val(f.Series[1].Ys[i]))
	}
	if !slices.Equal(a, []float64{10, -1, 30}) || !slices.Equal(b, []float64{-1, 20, 31}) {
		t.Errorf("a %v, b %v; want each value at its x and a gap elsewhere", a, b)
	}
	if aligned(figure{}, []line{{label: "none"}}) != nil {
		t.Error("a figure without a point was drawn")
	}
}

// Each scraped series is one chart with every target overlaid in the
// target's colour; the machine's load is drawn once.
func TestMetricFiguresOverlayTargets(t *testing.T) {
	r, err := results.Read("testdata/demo-results.json")
	if err != nil {
		t.Fatal(err)
	}
	col := targetColours(r)
	figs := metricFigures(r, col)
	byTitle := map[string]figure{}
	for _, f := range figs {
		byTitle[f.Title] = f
	}
	if len(figs) != 4 {
		t.Fatalf("%d metric charts; want 4 (one per series)", len(figs))
	}
	load := byTitle[metrics.Load1]
	if len(load.Series) != 1 || load.Series[0].Label != "machine" {
		t.Errorf("%s: %+v; want one machine-wide line", metrics.Load1, load.Series)
	}
	g := byTitle["go_goroutines"]
	if len(g.Series) != 2 || g.Series[0].Label != "a" || g.Series[1].Label != "b" || g.Series[0].Color != col["a"] || g.Series[1].Color != col["b"] {
		t.Errorf("go_goroutines: %d series; want a and b overlaid in their colours", len(g.Series))
	}
	if len(g.Derived) != 2 {
		t.Errorf("go_goroutines derived %v; want mean, max and slope per target", g.Derived)
	}
	if rss := byTitle["process_resident_memory_bytes"]; rss.YUnit != "B" {
		t.Errorf("RSS unit %q; want B", rss.YUnit)
	}
}

// A target keeps its colour everywhere: in every scenario's spectrum, in
// the sweeps, in the metrics.
func TestOneColourPerTarget(t *testing.T) {
	r, err := results.Read("testdata/demo-results.json")
	if err != nil {
		t.Fatal(err)
	}
	col := targetColours(r)
	if col["a"] == col["b"] {
		t.Fatalf("a and b share colour %d", col["a"])
	}
	seen := map[int]string{}
	for _, s := range sections(r, col) {
		for _, f := range s.Figures {
			for _, sr := range f.Series {
				tgt := sr.Label[:1]
				if sr.Label == "machine" {
					continue
				}
				if sr.Color != col[tgt] {
					t.Errorf("%s: %q in colour %d; want %d", f.Title, sr.Label, sr.Color, col[tgt])
				}
				seen[sr.Color] = tgt
			}
		}
	}
	if len(seen) != 2 {
		t.Errorf("colours used %v; want a's and b's", seen)
	}
}

// A chart whose values span more than 20× gets a log axis that says so (a
// 158 µs line sat flat on zero beside a 44 ms one); one with a zero, or a
// narrow span, stays linear.
func TestLogAxisWhenValuesSpanDecades(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		log  bool
	}{
		{"158µs beside 44ms", []float64{158e3, 160e3}, []float64{44e6, 43e6}, true},
		{"within 20×", []float64{100, 120}, []float64{1500, 1900}, false},
		{"a zero", []float64{0, 158e3}, []float64{44e6, 43e6}, false},
	} {
		f := aligned(figure{ID: "x", Kind: "xy", Y: "p50 latency"}, []line{
			{label: "a", pts: [][2]float64{{1, tc.a[0]}, {2, tc.a[1]}}},
			{label: "b", pts: [][2]float64{{1, tc.b[0]}, {2, tc.b[1]}}},
		})
		if f.LogY != tc.log || strings.HasSuffix(f.Y, " (log scale)") != tc.log {
			t.Errorf("%s: logy %v, axis %q; want log %v", tc.name, f.LogY, f.Y, tc.log)
		}
	}
}
