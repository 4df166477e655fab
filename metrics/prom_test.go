package metrics

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/tandem-bench/tandem/internal/promtest"
	"github.com/tandem-bench/tandem/results"
)

// Series queried from a real Prometheus server over a window: what it
// scraped, with the target's labels, and a slope.
func TestQueryRangeFromPrometheus(t *testing.T) {
	reg := prometheus.NewRegistry()
	height := prometheus.NewGauge(prometheus.GaugeOpts{Name: "cometbft_consensus_height"})
	reg.MustRegister(height)
	start := time.Now()
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		height.Set(float64(time.Since(start) / (500 * time.Millisecond))) // 2 blocks a second
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	}))
	defer exporter.Close()
	server := promtest.Start(t, strings.TrimPrefix(exporter.URL, "http://"))
	labels := map[string]string{"job": "tandem-test"}
	var m = QueryRange(context.Background(), server, []string{"cometbft_consensus_height"}, labels, start, time.Now(), time.Second)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		m = QueryRange(context.Background(), server, []string{"cometbft_consensus_height"}, labels, start, time.Now(), time.Second)
		if len(m.Series) == 1 && len(m.Series[0].Points) >= 5 {
			break
		}
	}
	if m.Errors != 0 || len(m.Series) != 1 || len(m.Series[0].Points) < 5 {
		t.Fatalf("queried: %d errors (%s), series %+v", m.Errors, m.LastError, m.Series)
	}
	s := m.Series[0]
	if s.Name != "cometbft_consensus_height" || s.Labels["job"] != "tandem-test" {
		t.Errorf("series %s %v", s.Name, s.Labels)
	}
	// the height never falls and grew over the window (2 blocks a second,
	// as scraped when the scrapes came: a busy machine makes them late, so
	// the rate is not held to 120 a minute), never past what the exporter
	// could have served by now; blocks_per_min is the points' slope
	pts := s.Points
	for i := 1; i < len(pts); i++ {
		if pts[i][0] <= pts[i-1][0] || pts[i][1] < pts[i-1][1] {
			t.Errorf("points %d and %d: %v then %v; want time on and the height never falling", i-1, i, pts[i-1], pts[i])
		}
	}
	if top := float64(time.Since(start) / (500 * time.Millisecond)); pts[len(pts)-1][1] <= pts[0][1] || pts[len(pts)-1][1] > top {
		t.Errorf("height %v to %v; want it grown, to at most %v", pts[0][1], pts[len(pts)-1][1], top)
	}
	if bpm := m.Derived["blocks_per_min"]; bpm <= 0 || math.Abs(bpm-Slope(pts)) > 1e-9*bpm {
		t.Errorf("blocks_per_min %.1f; want the points' slope %.1f, above 0", bpm, Slope(pts))
	}
	bad := QueryRange(context.Background(), server, []string{"cometbft_consensus_height{"}, nil, start, time.Now(), time.Second)
	if bad.Errors != 1 || bad.LastError == "" {
		t.Errorf("a bad query: %d errors, %q", bad.Errors, bad.LastError)
	}
	gone := QueryRange(context.Background(), "http://127.0.0.1:1", nil, labels, start, time.Now(), time.Second)
	if gone.Errors != len(DefaultSeries) {
		t.Errorf("an unreachable server: %d errors; want one per series", gone.Errors)
	}
}

func TestSelector(t *testing.T) {
	if got := Selector("up", map[string]string{"job": "a\"b", "instance": "x"}); got != `up{instance="x",job="a\"b"}` {
		t.Errorf("Selector = %s", got)
	}
	if got := Selector("up", nil); got != "up" {
		t.Errorf("Selector = %s", got)
	}
}

// Series queried from a real Prometheus server carry what the exporter's
// exposition said of their families (its metadata), so a histogram queried
// by its _bucket series reads as quantiles and a counter as a rate.
func TestQueryRangeKeepsFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	latency := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rpc_duration_seconds", Help: "Time to answer.", Buckets: []float64{0.01, 0.1}})
	calls := prometheus.NewCounter(prometheus.CounterOpts{Name: "rpc_calls_total", Help: "Calls answered."})
	reg.MustRegister(latency, calls)
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		latency.Observe(0.05) // one observation, and one call, per scrape
		calls.Inc()
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	}))
	defer exporter.Close()
	server := promtest.Start(t, strings.TrimPrefix(exporter.URL, "http://"))
	start := time.Now()
	names := []string{"rpc_duration_seconds_bucket", "rpc_duration_seconds_count", "rpc_calls_total"}
	labels := map[string]string{"job": "tandem-test"}
	var m results.Metrics
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		m = QueryRange(context.Background(), server, names, labels, start, time.Now(), time.Second)
		if len(m.Series) == 5 && len(m.Series[0].Points) >= 3 && len(m.Families) == 2 {
			break
		}
	}
	if m.Families["rpc_duration_seconds"].Type != "histogram" || m.Families["rpc_calls_total"].Type != "counter" ||
		m.Families["rpc_calls_total"].Help != "Calls answered." {
		t.Fatalf("families %+v (series %d, errors %d: %s)", m.Families, len(m.Series), m.Errors, m.LastError)
	}
	kinds := map[string]Kind{}
	for _, f := range Figures(m) {
		kinds[f.Name] = f.Kind
		if f.Name == "rpc_duration_seconds" && (f.Quantile == nil || f.Quantile[0] <= 0.01 || f.Quantile[2] > 0.1) {
			t.Errorf("histogram %+v; want every quantile in (10 ms, 100 ms], where every observation was", f)
		}
	}
	if len(kinds) != 2 || kinds["rpc_duration_seconds"] != KindHistogram || kinds["rpc_calls_total"] != KindCounter {
		t.Errorf("kinds %v", kinds)
	}
}
