package load_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/load"
)

// server starts a real HTTP server on 127.0.0.1:0 that waits delay and
// answers with status code for every request.
func server(t *testing.T, delay time.Duration, code int) (*httpdrv.Caller, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if delay > 0 {
			preciseWait(delay)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(ts.Close)
	c, err := httpdrv.New(httpdrv.Options{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, &hits
}

// preciseWait waits d: a sleep for most of it (timers overshoot by up to a
// few hundred µs), then a spin for the rest.
func preciseWait(d time.Duration) {
	end := time.Now().Add(d)
	if d > time.Millisecond {
		time.Sleep(d - time.Millisecond)
	}
	for time.Now().Before(end) {
	}
}

func TestClosedCountsExactly(t *testing.T) {
	c, hits := server(t, 0, 200)
	s, err := load.Closed{Concurrency: 4, Requests: 1000}.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 1000 || s.OK != 1000 || hits.Load() != 1000 || len(s.Errors) != 0 {
		t.Errorf("requests %d, ok %d, server saw %d, errors %v; want 1000 each", s.Requests, s.OK, hits.Load(), s.Errors)
	}
	h, err := hdrhistogram.Decode([]byte(s.HDR))
	if err != nil || h.TotalCount() != 1000 {
		t.Errorf("HDR: %v, %d values; want 1000", err, h.TotalCount())
	}
	if s.LatencyNs != s.ServiceTimeNs || s.ScheduleLagNs != nil || s.Unit != "request" || s.Throughput <= 0 {
		t.Errorf("closed loop: latency %v vs service %v, lag %v, unit %q", s.LatencyNs, s.ServiceTimeNs, s.ScheduleLagNs, s.Unit)
	}
	d := s.LatencyNs
	if !(d.Min <= d.P50 && d.P50 <= d.P90 && d.P90 <= d.P99 && d.P99 <= d.P999 && d.P999 <= d.Max) {
		t.Errorf("percentiles out of order: %+v", d)
	}
}

func TestClosedFixedDelay(t *testing.T) {
	c, _ := server(t, 2*time.Millisecond, 200)
	s, err := load.Closed{Concurrency: 1, Requests: 200}.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	// never below the server's delay; the upper bound only catches a
	// measurement of something else (a busy machine may add milliseconds;
	// the accuracy itself is the bench's: docs/performance.md)
	if p50 := time.Duration(s.LatencyNs.P50); p50 < 2*time.Millisecond || p50 > time.Second {
		t.Errorf("p50 %v against a 2 ms server; want 2 ms and a little more", p50)
	}
}

func TestClosedStatusesAndBounds(t *testing.T) {
	c, _ := server(t, 0, 503)
	s, err := load.Closed{Concurrency: 2, Requests: 50}.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if s.OK != 0 || s.Errors["http:503"] != 50 || s.Throughput != 0 {
		t.Errorf("503s: ok %d, errors %v", s.OK, s.Errors)
	}

	slow, _ := server(t, 20*time.Millisecond, 200)
	start := time.Now()
	s, err = load.Closed{Concurrency: 2, Duration: 200 * time.Millisecond}.Run(context.Background(), slow)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second || s.Requests == 0 || len(s.Errors) != 0 { // a hang guard
		t.Errorf("duration-bound run took %v with %d requests, errors %v", el, s.Requests, s.Errors)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	s, err = load.Closed{Concurrency: 2, Requests: 1 << 40}.Run(ctx, slow)
	if err != nil || time.Since(start) > 10*time.Second || len(s.Errors) != 0 { // a hang guard
		t.Errorf("cancelled run: %v after %v, errors %v", err, time.Since(start), s.Errors)
	}

	if _, err := (load.Closed{Concurrency: 1}).Run(context.Background(), c); !errors.Is(err, load.ErrUnbounded) {
		t.Errorf("unbounded run: %v; want ErrUnbounded", err)
	}
}

func TestTransportStatuses(t *testing.T) {
	c, err := httpdrv.New(httpdrv.Options{URL: "http://127.0.0.1:1/", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, err := load.Closed{Concurrency: 1, Requests: 3}.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if s.Errors["refused"] != 3 {
		t.Errorf("closed port: errors %v; want refused ×3", s.Errors)
	}
}

// Live reads the last whole second while a run goes on: its answers and
// their p50 and p99, with either engine.
func TestLiveLastSecond(t *testing.T) {
	for _, engine := range []string{"workers", "loop"} {
		t.Run(engine, func(t *testing.T) {
			if engine == "loop" && runtime.GOOS != "linux" {
				t.Skip("the event loop needs Linux")
			}
			c, _ := server(t, 2*time.Millisecond, 200)
			live := &load.Live{}
			if _, ok := live.LastSecond(); ok {
				t.Error("a last second before the run began")
			}
			type seen struct {
				ok       bool
				answered int64
				p50, p99 time.Duration
			}
			got := make(chan seen, 1)
			go func() { // 1.5 s into the run (a busy machine may start it late)
				for live.Sent.Load() == 0 {
					time.Sleep(time.Millisecond)
				}
				time.Sleep(1500 * time.Millisecond)
				s, ok := live.LastSecond()
				got <- seen{ok, s.OK + s.Errors, time.Duration(s.P50Ns), time.Duration(s.P99Ns)}
			}()
			_, err := load.Closed{Concurrency: 2, Duration: 2500 * time.Millisecond, Live: live, Engine: engine}.Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			s := <-got
			// two clients against a 2 ms server answer at most 1,000 a second
			if !s.ok || s.answered < 10 || s.answered > 1100 || s.p50 < 2*time.Millisecond || s.p99 < s.p50 {
				t.Errorf("1.5 s into the run: %+v; want the first second's answers, p50 ≥ the server's 2 ms, p99 ≥ p50", s)
			}
			if live.OK.Load() == 0 || live.Sent.Load() < live.OK.Load() {
				t.Errorf("counts: sent %d, ok %d", live.Sent.Load(), live.OK.Load())
			}
		})
	}
}
