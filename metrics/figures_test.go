package metrics

import (
	"math"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/tandem-bench/tandem/results"
)

// Quantiles of known buckets, worked by hand as histogram_quantile does
// them: 10 observations ≤ 0.1, 20 more ≤ 0.5, 20 more ≤ 1, 10 above.
func TestQuantileKnownValues(t *testing.T) {
	buckets := []Bucket{{1, 50}, {0.1, 10}, {math.Inf(1), 60}, {0.5, 30}} // any order
	for _, c := range []struct {
		q, want float64
	}{
		{0, 0},
		{0.1, 0.06},   // rank 6 of the first 10, from 0 to 0.1
		{0.25, 0.2},   // rank 15: 5 of the 20 in (0.1, 0.5]
		{0.5, 0.5},    // rank 30: the top of (0.1, 0.5]
		{0.75, 0.875}, // rank 45: 15 of the 20 in (0.5, 1]
		{0.9, 1},      // rank 54: in +Inf, so the highest finite bound
		{1, 1},
	} {
		if got := Quantile(c.q, buckets); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("q %v: %v; want %v", c.q, got, c.want)
		}
	}
	for _, c := range []struct {
		name    string
		buckets []Bucket
		want    float64
	}{
		{"no +Inf bucket", []Bucket{{0.1, 1}, {1, 2}}, math.NaN()},
		{"one bucket", []Bucket{{math.Inf(1), 3}}, math.NaN()},
		{"no observations", []Bucket{{1, 0}, {math.Inf(1), 0}}, math.NaN()},
		{"a negative first bound", []Bucket{{-1, 5}, {1, 10}, {math.Inf(1), 10}}, -1},
		{"counts that fall (a reset between scrapes)", []Bucket{{1, 4}, {2, 3}, {math.Inf(1), 4}}, 0.5},
	} {
		got := Quantile(0.5, c.buckets)
		if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(got) && math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v; want %v", c.name, got, c.want)
		}
	}
}

// A counter's increase counts a reset as a restart from 0.
func TestIncreaseAcrossReset(t *testing.T) {
	pts := [][2]float64{{0, 10}, {1e9, 15}, {2e9, 3}, {4e9, 8}}
	if got := Increase(pts); got != 5+3+5 {
		t.Errorf("increase %v; want 13", got)
	}
	if got := Rate(pts); got != 13.0/4 {
		t.Errorf("rate %v; want 3.25/s", got)
	}
	if got := PerSecond(pts); len(got) != 3 || got[0] != [2]float64{1e9, 5} || got[1] != [2]float64{2e9, 3} || got[2] != [2]float64{4e9, 2.5} {
		t.Errorf("per second %v", got)
	}
	if !math.IsNaN(Rate(pts[:1])) {
		t.Error("a rate from one point")
	}
}

// A real exposition (client_golang's registry over HTTP) scraped before
// and after observations: the histogram reads as quantiles of the
// observations made between the first and the last scrape only (those
// made before scraping began lie above every bucket), the counter as its
// increase over the run, the gauge as last, mean and maximum; units from
// the names; no bucket is a figure of its own.
func TestFiguresFromARealExposition(t *testing.T) {
	reg := prometheus.NewRegistry()
	latency := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rpc_duration_seconds", Help: "Time to answer.",
		Buckets: []float64{0.01, 0.1, 1}})
	calls := prometheus.NewCounter(prometheus.CounterOpts{Name: "rpc_calls_total", Help: "Calls answered."})
	heap := prometheus.NewGauge(prometheus.GaugeOpts{Name: "heap_bytes", Help: "Heap in use."})
	reg.MustRegister(latency, calls, heap)
	for range 1000 {
		latency.Observe(5) // before the run: not the run's
	}
	calls.Add(7)
	heap.Set(3 << 20)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	names := []string{"rpc_duration_seconds", "rpc_calls_total", "heap_bytes"}
	// scrapes a second apart: each may take up to a second on a busy machine
	c := Start(srv.URL, names, time.Second)
	defer c.Stop()
	waitPoints(t, c, "rpc_calls_total", 1)
	for i := range 100 {
		switch {
		case i < 50:
			latency.Observe(0.005)
		case i < 90:
			latency.Observe(0.05)
		default:
			latency.Observe(0.5)
		}
	}
	calls.Add(100)
	heap.Set(7 << 20)
	waitPoints(t, c, "rpc_calls_total", 3)
	m := c.Stop()
	if m.Families["rpc_duration_seconds"].Type != "histogram" || m.Families["rpc_calls_total"].Type != "counter" ||
		m.Families["heap_bytes"].Help != "Heap in use." {
		t.Errorf("families %+v", m.Families)
	}
	r := results.New()
	r.Tool = results.Tool{Name: "tandem", Version: "test"}
	r.Targets = []results.Target{{Name: "a", Metrics: &m}}
	if data, err := results.Marshal(r); err != nil {
		t.Fatal(err)
	} else if err := results.Validate(data); err != nil {
		t.Errorf("results with families do not validate: %v", err)
	}
	got := map[string]Figure{}
	for _, f := range Figures(m) {
		if _, dup := got[f.Name]; dup {
			t.Errorf("%s twice", f.Name)
		}
		got[f.Name] = f
	}
	delete(got, Load1) // the machine's, added by the collector
	if len(got) != 3 {
		t.Fatalf("figures %+v; want the histogram, the counter and the gauge, no bucket on its own", got)
	}
	h := got["rpc_duration_seconds"]
	want := []float64{0.01, 0.1, 0.91} // 50 ≤ 0.01, 40 in (0.01, 0.1], 10 in (0.1, 1]
	if h.Kind != KindHistogram || h.Unit != "s" || len(h.Quantile) != 3 {
		t.Fatalf("histogram %+v", h)
	}
	for i := range want {
		if math.Abs(h.Quantile[i]-want[i]) > 1e-9 {
			t.Errorf("p%v %v; want %v", Quantiles[i]*100, h.Quantile[i], want[i])
		}
	}
	count := seriesOf(t, m, "rpc_duration_seconds_count")
	if span := (count[len(count)-1][0] - count[0][0]) / 1e9; math.Abs(h.Rate*span-100) > 1e-6 {
		t.Errorf("histogram rate %v/s over %v s: %v observations; want 100", h.Rate, span, h.Rate*span)
	}
	ct := got["rpc_calls_total"]
	pts := seriesOf(t, m, "rpc_calls_total")
	if span := (pts[len(pts)-1][0] - pts[0][0]) / 1e9; ct.Kind != KindCounter || math.Abs(ct.Rate*span-100) > 1e-6 {
		t.Errorf("counter %+v over %v s; want 100 calls in the run", ct, span)
	}
	g := got["heap_bytes"]
	if g.Kind != KindGauge || g.Unit != "B" || g.Last != 7<<20 || g.Max != 7<<20 || g.Mean <= 3<<20 || g.Mean >= 7<<20 {
		t.Errorf("gauge %+v", g)
	}
}

// Without the exposition's word (an older results file, a Prometheus
// server's series), kinds come from the names.
func TestFiguresInferKinds(t *testing.T) {
	pts := func(vs ...float64) [][2]float64 {
		var out [][2]float64
		for i, v := range vs {
			out = append(out, [2]float64{float64(i) * 1e9, v})
		}
		return out
	}
	m := results.Metrics{Series: []results.Series{
		{Name: "x_bucket", Labels: map[string]string{"le": "1"}, Points: pts(0, 4)},
		{Name: "x_bucket", Labels: map[string]string{"le": "+Inf"}, Points: pts(0, 4)},
		{Name: "x_count", Labels: map[string]string{}, Points: pts(0, 4)},
		{Name: "x_sum", Labels: map[string]string{}, Points: pts(0, 2)},
		{Name: "y_total", Labels: map[string]string{}, Points: pts(1, 3)},
		{Name: "z", Labels: map[string]string{}, Points: pts(1, 3)},
	}}
	var kinds []string
	for _, f := range Figures(m) {
		kinds = append(kinds, f.Name+" "+string(f.Kind))
	}
	if want := "x histogram,y_total counter,z gauge"; joinComma(kinds) != want {
		t.Errorf("kinds %s; want %s", joinComma(kinds), want)
	}
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

// waitPoints waits until the collector has scraped the named series n
// times (a scrape that failed gives it no point).
func waitPoints(t *testing.T, c *Collector, name string, n int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		for _, s := range c.Snapshot().Series {
			if s.Name == name && len(s.Points) >= n {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: fewer than %d points in 60 s", name, n)
		}
	}
}

// seriesOf is the points of the named series.
func seriesOf(t *testing.T, m results.Metrics, name string) [][2]float64 {
	t.Helper()
	for _, s := range m.Series {
		if s.Name == name {
			return s.Points
		}
	}
	t.Fatalf("no series %s", name)
	return nil
}
