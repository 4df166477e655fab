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
// into the run (and until it has failed 20 requests, so that a generator
// held back by a busy machine still meets failures); the timeline counts
// every answer the sample counts, and no failure is placed before the
// server failed, nor the last before the server's last failure. How late
// a busy machine reads answers is not the test's to bound. Its successes
// by when their request was sent add up to the same, and none ended
// before it was sent: at every step as many were sent by then as had
// ended.
func TestTimelineCountsEveryAnswer(t *testing.T) {
	var failFrom, failTo, lastFail, fails atomic.Int64 // unix ns; a count
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if now := time.Now().UnixNano(); now >= failFrom.Load() && (now < failTo.Load() || fails.Load() < 20) {
			fails.Add(1)
			lastFail.Store(time.Now().UnixNano())
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
			tl := load.NewTimeline(step, 20*time.Second) // past the run's hard end (800 ms + the 10 s timeout)
			live := &load.Live{Timeline: tl}
			failFrom.Store(1 << 62)
			fails.Store(0)
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
			var ok, failed, okSent int64
			first, last := -1, -1
			for i := range tl.Len() {
				o, f := tl.At(i)
				ok, failed, okSent = ok+o, failed+f, okSent+tl.OKSentIn(i)
				if okSent < ok {
					t.Fatalf("by step %d %d successes ended, but only %d of their requests were sent", i, ok, okSent)
				}
				if f > 0 {
					if first < 0 {
						first = i
					}
					last = i
				}
			}
			if ok != s.OK || okSent != s.OK || failed != s.Requests-s.OK || failed == 0 {
				t.Fatalf("timeline %d ok (%d by sending), %d failed; the run %d ok of %d", ok, okSent, failed, s.OK, s.Requests)
			}
			served := time.Duration(lastFail.Load() - tl.Start().UnixNano())
			if from, to := time.Duration(first)*step, time.Duration(last+1)*step; from < 300*time.Millisecond-step || to < served {
				t.Errorf("failures from %v to %v; the server failed from 300ms to %v", from, to, served.Round(time.Millisecond))
			}
		})
	}
}
