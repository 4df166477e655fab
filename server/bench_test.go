package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/history"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// benchRuns and benchSeries size the benchmark's history: 10,000 runs of
// 50 series (25 scenarios, each a headline and an error share).
const (
	benchRuns      = 10_000
	benchScenarios = 25
)

var (
	benchOnce  sync.Once
	benchStore *history.Store
	benchIDs   []string
)

// benchHistory builds the benchmark's history once, in TANDEM_BENCH_DB
// when set (kept between runs), else in a temporary file.
func benchHistory(b *testing.B) (*history.Store, []string) {
	benchOnce.Do(func() {
		path := os.Getenv("TANDEM_BENCH_DB")
		if path == "" {
			path = filepath.Join(b.TempDir(), "bench.db")
		}
		st, err := history.Open(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for i := range benchRuns {
			r := results.New()
			r.Study.Name = "bench"
			r.CreatedAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
			for s := range benchScenarios {
				sc := results.Scenario{Name: fmt.Sprintf("s%02d", s), Call: "get", Metric: "p50", Direction: "lower", Unit: "request",
					Load: results.Load{Model: "closed", Concurrency: []int{1}}}
				var vals []float64
				for k := range 5 {
					v := float64(100_000 + (i*7+s*13+k*3)%1000)
					sc.Rounds = append(sc.Rounds, results.Round{Round: k + 1, Target: "a", Concurrency: 1, Headline: v, Sample: results.Sample{Requests: 10, OK: 10}})
					vals = append(vals, v)
				}
				sum := stats.Summarize(vals, false)
				sc.Summary = []results.Summary{{Target: "a", Concurrency: 1, N: 5, Best: sum.Best, Median: sum.Median, Worst: sum.Worst}}
				r.Scenarios = append(r.Scenarios, sc)
			}
			data, err := results.Marshal(r)
			if err != nil {
				b.Fatal(err)
			}
			run, _, err := st.Add(context.Background(), data, history.Meta{Branch: "main"})
			if err != nil {
				b.Fatal(err)
			}
			benchIDs = append(benchIDs, run.ID)
		}
		b.Logf("history of %d runs × %d series ready in %v", benchRuns, 2*benchScenarios, time.Since(start).Round(time.Second))
		benchStore = st
	})
	return benchStore, benchIDs
}

// BenchmarkTrend is one series' trend over the newest 500 of 10,000 runs,
// as the trend page asks for it.
func BenchmarkTrend(b *testing.B) {
	st, _ := benchHistory(b)
	s := history.Series{Scenario: "s07", Target: "a", Level: 1, Metric: "headline"}
	b.ResetTimer()
	for b.Loop() {
		pts, err := st.Trend(context.Background(), "bench", "main", s, 500)
		if err != nil || len(pts) != 500 {
			b.Fatalf("%d points, %v", len(pts), err)
		}
	}
}

// BenchmarkTrendPage and BenchmarkComparePage are the pages, served.
func BenchmarkTrendPage(b *testing.B) {
	st, _ := benchHistory(b)
	ts := httptest.NewServer(New(st, Options{Hosts: []string{"127.0.0.1"}}))
	defer ts.Close()
	s := history.Series{Scenario: "s07", Target: "a", Level: 1, Metric: "headline"}
	u := ts.URL + "/studies/bench/main/trend?" + url.Values{"series": {s.Key()}}.Encode()
	b.ResetTimer()
	for b.Loop() {
		get(b, u)
	}
}

func BenchmarkComparePage(b *testing.B) {
	st, ids := benchHistory(b)
	ts := httptest.NewServer(New(st, Options{Hosts: []string{"127.0.0.1"}}))
	defer ts.Close()
	u := ts.URL + "/compare?base=" + ids[100] + "&head=" + ids[len(ids)-1]
	b.ResetTimer()
	for b.Loop() {
		get(b, u)
	}
}

func get(b *testing.B, u string) {
	resp, err := http.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
}
