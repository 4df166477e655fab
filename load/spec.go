package load

import (
	"context"
	"encoding/json"
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

// Spec is a load described once, as data: its kind, its shape, its bounds,
// its warm-up and the engine it runs on. A study's scenario, a sweep's
// cell, a fleet worker's part and tandem load's flags each make one; Run
// is the one place an executor is built from it, Split the one place it is
// shared between workers, and its JSON what a fleet ships to them.
type Spec struct {
	Kind Kind `json:"kind"`
	// Clients is a closed loop's concurrency.
	Clients int `json:"clients,omitempty"`
	// Schedule is an open loop's arrivals (in JSON, a tagged value: see
	// ScheduleData).
	Schedule Schedule `json:"-"`
	// Connections carry an open or a batched loop.
	Connections int `json:"connections,omitempty"`
	// PerPeriod requests every Period on each connection: a batched loop.
	PerPeriod int           `json:"per_period,omitempty"`
	Period    time.Duration `json:"period,omitempty"`
	// MaxWaiting bounds an open loop's arrivals waiting for a connection
	// (0: the executor's default).
	MaxWaiting int `json:"max_waiting,omitempty"`
	// Requests (0: until Duration) and Duration bound the run.
	Requests int64         `json:"requests,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	// Warmup is how long WarmUp sends before the run (0: none).
	Warmup time.Duration `json:"warmup,omitempty"`
	// Drain, for an open or a batched loop, is how long answers are
	// waited for after the last send (0: Timeout).
	Drain time.Duration `json:"drain,omitempty"`
	// Timeout bounds each request.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Unit names what a request is in the sample ("request" if empty).
	Unit string `json:"unit,omitempty"`
	// Engine and Quantum choose how a closed or an open loop runs (see
	// Closed and Open); a batched loop has one engine.
	Engine  string        `json:"engine,omitempty"`
	Quantum time.Duration `json:"quantum,omitempty"`
	// Tap, if not nil, starts the run and receives its tallies (a fleet
	// worker's part); Live, if not nil, counts as the run goes. Neither
	// travels.
	Tap  *Tap  `json:"-"`
	Live *Live `json:"-"`
}

// WarmUp is the spec's warm-up, a closed loop of as many clients as the
// load has clients or connections, for Warmup, on the spec's engine; ok
// is false without one.
func (s Spec) WarmUp() (w Spec, ok bool) {
	if s.Warmup <= 0 {
		return Spec{}, false
	}
	return Spec{Kind: KindClosed, Clients: max(s.Clients, s.Connections, 1), Duration: s.Warmup, Timeout: s.Timeout, Unit: s.Unit,
		Engine: s.Engine}, true
}

// ScheduleData is a Schedule as JSON: Kind says which (constant, ramp,
// steps, or shard, the Index-th of Count of the schedule Of).
type ScheduleData struct {
	Kind     string        `json:"kind"`
	Rate     float64       `json:"rate,omitempty"`
	From     float64       `json:"from,omitempty"`
	To       float64       `json:"to,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	Steps    []StepData    `json:"steps,omitempty"`
	Index    int           `json:"index,omitempty"`
	Count    int           `json:"count,omitempty"`
	Of       *ScheduleData `json:"of,omitempty"`
}

// StepData is a step of a steps schedule as JSON.
type StepData struct {
	Rate     float64       `json:"rate"`
	Duration time.Duration `json:"duration"`
}

// DataOf is sch as data; nil for nil. A schedule of a kind this package
// does not define has none: an error.
func DataOf(sch Schedule) (*ScheduleData, error) {
	switch x := sch.(type) {
	case nil:
		return nil, nil
	case Constant:
		return &ScheduleData{Kind: "constant", Rate: x.Rate, Duration: x.Duration}, nil
	case Ramp:
		return &ScheduleData{Kind: "ramp", From: x.From, To: x.To, Duration: x.Duration}, nil
	case Steps:
		d := &ScheduleData{Kind: "steps", Steps: make([]StepData, len(x))}
		for i, st := range x {
			d.Steps[i] = StepData(st)
		}
		return d, nil
	case Shard:
		of, err := DataOf(x.Schedule)
		if err != nil {
			return nil, err
		}
		return &ScheduleData{Kind: "shard", Index: x.Index, Count: x.Count, Of: of}, nil
	}
	return nil, fmt.Errorf("load: a %T schedule has no data form", sch)
}

// Schedule is the schedule d describes.
func (d *ScheduleData) Schedule() (Schedule, error) {
	switch d.Kind {
	case "constant":
		return Constant{Rate: d.Rate, Duration: d.Duration}, nil
	case "ramp":
		return Ramp{From: d.From, To: d.To, Duration: d.Duration}, nil
	case "steps":
		st := make(Steps, len(d.Steps))
		for i, x := range d.Steps {
			st[i] = Step(x)
		}
		return st, nil
	case "shard":
		if d.Of == nil || d.Count < 1 || d.Index < 0 || d.Index >= d.Count {
			return nil, fmt.Errorf("a shard %d of %d of %v: want a schedule and 0 ≤ index < count", d.Index, d.Count, d.Of)
		}
		of, err := d.Of.Schedule()
		if err != nil {
			return nil, err
		}
		return Shard{Schedule: of, Index: d.Index, Count: d.Count}, nil
	}
	return nil, fmt.Errorf("a schedule of kind %q: want constant, ramp, steps or shard", d.Kind)
}

// specJSON is Spec's JSON form: its fields and the schedule as data.
type specJSON struct {
	spec
	Schedule *ScheduleData `json:"schedule,omitempty"`
}

// spec is Spec without its methods, so specJSON encodes its fields.
type spec Spec

// MarshalJSON encodes the spec with its schedule as data.
func (s Spec) MarshalJSON() ([]byte, error) {
	d, err := DataOf(s.Schedule)
	if err != nil {
		return nil, err
	}
	return json.Marshal(specJSON{spec: spec(s), Schedule: d})
}

// UnmarshalJSON decodes a spec MarshalJSON encoded.
func (s *Spec) UnmarshalJSON(b []byte) error {
	var j specJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Spec(j.spec)
	if j.Schedule != nil {
		sch, err := j.Schedule.Schedule()
		if err != nil {
			return fmt.Errorf("load spec: %w", err)
		}
		s.Schedule = sch
	}
	return nil
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
