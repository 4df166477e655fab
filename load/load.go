// Package load drives requests at a target and records what happened.
// Executors own a fixed set of workers, one per connection; none starts a
// goroutine per request. Each worker records into its own histograms, which
// are merged when the run ends, so memory does not grow with run length.
// A failed request is data (a status in Result), never an error.
package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tandem-bench/tandem/results"
)

// Result is the outcome of one request.
type Result struct {
	// Status is empty for success, else a short code such as
	// grpc:NOT_FOUND, http:503, jsonrpc:-32602, timeout, refused or reset.
	Status string
	// Units is the work the request did: 1, or the messages a stream carried.
	Units int64
}

// Conn sends requests over one connection. A Conn is used by one worker at
// a time.
type Conn interface {
	Do(ctx context.Context) Result
	Close() error
}

// Dialer opens connections to a target for one call.
type Dialer interface {
	Dial(ctx context.Context) (Conn, error)
}

// Closed is a closed loop: Concurrency clients, each sending its next
// request when the last is answered. A run ends after Requests requests (if
// positive) or Duration (if positive), whichever comes first.
type Closed struct {
	Concurrency int
	Requests    int64
	Duration    time.Duration
	// Timeout bounds each request; default 10 s.
	Timeout time.Duration
	// Unit names the unit of work, "request" by default.
	Unit string
}

// ErrUnbounded is returned for a run bounded by neither count nor time.
var ErrUnbounded = errors.New("load: a run needs a request count or a duration")

// Run dials Concurrency connections, runs the loop and returns its sample.
// The run stops early, with what it recorded, when ctx is cancelled.
func (c Closed) Run(ctx context.Context, d Dialer) (results.Sample, error) {
	if c.Requests <= 0 && c.Duration <= 0 {
		return results.Sample{}, ErrUnbounded
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 1
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Unit == "" {
		c.Unit = "request"
	}
	conns := make([]Conn, 0, c.Concurrency)
	defer func() {
		for _, cn := range conns {
			cn.Close()
		}
	}()
	for i := 0; i < c.Concurrency; i++ {
		cn, err := d.Dial(ctx)
		if err != nil {
			return results.Sample{}, fmt.Errorf("dial connection %d: %w", i+1, err)
		}
		conns = append(conns, cn)
	}
	runCtx := ctx
	if c.Duration > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, c.Duration)
		defer cancel()
	}
	recs := make([]*recorder, len(conns))
	var issued atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i, cn := range conns {
		rec := newRecorder(false)
		recs[i] = rec
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil {
				if c.Requests > 0 && issued.Add(1) > c.Requests {
					return
				}
				reqCtx, cancel := context.WithTimeout(runCtx, c.Timeout)
				sent := time.Now()
				res := cn.Do(reqCtx)
				end := time.Now()
				cancel()
				if runCtx.Err() != nil && res.Status != "" {
					return // cut off by the end of the run, not a failure
				}
				rec.record(sent, sent, end, res)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	total := recs[0]
	for _, r := range recs[1:] {
		total.merge(r)
	}
	return total.sample(elapsed, c.Unit, 0), nil
}
