package load_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/load"
)

// TestTimelineCountsEveryAnswer: a server that fails from 300 ms to 500 ms
// into the run; the timeline counts every answer the sample counts, and
// its failures lie in that window (give or take a step and a request).
func TestTimelineCountsEveryAnswer(t *testing.T) {
	var failFrom, failTo atomic.Int64 // unix ns
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if now := time.Now().UnixNano(); now >= failFrom.Load() && now < failTo.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(ts.Close)
	c, err := httpdrv.New(httpdrv.Options{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	engines := []string{"workers"}
	if runtime.GOOS == "linux" {
		engines = append(engines, "loop")
	}
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			const step = 10 * time.Millisecond
			tl := load.NewTimeline(step, time.Second)
			live := &load.Live{Timeline: tl}
			failFrom.Store(1 << 62)
			go func() {
				<-tl.Started()
				failTo.Store(tl.Start().Add(500 * time.Millisecond).UnixNano())
				failFrom.Store(tl.Start().Add(300 * time.Millisecond).UnixNano())
			}()
			s, err := load.Open{Schedule: load.Constant{Rate: 1000}, Connections: 2, Duration: 800 * time.Millisecond,
				Engine: engine, Live: live}.Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			var ok, failed int64
			first, last := -1, -1
			for i := range tl.Len() {
				o, f := tl.At(i)
				ok, failed = ok+o, failed+f
				if f > 0 {
					if first < 0 {
						first = i
					}
					last = i
				}
			}
			if ok != s.OK || failed != s.Requests-s.OK || failed == 0 {
				t.Fatalf("timeline %d ok, %d failed; the run %d ok of %d", ok, failed, s.OK, s.Requests)
			}
			if from, to := time.Duration(first)*step, time.Duration(last+1)*step; from < 290*time.Millisecond || from > 450*time.Millisecond ||
				to < 490*time.Millisecond || to > 650*time.Millisecond {
				t.Errorf("failures from %v to %v; the server failed from 300ms to 500ms", from, to)
			}
		})
	}
}
