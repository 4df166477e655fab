package runner

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/fleet"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// Fleet runs loads on workers elsewhere (tandem run --workers): each run
// of a scenario's loop goes to every worker, split, and comes back added
// up, with its account in the sample's Fleet.
type Fleet interface {
	Load(ctx context.Context, p FleetPart) (results.Sample, error)
}

// FleetPart is one run of a scenario's loop as a fleet's workers get it:
// the call to one target's endpoint, and the loop.
type FleetPart struct {
	Target   string        `json:"target"`
	Call     *study.Call   `json:"call"`
	Endpoint string        `json:"endpoint"`
	Timeout  time.Duration `json:"timeout"`
	// Kind is closed, open or batched; Clients a closed loop's.
	Kind    study.Kind `json:"kind"`
	Clients int        `json:"clients,omitempty"`
	Load    study.Load `json:"load"`
	// Requests (0: until Bound) and Bound are the whole run's.
	Requests int64         `json:"requests,omitempty"`
	Bound    time.Duration `json:"bound,omitempty"`
	Unit     string        `json:"unit"`
}

// fleetLoops measures a scenario's loop on the fleet.
type fleetLoops struct {
	r     *runner
	parts map[string]FleetPart // by target, level and bounds unset
	warmK study.Kind           // the warm-up's kind (a batched load's is closed)
	level int
}

func (m fleetLoops) at(level int) measurer {
	m.level = level
	return m
}

func (m fleetLoops) part(l *live, kind study.Kind, requests int64, bound time.Duration) FleetPart {
	p := m.parts[l.spec.Name]
	p.Kind, p.Requests, p.Bound = kind, requests, bound
	p.Clients = m.level
	if kind == study.KindClosed && p.Clients == 0 {
		p.Clients = max(p.Load.Connections, 1) // a batched load's warm-up
	}
	return p
}

func (m fleetLoops) warm(ctx context.Context, l *live, d time.Duration) (results.Sample, error) {
	return m.r.o.Fleet.Load(ctx, m.part(l, m.warmK, 0, d))
}

func (m fleetLoops) measure(ctx context.Context, l *live, requests int64, bound time.Duration, _ *load.Live) (results.Sample, error) {
	return m.r.o.Fleet.Load(ctx, m.part(l, m.parts[l.spec.Name].Kind, requests, bound))
}

// fleetCPUUse is the largest share of its cores a worker's process used
// in a run on the fleet: the generator is as busy as its busiest worker.
func fleetCPUUse(f *results.Fleet, d time.Duration) float64 {
	var most float64
	for _, w := range f.Workers {
		if d > 0 && w.Cores > 0 {
			most = max(most, float64(w.GeneratorCPUNs)/float64(d)/float64(w.Cores))
		}
	}
	return most
}

// fleetMeasurer is the measurer of a loop scenario on the fleet. The
// engine rule is one machine's (oneEngine, on the targets' callers), with
// what depends on the workers' own machines left to them: where a target
// cannot run on the event loop, every part goes out on the workers; where
// all can, the part leaves the engine to each worker, whose system decides
// for all its targets alike (a macOS worker runs them on the workers). A
// coordinator that is not Linux cannot tell, and leaves it to them too.
func (r *runner) fleetMeasurer(kind study.Kind, sc *study.Scenario, ls []*live, callers map[string]load.Dialer, unit string) (measurer, error) {
	engine := sc.Load.Engine
	if runtime.GOOS == "linux" {
		e, err := oneEngine(kind, sc, ls, callers)
		if err != nil {
			return nil, err
		}
		if e == load.EngineWorkers {
			engine = e
		}
	}
	m := fleetLoops{r: r, parts: map[string]FleetPart{}, warmK: kind}
	if kind == study.KindBatched {
		m.warmK = study.KindClosed
	}
	for _, l := range ls {
		call := r.s.Calls[sc.Call]
		ep, err := call.EndpointName(l.spec)
		if err != nil {
			return nil, fmt.Errorf("target %s: call %s: %w", l.spec.Name, sc.Call, err)
		}
		ld := sc.Load
		ld.Engine = engine
		m.parts[l.spec.Name] = FleetPart{Target: l.spec.Name, Call: call, Endpoint: l.endpoints[ep], Timeout: r.s.Defaults.Timeout,
			Kind: kind, Load: ld, Unit: unit}
	}
	return m, nil
}

// Split narrows a part to the index-th of count shares, exactly (see
// fleet.ShareOf) and returns the share in words.
func (p FleetPart) Split(index, count int) (FleetPart, string, error) {
	conns := max(p.Load.Connections, 1)
	if p.Kind == study.KindClosed {
		conns = p.Clients
	}
	sh, err := fleet.ShareOf(load.Kind(p.Kind), conns, p.Requests, index, count)
	if err != nil {
		return p, "", fmt.Errorf("%s: %w", p.Target, err)
	}
	p.Requests = sh.Requests
	if p.Kind == study.KindClosed {
		p.Clients = sh.Conns
	} else {
		p.Load.Connections = sh.Conns
	}
	return p, sh.Words, nil
}

// RunFleetPart runs a worker's share of a part (from Split): the driver of
// the call, the loop narrowed to the share, started through tap, counted
// in live.
func RunFleetPart(ctx context.Context, p FleetPart, index, count int, tap *load.Tap, live *load.Live) (results.Sample, error) {
	c, err := driver.New(ctx, p.Call, p.Endpoint, driver.Options{Timeout: p.Timeout})
	if err != nil {
		return results.Sample{}, fmt.Errorf("target %s: %w", p.Target, err)
	}
	ld := p.Load
	spec := load.Spec{Kind: load.Kind(p.Kind), Requests: p.Requests, Duration: p.Bound, Timeout: p.Timeout, Unit: p.Unit,
		Engine: ld.Engine, Quantum: ld.Quantum, Tap: tap, Live: live}
	switch p.Kind {
	case study.KindOpen:
		spec.Schedule = load.Shard{Schedule: schedule(ld, p.Bound), Index: index, Count: count}
		spec.Connections, spec.MaxWaiting = ld.Connections, ld.MaxWaiting
	case study.KindBatched:
		spec.Connections, spec.PerPeriod, spec.Period = ld.Connections, ld.Batch.PerPeriod, ld.Batch.Period
		spec.Engine, spec.Quantum = "", 0
	case study.KindClosed:
		spec.Clients = p.Clients
	default:
		return results.Sample{}, fmt.Errorf("a %s scenario does not run on a fleet", p.Kind)
	}
	return spec.Run(ctx, c)
}
