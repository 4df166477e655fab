package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/results"
)

// A Prometheus summary with no observations exposes NaN quantiles; a
// gauge may be NaN or +Inf. What is scraped must still encode.
func TestScrapedNaNStillEncodes(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		fmt.Fprint(w, "# TYPE rpc_duration_seconds summary\nrpc_duration_seconds{quantile=\"0.5\"} NaN\nrpc_duration_seconds_sum 0\nrpc_duration_seconds_count 0\n")
	}))
	defer srv.Close()
	c := Start(srv.URL, []string{"rpc_duration_seconds"}, 20*time.Millisecond)
	for n.Load() < 3 {
		time.Sleep(10 * time.Millisecond)
	}
	m := c.Stop()
	r := results.New()
	r.Targets = []results.Target{{Name: "a", Metrics: &m}}
	if _, err := results.Marshal(r); err != nil {
		t.Errorf("results with a scraped NaN do not encode (so neither results.json nor report.html is written): %v", err)
	}
}
