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

// engines are the load engines that run here.
func engines() []string {
	if runtime.GOOS == "linux" {
		return []string{"workers", "loop"}
	}
	return []string{"workers"}
}

// TestWindowFollowsItsArrivals runs an open loop for 600 ms against a
// server that fails every fourth request and takes 3 ms over the others
// for the first 200 ms of the run, then answers at once: a window over the
// first 300 ms holds the answers to exactly the arrivals intended in it (in
// three parts of 100 ms), those after it are not its; every success it
// counts by when it ended is one of its parts', none counted before it
// could have come; the first part's median is at least the 3 ms.
func TestWindowFollowsItsArrivals(t *testing.T) {
	const rate, run, span = 200.0, 600 * time.Millisecond, 300 * time.Millisecond
	const slow = 3 * time.Millisecond
	var slowUntil atomic.Int64 // unix ns
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1)%4 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if time.Now().UnixNano() < slowUntil.Load() {
			time.Sleep(slow)
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(ts.Close)
	c, err := httpdrv.New(httpdrv.Options{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, engine := range engines() {
		t.Run(engine, func(t *testing.T) {
			n.Store(0)
			slowUntil.Store(1 << 62)
			win := load.NewWindow(span, 3, time.Millisecond, run+time.Second)
			tl := load.NewTimeline(time.Millisecond, run+time.Second)
			go func() {
				<-tl.Started()
				slowUntil.Store(tl.Start().Add(200 * time.Millisecond).UnixNano())
			}()
			s, err := load.Open{Schedule: load.Constant{Rate: rate}, Connections: 2, Duration: run, Engine: engine,
				Live: &load.Live{Window: win, Timeline: tl}}.Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if s.Dropped != 0 {
				t.Skipf("the generator dropped %d arrivals: the window's count is not known", s.Dropped)
			}
			var ok, failed int64
			for i := range win.Parts() {
				p := win.Part(i)
				ok, failed = ok+p.OK, failed+p.Failed
				if want := (load.Constant{Rate: rate, Duration: span / 3 * time.Duration(i+1)}).Arrivals() -
					(load.Constant{Rate: rate, Duration: span / 3 * time.Duration(i)}).Arrivals(); p.OK+p.Failed != want {
					t.Errorf("part %d: %d ok, %d failed; %d arrivals were intended in it", i, p.OK, p.Failed, want)
				}
				if (p.OK == 0) != (p.P50 == 0) || p.P90 < p.P50 {
					t.Errorf("part %d: %d ok, median %v, p90 %v", i, p.OK, p.P50, p.P90)
				}
			}
			if want := (load.Constant{Rate: rate, Duration: span}).Arrivals(); ok+failed != want || failed == 0 || ok == 0 {
				t.Errorf("the window holds %d ok, %d failed; %d arrivals were intended in it (the run answered %d of %d)", ok, failed, want, s.OK, s.Requests)
			}
			if got := win.OKBefore(run + time.Second); got != ok {
				t.Errorf("%d successes ended within the horizon; the parts hold %d", got, ok)
			}
			// none counted before it came: by every millisecond at most as
			// many of the window's successes as the whole run's had ended
			// by the next (the two count by their own clocks' steps: an
			// answer at a step's edge may fall on either side of it)
			var runOK []int64
			for i := range tl.Len() {
				o, _ := tl.At(i)
				runOK = append(runOK, o)
				if i > 0 {
					runOK[i] += runOK[i-1]
				}
			}
			for i := range runOK {
				if got := win.OKBefore(time.Duration(i+1) * time.Millisecond); got > runOK[min(i+1, len(runOK)-1)] {
					t.Fatalf("by %v the window counts %d successes; the run had %d a step later", time.Duration(i+1)*time.Millisecond, got, runOK[min(i+1, len(runOK)-1)])
				}
			}
			if win.OKBefore(0) != 0 {
				t.Errorf("%d successes before the start", win.OKBefore(0))
			}
			if p := win.Part(0); p.P50 < slow {
				t.Errorf("the first part's median is %v; every success in it took at least %v", p.P50, slow)
			}
		})
	}
}

// TestDrainCutsOff: an open loop and a batched run whose server answers
// after 1 s, with a Timeout of 10 s but a Drain of 100 ms, stop waiting
// 100 ms after their duration: every request is unfinished (in flight) or dropped (waiting), none
// is a failure or a latency.
func TestDrainCutsOff(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	c, err := httpdrv.New(httpdrv.Options{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, engine := range engines() {
		t.Run("open on "+engine, func(t *testing.T) {
			s, err := load.Open{Schedule: load.Constant{Rate: 20}, Connections: 2, Duration: 200 * time.Millisecond, Timeout: 10 * time.Second,
				Drain: 100 * time.Millisecond, Engine: engine}.Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			// in flight (one a connection) or waiting: none recorded
			if s.Requests != 0 || s.Dropped+s.Unfinished != 4 || s.Unfinished > 2 {
				t.Errorf("%d requests (%v), %d unfinished, %d dropped; want none recorded, the 4 arrivals unfinished (at most 2) or dropped",
					s.Requests, s.Errors, s.Unfinished, s.Dropped)
			}
		})
	}
	t.Run("batched", func(t *testing.T) {
		s, err := load.Batched{Connections: 2, PerPeriod: 3, Period: 100 * time.Millisecond, Duration: 100 * time.Millisecond,
			Timeout: 10 * time.Second, Drain: 100 * time.Millisecond}.Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if s.Requests != 0 || s.Dropped+s.Unfinished != 6 || s.Unfinished > 2 {
			t.Errorf("%d requests (%v), %d unfinished, %d dropped; want none recorded, the 6 unfinished (at most 2) or dropped",
				s.Requests, s.Errors, s.Unfinished, s.Dropped)
		}
	})
}
