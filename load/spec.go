package load

import (
	"context"
	"fmt"
	"time"

	"github.com/tandem-bench/tandem/results"
)

// Kind is a load's shape: a closed, an open or a batched loop.
type Kind string

// The kinds of load a Spec runs.
const (
	// KindClosed is a closed loop: Clients each wait for their answer.
	KindClosed Kind = "closed"
	// KindOpen is an open loop: arrivals by Schedule over Connections.
	KindOpen Kind = "open"
	// KindBatched is a batched loop: PerPeriod requests every Period on
	// each of Connections.
	KindBatched Kind = "batched"
)

// Spec is a load described once, as data: its kind, its shape, its bounds
// and the engine it runs on. A study's scenario, a sweep's cell, a fleet
// worker's part and tandem load's flags each make one, and Run is the one
// place an executor is built from it.
type Spec struct {
	Kind Kind
	// Clients is a closed loop's concurrency.
	Clients int
	// Schedule is an open loop's arrivals.
	Schedule Schedule
	// Connections carry an open or a batched loop.
	Connections int
	// PerPeriod requests every Period on each connection: a batched loop.
	PerPeriod int
	Period    time.Duration
	// MaxWaiting bounds an open loop's arrivals waiting for a connection
	// (0: the executor's default).
	MaxWaiting int
	// Requests (0: until Duration) and Duration bound the run.
	Requests int64
	Duration time.Duration
	// Drain, for an open or a batched loop, is how long answers are
	// waited for after the last send (0: Timeout).
	Drain time.Duration
	// Timeout bounds each request.
	Timeout time.Duration
	// Unit names what a request is in the sample ("request" if empty).
	Unit string
	// Engine and Quantum choose how a closed or an open loop runs (see
	// Closed and Open); a batched loop has one engine.
	Engine  string
	Quantum time.Duration
	// Tap, if not nil, starts the run and receives its tallies (a fleet
	// worker's part); Live, if not nil, counts as the run goes.
	Tap  *Tap
	Live *Live
}

// Run runs the spec's load on d.
func (s Spec) Run(ctx context.Context, d Dialer) (results.Sample, error) {
	switch s.Kind {
	case KindClosed:
		return Closed{Concurrency: s.Clients, Requests: s.Requests, Duration: s.Duration, Timeout: s.Timeout, Unit: s.Unit,
			Engine: s.Engine, Quantum: s.Quantum, Tap: s.Tap, Live: s.Live}.Run(ctx, d)
	case KindOpen:
		return Open{Schedule: s.Schedule, Connections: s.Connections, Requests: s.Requests, Duration: s.Duration,
			MaxWaiting: s.MaxWaiting, Timeout: s.Timeout, Drain: s.Drain, Unit: s.Unit, Engine: s.Engine, Quantum: s.Quantum,
			Tap: s.Tap, Live: s.Live}.Run(ctx, d)
	case KindBatched:
		return Batched{Connections: s.Connections, PerPeriod: s.PerPeriod, Period: s.Period, Duration: s.Duration,
			Timeout: s.Timeout, Drain: s.Drain, Unit: s.Unit, Tap: s.Tap, Live: s.Live}.Run(ctx, d)
	}
	return results.Sample{}, fmt.Errorf("load: kind %q: want closed, open or batched", s.Kind)
}
