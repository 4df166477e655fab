// Package adhoc is tandem load as a library: one target named by a URL,
// one request shape and one load, given as Options (each named in errors
// by its command-line flag). Check holds the options to a study's bounds,
// Open reads what they name (values, a mix) and settles the defaults, and
// the Load it returns reaches the target (Dial), warms it, runs the load
// on this machine (Run) or describes it for a fleet's workers (FleetPart).
package adhoc

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/study"
)

// Options are tandem load's options, one field per flag.
type Options struct {
	// The load shape: a closed loop of Concurrency clients, an open loop
	// at Rate over Connections, or Batch requests every Period on each
	// of Connections.
	Concurrency, Connections, Batch, MaxWaiting int
	Requests                                    int64
	Duration, Warmup, Step, Period, Quantum     time.Duration
	Rate, Unit, Engine                          string
	// ConcurrencySet says --concurrency was given: it is the closed
	// loop's; ConnectionsSet says --connections was (with a closed loop
	// over gRPC: the connections its clients share).
	ConcurrencySet, ConnectionsSet bool
	// The request.
	Timeout                      time.Duration
	Headers, Protos, ImportPaths []string
	// Data is the body, or @FILE to read it from a file.
	Data, RPCMethod, Params   string
	HTTP2, Insecure, QuickACK bool
	// ValuesFile names per-request values, MixFile calls and their
	// weights; Seed seeds both.
	ValuesFile, MixFile string
	Seed                uint64
	// AMQP.
	QueueType, Ack string
	Prefetch, Size int
	Confirm        bool
}

// Check refuses option values a run cannot honour, each named with the
// value given: negative counts and durations, no clients or connections,
// more of them than this machine's open-file limit holds, and a load over
// a study's bounds.
func Check(f Options) error {
	var errs []error
	for _, d := range []struct {
		name     string
		v        time.Duration
		positive bool
	}{{"duration", f.Duration, false}, {"warmup", f.Warmup, false}, {"step", f.Step, false}, {"timeout", f.Timeout, true}, {"period", f.Period, true}} {
		if d.v < 0 || d.positive && d.v == 0 {
			errs = append(errs, fmt.Errorf("--%s %v: want a positive duration", d.name, d.v))
		}
	}
	for _, n := range []struct {
		name string
		v    int64
		min  int64
	}{{"requests", f.Requests, 0}, {"batch", int64(f.Batch), 0}, {"max-waiting", int64(f.MaxWaiting), 0},
		{"concurrency", int64(f.Concurrency), 1}, {"connections", int64(f.Connections), 1}} {
		if n.v < n.min {
			errs = append(errs, fmt.Errorf("--%s %d: want %d or more", n.name, n.v, n.min))
		}
	}
	files := 1
	if f.Rate != "" {
		files = 2 // a socket and a timer per connection (an open loop)
	}
	most, why := study.ConnectionBound(files)
	for _, n := range []struct {
		name string
		v    int
	}{{"concurrency", f.Concurrency}, {"connections", f.Connections}} {
		if n.v > most {
			errs = append(errs, fmt.Errorf("--%s %d: more than this machine holds, %d (%s)", n.name, n.v, most, why))
		}
	}
	return errors.Join(append(errs, shapeBounds(f)...)...)
}

// shapeBounds holds the load the flags describe, for the whole run (on
// one machine or a fleet), to the bounds a study's scenario gets, in a
// study's words (study.LoadBounds): a peak rate of at most study.MaxRate
// arrivals per second in total, and at most study.MaxArrivals arrivals and
// requests a run. A --rate that does not parse is an error here too.
func shapeBounds(f Options) []error {
	duration := f.Duration
	if f.Requests <= 0 && duration <= 0 && !strings.Contains(f.Rate, ",") {
		duration = 10 * time.Second // as the run defaults it
	}
	var l study.Load
	switch {
	case f.Rate != "" && f.Batch > 0:
		return nil // two shapes: checkShape says so
	case f.Rate != "":
		sch, err := load.ParseRate(f.Rate, duration, f.Step)
		if err != nil {
			return []error{fmt.Errorf("--rate: %w", err)}
		}
		l = shapeOf(sch)
	case f.Batch > 0:
		l = study.Load{Batch: &study.Batch{PerPeriod: f.Batch, Period: f.Period}, Connections: f.Connections}
	}
	var errs []error
	for _, b := range study.LoadBounds(l, duration, f.Requests) {
		flag := "--rate " + f.Rate
		switch {
		case b.Key == "requests":
			flag = fmt.Sprintf("--requests %d", f.Requests)
		case b.Key == "load.batch":
			flag = fmt.Sprintf("--batch %d", f.Batch)
		case b.Key == "duration" && f.Duration > 0:
			flag = fmt.Sprintf("--duration %v", f.Duration)
		}
		errs = append(errs, fmt.Errorf("%s: %s (%s)", flag, b.Msg, b.Expected))
	}
	return errs
}

// shapeOf is a --rate schedule as a study's load shape.
func shapeOf(sch load.Schedule) study.Load {
	switch x := sch.(type) {
	case load.Constant:
		return study.Load{Rate: x.Rate}
	case load.Ramp:
		return study.Load{Ramp: &study.Ramp{From: x.From, To: x.To}}
	case load.Steps:
		steps := make([]study.Step, len(x))
		for i, st := range x {
			steps[i] = study.Step{Rate: st.Rate, Duration: st.Duration}
		}
		return study.Load{Steps: steps}
	}
	return study.Load{}
}

// checkShape refuses flags that do not make one load shape.
func (o Options) checkShape() error {
	switch {
	case o.Unit != "" && o.Unit != "request" && o.Unit != "message":
		return fmt.Errorf("--unit %q: want request or message", o.Unit)
	case o.Rate != "" && o.Batch > 0:
		return errors.New("--rate and --batch are two load shapes: choose one")
	case (o.Rate != "" || o.Batch > 0) && o.ConcurrencySet:
		return errors.New("--concurrency is the closed loop; with --rate or --batch use --connections")
	}
	return nil
}

// Spec is the load o describes: an open loop with a rate, a batched one
// with a batch, else a closed loop.
func (o Options) Spec() (load.Spec, error) {
	spec := load.Spec{Kind: load.KindClosed, Clients: o.Concurrency, Requests: o.Requests, Duration: o.Duration, Warmup: o.Warmup,
		Timeout: o.Timeout, Unit: o.Unit, Engine: o.Engine, Quantum: o.Quantum}
	switch {
	case o.Rate != "":
		sch, err := load.ParseRate(o.Rate, o.Duration, o.Step)
		if err != nil {
			return spec, fmt.Errorf("--rate: %w", err)
		}
		spec.Kind, spec.Schedule, spec.Connections, spec.MaxWaiting = load.KindOpen, sch, o.Connections, o.MaxWaiting
	case o.Batch > 0:
		if o.Duration <= 0 {
			return spec, errors.New("--batch needs --duration")
		}
		spec.Kind, spec.Connections, spec.PerPeriod, spec.Period = load.KindBatched, o.Connections, o.Batch, o.Period
	}
	return spec, nil
}

// ShareFlag is the flag whose count a fleet splits.
func (o Options) ShareFlag() string {
	if o.Rate == "" && o.Batch == 0 {
		return "--concurrency"
	}
	return "--connections"
}
