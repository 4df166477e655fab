package report

import (
	"bytes"
	"math"
	"testing"

	"github.com/tandem-bench/tandem/results"
)

// A scraped NaN (a Prometheus summary quantile with no observations) is
// left out of the chart, but the embedded results.json makes the page fail.
func TestHTMLWithNaNMetricPoint(t *testing.T) {
	r := fixture(t)
	r.Targets[0].Metrics = &results.Metrics{Series: []results.Series{{Name: "q", Points: [][2]float64{{0, math.NaN()}, {1e9, 1}, {2e9, 2}}}}}
	var b bytes.Buffer
	if err := Text(&b, r); err != nil {
		t.Fatalf("Text: %v", err)
	}
	if err := HTML(&b, r); err != nil {
		t.Errorf("HTML: %v", err)
	}
}
