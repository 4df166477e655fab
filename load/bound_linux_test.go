package load_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/load"
)

// topRate is the highest rate a study or tandem load may ask for
// (study.MaxRate): one connection on this machine carries a small part of
// it, so nearly every arrival waits, and most are dropped.
const topRate = 10_000_000

// okServer is a raw HTTP/1.1 server on 127.0.0.1 that answers every request
// at once, and a dialer for it.
func okServer(t *testing.T) *httpdrv.Caller {
	t.Helper()
	url := rawServer(t, func(int) string { return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" })
	c, err := httpdrv.New(httpdrv.Options{URL: url, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// An open loop at the top rate on one connection: 5,000,000 arrivals in
// half a second, nearly all dropped beyond max_waiting. Every one is sent
// or dropped, and what the loop allocates does not grow with them: it
// keeps the waiting ones as a range of the timetable, where it kept each
// waiting arrival's time (24 bytes an arrival, 120 MB here, before it
// dropped the oldest).
func TestOpenMemoryIndependentOfArrivals(t *testing.T) {
	tooltest.Long(t)
	c := okServer(t)
	const arrivals = topRate / 2 // for 500 ms
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := load.Open{Schedule: load.Constant{Rate: topRate}, Connections: 1, Duration: 500 * time.Millisecond, MaxWaiting: 1000,
		Timeout: time.Second, Engine: load.EngineLoop}.Run(context.Background(), c)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests+s.Unfinished+s.Dropped != arrivals || s.Requests <= 0 || s.Dropped <= 0 {
		t.Errorf("%d sent (%d of them cut off by the end) + %d dropped; want %d arrivals, some of each", s.Requests+s.Unfinished, s.Unfinished, s.Dropped, arrivals)
	}
	// the recorder's histograms and the series take a few MB, whatever
	// the arrivals; the other goroutines (the server's) allocate little
	const most = 32 << 20
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > most {
		t.Errorf("the run allocated %d MB for %d arrivals; want at most %d MB, independent of the arrivals", alloc>>20, arrivals, most>>20)
	}
}

// An open loop at the top rate, cancelled a moment in: it stops at once
// on either engine (not after its 20 s, nor after walking the rest of its
// 200,000,000 arrivals), and what it offered adds up: the arrivals due by
// its end are each sent or dropped, none of those still to come counted.
func TestOpenCancelledAtTopRate(t *testing.T) {
	tooltest.Long(t)
	c := okServer(t)
	for _, engine := range []string{load.EngineLoop, load.EngineWorkers} {
		t.Run(engine, func(t *testing.T) {
			live := &load.Live{Timeline: load.NewTimeline(time.Second, time.Minute)}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var cancelled time.Time
			go func() {
				<-live.Timeline.Started()
				time.Sleep(300 * time.Millisecond)
				cancelled = time.Now()
				cancel()
			}()
			const duration = 20 * time.Second
			s, err := load.Open{Schedule: load.Constant{Rate: topRate}, Connections: 2, Duration: duration, MaxWaiting: 1000,
				Timeout: time.Second, Engine: engine, Live: live}.Run(ctx, c)
			returned := time.Now()
			if err != nil {
				t.Fatal(err)
			}
			// a generous bound: the run must end by its cancellation, long
			// before its duration
			if took := returned.Sub(cancelled); took > duration/2 {
				t.Fatalf("returned %v after the cancellation; want it to stop then", took)
			}
			start := live.Timeline.Start()
			offered := s.Requests + s.Dropped
			least := int64(cancelled.Sub(start).Seconds() * topRate)
			most := int64(returned.Sub(start).Seconds()*topRate) + 1
			if s.Requests <= 0 || offered < least || offered > most {
				t.Errorf("%d sent + %d dropped = %d offered; want from %d (due by the cancellation) to %d (due by the return)",
					s.Requests, s.Dropped, offered, least, most)
			}
		})
	}
}
