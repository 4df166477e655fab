package report

import (
	"slices"
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
