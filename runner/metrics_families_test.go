package runner

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/tandem-bench/tandem/metrics"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// A group's metrics keep what each node's exposition says of its families,
// so that the report reads a histogram scraped from every node as one.
func TestGroupMetricsKeepFamilies(t *testing.T) {
	// a1 has served a call and a0 not yet: a labelled histogram is exposed
	// once it has an observation
	serve := func(observe bool) string {
		reg := prometheus.NewRegistry()
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rpc_duration_seconds", Buckets: []float64{1}}, []string{"method"})
		reg.MustRegister(h, prometheus.NewCounter(prometheus.CounterOpts{Name: "rpc_calls_total"}))
		if observe {
			h.WithLabelValues("get").Observe(0.5)
		}
		srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	l := &live{spec: &study.Target{Name: "net", Group: &study.Group{}}}
	for i, name := range []string{"a0", "a1"} {
		url := serve(i == 1)
		l.nodes = append(l.nodes, &node{name: name, metrics: url,
			collector: metrics.Start(url, []string{"rpc_duration_seconds", "rpc_calls_total"}, time.Second)})
	}
	for _, n := range l.nodes { // a scrape that succeeded: the counter has a point
		for deadline := time.Now().Add(3 * time.Minute); !scraped(n.collector.Snapshot()); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no scrape in 60 s", n.name)
			}
		}
	}
	m, ok := nodeMetrics(l, true)
	if !ok || m.Families["rpc_duration_seconds"].Type != "histogram" || m.Families["rpc_calls_total"].Type != "counter" {
		t.Fatalf("families %+v", m.Families)
	}
	kinds := map[string]int{}
	for _, f := range metrics.Figures(m) {
		kinds[f.Name+" "+f.Labels["node"]+" "+string(f.Kind)]++
	}
	for _, want := range []string{"rpc_duration_seconds a1 histogram", "rpc_calls_total a0 counter", "rpc_calls_total a1 counter"} {
		if kinds[want] != 1 {
			t.Errorf("figures %v; want one %q", kinds, want)
		}
	}
}

// scraped says whether a scrape succeeded: rpc_calls_total has a point.
func scraped(m results.Metrics) bool {
	for _, s := range m.Series {
		if s.Name == "rpc_calls_total" && len(s.Points) > 0 {
			return true
		}
	}
	return false
}
