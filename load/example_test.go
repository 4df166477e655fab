package load_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/load"
)

// A closed loop: four clients, each sending its next request when its
// answer is in, 1,000 requests in all.
func ExampleClosed() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	c, err := httpdrv.New(httpdrv.Options{URL: srv.URL})
	if err != nil {
		panic(err)
	}
	s, err := load.Closed{Concurrency: 4, Requests: 1000}.Run(context.Background(), c)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Requests, "requests,", s.OK, "ok")
	// Output: 1000 requests, 1000 ok
}

// The same closed loop on the event loop with a quantum: answers are read
// at most once per 100 µs while they keep coming, and the generator's own
// part of each cycle is reported as think time.
func ExampleClosed_quantum() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	c, err := httpdrv.New(httpdrv.Options{URL: srv.URL})
	if err != nil {
		panic(err)
	}
	s, err := load.Closed{Concurrency: 4, Requests: 1000, Engine: "loop", Quantum: 100 * time.Microsecond}.Run(context.Background(), c)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.OK, "ok, think time measured:", s.ThinkTimeNs != nil)
	// Output: 1000 ok, think time measured: true
}

// An open loop: 500 arrivals a second for a second over two connections,
// on an absolute timetable; latency counts from each arrival's intended
// send time.
func ExampleOpen() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	c, err := httpdrv.New(httpdrv.Options{URL: srv.URL})
	if err != nil {
		panic(err)
	}
	s, err := load.Open{Schedule: load.Constant{Rate: 500}, Connections: 2, Duration: time.Second}.Run(context.Background(), c)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Requests+s.Unfinished+s.Dropped, "arrivals, offered", s.OfferedRate, "/s")
	// Output: 500 arrivals, offered 500 /s
}
