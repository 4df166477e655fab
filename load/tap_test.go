package load_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
)

// tapWhile takes from tap every interval while run runs, then the rest,
// and returns the run's sample and the Sum of every take.
func tapWhile(t *testing.T, tap *load.Tap, run func() (results.Sample, error)) (results.Sample, *load.Sum, int) {
	t.Helper()
	var sum load.Sum
	var mu sync.Mutex
	takes := 0
	take := func() {
		tl, err := tap.Take()
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if err := sum.Add(tl); err != nil {
			t.Error(err)
		}
		takes++
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(150 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				take()
			}
		}
	})
	s, err := run()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	take()
	return s, &sum, takes
}

// TestTapTakesAddUpToTheRun holds that what a Tap takes while a run goes,
// summed, is the run's own sample: every count, every distribution, the
// histogram and the per-second series, for each kind of loop and engine.
func TestTapTakesAddUpToTheRun(t *testing.T) {
	tooltest.Long(t)
	c, hits := server(t, 200*time.Microsecond, 200)
	type run func(*load.Tap) (results.Sample, error)
	cases := []struct {
		name string
		run  run
	}{
		{"closed", func(tap *load.Tap) (results.Sample, error) {
			return load.Closed{Concurrency: 3, Duration: 1200 * time.Millisecond, Engine: "workers", Tap: tap}.Run(context.Background(), c)
		}},
		{"open", func(tap *load.Tap) (results.Sample, error) {
			return load.Open{Schedule: load.Constant{Rate: 2000}, Connections: 3, Duration: 1200 * time.Millisecond, Engine: "workers", Tap: tap}.Run(context.Background(), c)
		}},
		{"batched", func(tap *load.Tap) (results.Sample, error) {
			return load.Batched{Connections: 2, PerPeriod: 50, Period: 300 * time.Millisecond, Duration: 1200 * time.Millisecond, Tap: tap}.Run(context.Background(), c)
		}},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases, struct {
			name string
			run  run
		}{"open on the event loop", func(tap *load.Tap) (results.Sample, error) {
			return load.Open{Schedule: load.Constant{Rate: 2000}, Connections: 3, Duration: 1200 * time.Millisecond, Engine: "loop", Tap: tap}.Run(context.Background(), c)
		}}, struct {
			name string
			run  run
		}{"closed on the event loop", func(tap *load.Tap) (results.Sample, error) {
			return load.Closed{Concurrency: 2, Requests: 3000, Engine: "loop", Tap: tap}.Run(context.Background(), c)
		}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hits.Store(0)
			var agreed time.Time
			tap := &load.Tap{Ready: func(context.Context) (time.Time, error) {
				agreed = time.Now().Add(50 * time.Millisecond)
				return agreed, nil
			}}
			s, sum, takes := tapWhile(t, tap, func() (results.Sample, error) { return tc.run(tap) })
			// never early; late by what a machine with every core busy
			// adds (63 ms was seen): how late is the bench's, the bound
			// here is a hang guard
			if late := tap.Started().Sub(agreed); late < 0 || late > 10*time.Second {
				t.Errorf("started %v after the agreed time; want never before it", late)
			}
			got := sum.Sample(time.Duration(s.DurationNs), s.Unit)
			if s.Requests == 0 || got.Requests != s.Requests || got.OK != s.OK || hits.Load() < s.Requests || takes < 3 {
				t.Fatalf("%d takes sum to %d requests (%d ok); the run had %d (%d ok); server saw %d",
					takes, got.Requests, got.OK, s.Requests, s.OK, hits.Load())
			}
			if got.LatencyNs != s.LatencyNs || got.ServiceTimeNs != s.ServiceTimeNs || got.HDR != s.HDR ||
				!reflect.DeepEqual(got.ScheduleLagNs, s.ScheduleLagNs) || !reflect.DeepEqual(got.ThinkTimeNs, s.ThinkTimeNs) {
				t.Errorf("summed distributions differ from the run's:\nsum %+v %+v %+v\nrun %+v %+v %+v",
					got.LatencyNs, got.ServiceTimeNs, got.ScheduleLagNs, s.LatencyNs, s.ServiceTimeNs, s.ScheduleLagNs)
			}
			if !reflect.DeepEqual(got.Series, s.Series) {
				t.Errorf("summed series differs:\nsum %+v\nrun %+v", got.Series, s.Series)
			}
		})
	}
}

// TestTapReadyAborts: a Ready that fails aborts the run before anything
// is sent; one that names a time waits for it.
func TestTapReadyAborts(t *testing.T) {
	c, hits := server(t, 0, 200)
	boom := errors.New("the barrier timed out")
	_, err := load.Closed{Concurrency: 2, Requests: 10, Tap: &load.Tap{Ready: func(context.Context) (time.Time, error) {
		return time.Time{}, boom
	}}}.Run(context.Background(), c)
	if !errors.Is(err, boom) || hits.Load() != 0 {
		t.Fatalf("err %v, %d requests sent; want the barrier's error and none", err, hits.Load())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = load.Closed{Concurrency: 1, Requests: 10, Tap: &load.Tap{Ready: func(context.Context) (time.Time, error) {
		return time.Now().Add(time.Hour), nil
	}}}.Run(ctx, c)
	if !errors.Is(err, context.DeadlineExceeded) || hits.Load() != 0 {
		t.Fatalf("a start an hour away, cancelled: err %v, %d sent", err, hits.Load())
	}
}

// TestSumRefusesMixedAndMalformed: tallies of an open and a closed loop,
// or with a bucket out of range, do not add up.
func TestSumRefusesMixedAndMalformed(t *testing.T) {
	var s load.Sum
	if err := s.Add(load.Tally{Requests: 1, OK: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(load.Tally{Open: true, Requests: 1}); err == nil {
		t.Error("an open tally added to a closed sum")
	}
	if err := s.Add(load.Tally{Seconds: []load.SecondTally{{T: 0, Buckets: [][2]int64{{1 << 20, 1}}}}}); err == nil {
		t.Error("a bucket out of range was added")
	}
	if err := s.Add(load.Tally{Service: "not a histogram"}); err == nil {
		t.Error("a malformed histogram was added")
	}
	if s.Requests() != 1 {
		t.Errorf("sum holds %d requests; want the 1 of the only good tally", s.Requests())
	}
}

// FuzzSumAdd feeds a coordinator's parser of tallies what a worker (or
// anyone on the bus) might send: whatever it is, Add either refuses it or
// adds it, and the sum still makes a sample.
func FuzzSumAdd(f *testing.F) {
	f.Add([]byte(`{"requests":3,"ok":2,"errors":{"timeout":1},"seconds":[{"t":0,"issued":3,"ok":2,"buckets":[[5,1],[200,1]]}]}`))
	f.Add([]byte(`{"open":true,"requests":1,"lag":"HISTFAAAAB54nJNpmSzMwMDAxAABzFCaEUwyXjkGpjYwiyqgBoANOAJh","service":"x"}`))
	f.Add([]byte(`{"seconds":[{"t":-5,"buckets":[[-1,3]]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tl load.Tally
		if json.Unmarshal(data, &tl) != nil {
			return
		}
		var s load.Sum
		before := s.Requests()
		if err := s.Add(tl); err != nil && s.Requests() != before {
			t.Fatalf("a refused tally changed the sum: %v", err)
		}
		_ = s.Sample(time.Second, "request")
	})
}
