package metrics

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/tandem-bench/tandem/results"
)

func TestScrapeProtobufAndText(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := prometheus.NewGauge(prometheus.GaugeOpts{Name: "cometbft_consensus_height"})
	sz := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cometbft_mempool_size"}, []string{"chain_id"})
	other := prometheus.NewCounter(prometheus.CounterOpts{Name: "unwanted_total"})
	reg.MustRegister(h, sz, other)
	h.Set(42)
	sz.WithLabelValues("test").Set(7)
	var contentType atomic.Value
	proto := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
		contentType.Store(w.Header().Get("Content-Type"))
	}))
	defer proto.Close()
	text := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, "# TYPE cometbft_consensus_height gauge\ncometbft_consensus_height 43\ncometbft_mempool_size{chain_id=\"test\"} 8\nunwanted_total 1\n")
	}))
	defer text.Close()
	names := []string{"cometbft_consensus_height", "cometbft_mempool_size"}
	for _, c := range []struct {
		url          string
		height, size float64
	}{{proto.URL, 42, 7}, {text.URL, 43, 8}} {
		got, err := Scrape(context.Background(), http.DefaultClient, c.url, names)
		if err != nil {
			t.Fatal(err)
		}
		vals := map[string]float64{}
		for _, s := range got {
			vals[s.Name] = s.Value
			if s.Name == "cometbft_mempool_size" && s.Labels["chain_id"] != "test" {
				t.Errorf("labels %v", s.Labels)
			}
		}
		if len(got) != 2 || vals["cometbft_consensus_height"] != c.height || vals["cometbft_mempool_size"] != c.size {
			t.Errorf("%s: %+v", c.url, got)
		}
	}
	if ct, _ := contentType.Load().(string); ct == "" || ct[:len("application/vnd.google.protobuf")] != "application/vnd.google.protobuf" {
		t.Errorf("the registry served %q; want the protobuf exposition", ct)
	}
}

// An endpoint that serves garbage, then vanishes: every failure is
// counted, nothing is fatal, and what was scraped before stays. The
// interval (a scrape's timeout too) is long enough that the good scrapes
// are not cut short on a busy machine; the test waits for the scrapes it
// needs, not for a time.
func TestCollectorSurvivesBadEndpoints(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		switch n.Add(1) {
		case 1, 2:
			fmt.Fprintf(w, "cometbft_consensus_height %d\n", n.Load())
		default:
			w.Header().Set("Content-Type", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited")
			w.Write([]byte{0xff, 0xff, 0xff, 0x01, 0x02})
		}
	}))
	defer srv.Close()
	c := Start(srv.URL, []string{"cometbft_consensus_height"}, 500*time.Millisecond)
	waitFor := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !done(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				c.Stop()
				t.Fatalf("no %s within 30 s: %+v", what, c.Snapshot())
			}
		}
	}
	// two good answers, two of garbage
	waitFor("fourth scrape answered", func() bool { return n.Load() >= 4 })
	srv.Close()
	// every scrape that starts now fails: the one after the next is one
	gone := c.Snapshot().Scrapes
	waitFor("scrape of the closed endpoint", func() bool { return c.Snapshot().Scrapes >= gone+2 })
	m := c.Stop()
	if m.Scrapes < 5 || m.Errors < 3 || m.LastError == "" {
		t.Errorf("scrapes %d, errors %d, last %q; want the two of garbage and one of the closed endpoint failed", m.Scrapes, m.Errors, m.LastError)
	}
	var height *results.Series
	for i := range m.Series {
		if m.Series[i].Name == "cometbft_consensus_height" {
			height = &m.Series[i]
		}
	}
	if height == nil || len(height.Points) != 2 || height.Points[0][1] != 1 || height.Points[1][1] != 2 {
		t.Errorf("series before the failures: %+v", m.Series)
	}
}

func TestSlopeAndDerive(t *testing.T) {
	min := float64(time.Minute)
	cases := []struct {
		name   string
		points [][2]float64
		want   float64
	}{
		{"120 per minute", [][2]float64{{0, 10}, {min / 2, 70}, {min, 130}}, 120},
		{"flat", [][2]float64{{0, 5}, {min, 5}}, 0},
		{"noisy line", [][2]float64{{0, 0}, {min, 61}, {2 * min, 119}, {3 * min, 180}}, 59.8},
		{"one point", [][2]float64{{0, 1}}, math.NaN()},
	}
	for _, c := range cases {
		got := Slope(c.points)
		if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(got) && math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: slope %v; want %v", c.name, got, c.want)
		}
	}
	start := time.Unix(1_700_000_000, 0)
	sec := float64(time.Second)
	m := results.Metrics{StartUnixNs: start.UnixNano(), Series: []results.Series{
		{Name: "cometbft_consensus_height", Points: [][2]float64{{0, 1}, {30 * sec, 61}, {60 * sec, 121}, {90 * sec, 121}}},
		{Name: "cometbft_mempool_size", Points: [][2]float64{{0, 0}, {30 * sec, 100}, {60 * sec, 50}, {90 * sec, 0}}},
	}}
	all := Derive(m, time.Time{}, time.Time{})
	if all["mempool_size_max"] != 100 || all["mempool_size_mean"] != 37.5 {
		t.Errorf("whole run: %v", all)
	}
	w := Derive(m, start, start.Add(time.Minute))
	if math.Abs(w["blocks_per_min"]-120) > 1e-9 || w["mempool_size_mean"] != 50 {
		t.Errorf("first minute: %v", w)
	}
}
