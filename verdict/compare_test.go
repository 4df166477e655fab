package verdict

import (
	"math"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/runfixture"
)

// Each change carries both sides' range of rounds and the Mann–Whitney p
// of their rounds.
func TestCompareRangesAndP(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base := runfixture.Latency("s", at, 100, 101, 99, 100.5, 100.2)
	head := runfixture.Latency("s", at, 130, 131, 129, 130.5, 130.2)
	c, err := CompareRuns(base, head, 5)
	if err != nil || len(c.Changes) != 1 {
		t.Fatalf("%v, %d changes", err, len(c.Changes))
	}
	ch := c.Changes[0]
	if ch.BaseRange != [2]float64{99e3, 101e3} || ch.HeadRange != [2]float64{129e3, 131e3} || math.Abs(ch.P-2.0/252) > 1e-12 {
		t.Errorf("ranges %v, %v, p %v; want the rounds' best and worst and p = 2/252", ch.BaseRange, ch.HeadRange, ch.P)
	}
	same, _ := CompareRuns(base, base, 5)
	if p := same.Changes[0].P; p != 1 {
		t.Errorf("a run against itself: p %v; want 1", p)
	}
}
