package report

import (
	"bytes"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/tandem-bench/tandem/metrics"
	"github.com/tandem-bench/tandem/results"
)

// A target's real /metrics (client_golang's registry over HTTP), scraped
// around 100 observations: every report shows the histogram as p50, p90
// and p99 with its rate of observations, the counter as a rate and the
// gauge as last, mean and max; no bucket has a row or a chart of its own
// and no counter a mean.
func TestReportReadsMetricsByKind(t *testing.T) {
	reg := prometheus.NewRegistry()
	latency := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rpc_duration_seconds", Help: "Time to answer.",
		Buckets: prometheus.DefBuckets})
	calls := prometheus.NewCounter(prometheus.CounterOpts{Name: "rpc_calls_total", Help: "Calls answered."})
	heap := prometheus.NewGauge(prometheus.GaugeOpts{Name: "heap_bytes", Help: "Heap in use."})
	reg.MustRegister(latency, calls, heap)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	// scrapes a second apart: each may take up to a second on a busy machine
	c := metrics.Start(srv.URL, []string{"rpc_duration_seconds", "rpc_calls_total", "heap_bytes"}, time.Second)
	defer c.Stop()
	scraped := func(n int) { // n scrapes that gave rpc_calls_total a point
		for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
			for _, s := range c.Snapshot().Series {
				if s.Name == "rpc_calls_total" && len(s.Points) >= n {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("fewer than %d scrapes in 60 s", n)
			}
		}
	}
	scraped(1)
	for i := range 100 {
		latency.Observe([]float64{0.003, 0.02, 0.2}[min(i/50+i/90, 2)]) // 50 ≤ 5 ms, 40 ≤ 25 ms, 10 ≤ 250 ms
	}
	calls.Add(100)
	heap.Set(1 << 20)
	scraped(3)
	m := c.Stop()
	r := results.New()
	r.Targets = []results.Target{{Name: "a", Metrics: &m}}
	// p50 5 ms: the top of (2.5 ms, 5 ms]; p90 25 ms: the top of (10 ms,
	// 25 ms]; p99 of 10 in (100 ms, 250 ms]: 235 ms
	histRow := regexp.MustCompile(`rpc_duration_seconds\b.*histogram.*p50 5(\.00)?ms, p90 25(\.0)?ms, p99 235ms; [0-9.,]+ observations/s`)
	counterRow := regexp.MustCompile(`rpc_calls_total\b.*counter.*[0-9.,]+/s`)
	gaugeRow := regexp.MustCompile(`heap_bytes\b.*gauge.*last 1(\.00)? MiB, mean [^,]+, max 1(\.00)? MiB`)
	for _, f := range []struct {
		name   string
		render func(*bytes.Buffer, *results.Results) error
	}{
		{"text", func(b *bytes.Buffer, r *results.Results) error { return Text(b, r) }},
		{"markdown", func(b *bytes.Buffer, r *results.Results) error { return Markdown(b, r) }},
		{"html", func(b *bytes.Buffer, r *results.Results) error { return HTML(b, r) }},
	} {
		var b bytes.Buffer
		if err := f.render(&b, r); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if i := strings.Index(out, `id="tandem-results"`); i >= 0 {
			out = out[:i] // the page's copy of results.json keeps every series as scraped
		}
		out = strings.ReplaceAll(out, `\_`, "_") // Markdown's escapes
		for _, re := range []*regexp.Regexp{histRow, counterRow, gaugeRow} {
			if !re.MatchString(out) {
				t.Errorf("%s: no line matches %s:\n%s", f.name, re, metricsPart(out))
			}
		}
		if strings.Contains(out, "_bucket") || regexp.MustCompile(`rpc_calls_total[^\n]*mean`).MatchString(out) {
			t.Errorf("%s: a bucket row, or a counter's mean:\n%s", f.name, metricsPart(out))
		}
	}
}

// metricsPart is the report from its metrics on, for a failure's message.
func metricsPart(s string) string {
	if i := strings.Index(s, "Metrics of"); i >= 0 {
		return s[i:min(len(s), i+3000)]
	}
	return s[:min(len(s), 3000)]
}
