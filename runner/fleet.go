package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/finding"
	"github.com/tandem-bench/tandem/fleet"
	"github.com/tandem-bench/tandem/internal/host"
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

// FleetPart is one run of a load as a fleet's workers get it, as JSON:
// the call to one target's endpoint and the load, whole (each worker takes
// its share with Split).
type FleetPart struct {
	// Target names the target in errors (a study's target, or tandem
	// load's URL without its password).
	Target   string      `json:"target"`
	Call     *study.Call `json:"call"`
	Endpoint string      `json:"endpoint"`
	// Shared, for a closed loop over gRPC, is the connections its clients
	// share (0: one each).
	Shared int `json:"shared,omitempty"`
	// QuickACK acknowledges every segment at once (driver.Options).
	QuickACK bool `json:"quickack,omitempty"`
	// Check reaches the target and sends it one request before the load
	// (driver.Preflight): tandem load's check, which a study's targets
	// passed when they started.
	Check bool `json:"check,omitempty"`
	// Rate, for tandem load's open loop, is its rate as given, which a
	// share's words name.
	Rate string    `json:"rate,omitempty"`
	Spec load.Spec `json:"spec"`
}

// fleetLoops measures a scenario's loop on the fleet.
type fleetLoops struct {
	r       *runner
	parts   map[string]FleetPart // by target, the load unset
	kind    study.Kind
	warmK   study.Kind // the warm-up's kind (a batched load's is closed)
	ld      study.Load
	timeout time.Duration
	unit    string
	level   int
}

func (m fleetLoops) at(level int) measurer {
	m.level = level
	return m
}

func (m fleetLoops) part(l *live, kind study.Kind, requests int64, bound time.Duration) FleetPart {
	p := m.parts[l.spec.Name]
	level := m.level
	if kind == study.KindClosed && level == 0 {
		level = max(m.ld.Connections, 1) // a batched load's warm-up
	}
	p.Spec = loopSpec(kind, m.ld, level, requests, bound, m.timeout, m.unit)
	return p
}

func (m fleetLoops) warm(ctx context.Context, l *live, d time.Duration) (results.Sample, error) {
	return m.r.o.Fleet.Load(ctx, m.part(l, m.warmK, 0, d))
}

func (m fleetLoops) measure(ctx context.Context, l *live, requests int64, bound time.Duration, _ *load.Live) (results.Sample, error) {
	return m.r.o.Fleet.Load(ctx, m.part(l, m.kind, requests, bound))
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
	m := fleetLoops{r: r, parts: map[string]FleetPart{}, kind: kind, warmK: kind, ld: sc.Load, timeout: r.s.Defaults.Timeout, unit: unit}
	m.ld.Engine = engine
	if kind == study.KindBatched {
		m.warmK = study.KindClosed
	}
	for _, l := range ls {
		call := r.s.Calls[sc.Call]
		ep, err := call.EndpointName(l.spec)
		if err != nil {
			return nil, fmt.Errorf("target %s: call %s: %w", l.spec.Name, sc.Call, err)
		}
		m.parts[l.spec.Name] = FleetPart{Target: l.spec.Name, Call: call, Endpoint: l.endpoints[ep]}
	}
	return m, nil
}

// Split narrows a part to the index-th of count shares (load.Spec.Split;
// a closed gRPC loop's shared connections are shared out alike) and
// returns the share in words.
func (p FleetPart) Split(index, count int) (FleetPart, string, error) {
	spec, words, err := p.Spec.Split(index, count)
	if err != nil {
		return p, "", fmt.Errorf("%s: %w", p.Target, err)
	}
	if p.Shared > 0 {
		shared := int(load.SplitCount(int64(p.Shared), count, index))
		if shared < 1 {
			return p, "", fmt.Errorf("%s: %d shared connections over %d workers: worker %d gets none; give at least one per worker",
				p.Target, p.Shared, count, index+1)
		}
		p.Shared = shared
		words += fmt.Sprintf(" over %d shared connections", shared)
	}
	if p.Rate != "" && spec.Kind == load.KindOpen {
		words += " (of " + p.Rate + "/s)"
	}
	p.Spec = spec
	return p, words, nil
}

// RunFleetPart runs a worker's share of a part (from Split): the driver of
// the call, the check if the part asks for it, the warm-up, and the load,
// started through tap and counted in live.
func RunFleetPart(ctx context.Context, p FleetPart, tap *load.Tap, live *load.Live) (results.Sample, error) {
	if p.Spec.Kind != load.KindClosed && p.Spec.Kind != load.KindOpen && p.Spec.Kind != load.KindBatched {
		return results.Sample{}, fmt.Errorf("a %s load does not run on a fleet", p.Spec.Kind)
	}
	c, err := driver.New(ctx, p.Call, p.Endpoint, driver.Options{Timeout: p.Spec.Timeout, QuickACK: p.QuickACK, Connections: p.Shared})
	if err != nil {
		return results.Sample{}, fmt.Errorf("target %s: %w", p.Target, err)
	}
	if err := fits(p.Spec, c); err != nil {
		return results.Sample{}, fmt.Errorf("target %s: %w", p.Target, err)
	}
	if p.Check {
		u, err := driver.TargetURL(p.Target)
		if err != nil {
			return results.Sample{}, err
		}
		if err := driver.Preflight(ctx, u, c, p.Spec.Timeout); err != nil {
			return results.Sample{}, err
		}
	}
	if p.Spec.Unit == "" {
		p.Spec.Unit = driver.Unit(c)
	}
	if w, ok := p.Spec.WarmUp(); ok {
		if _, err := w.Run(ctx, c); err != nil {
			return results.Sample{}, fmt.Errorf("target %s: warm-up: %w", p.Target, err)
		}
		if ctx.Err() != nil {
			return results.Sample{}, errors.New("nothing was measured: the warm-up was not over")
		}
	}
	p.Spec.Tap, p.Spec.Live = tap, live
	return p.Spec.Run(ctx, c)
}

// fits refuses a share this worker cannot run on c: an engine or a
// quantum its system or the call does not take (the event loop runs a
// closed or open loop over HTTP/1.1, HTTP/2, JSON-RPC or gRPC to IPv4, on Linux),
// or more clients or connections than its open-file limit holds.
func fits(spec load.Spec, c load.Dialer) error {
	if spec.Kind != load.KindBatched {
		w, err := load.EngineWire(spec.Engine, c)
		if err != nil {
			return fmt.Errorf("engine %s: %w", spec.Engine, err)
		}
		if spec.Quantum > 0 && w == nil {
			return errors.New("a quantum needs the event loop, which cannot run this call here (HTTP/1.1, HTTP/2, JSON-RPC or gRPC to IPv4, on Linux)")
		}
	}
	files, conns, what := 1, spec.Connections, "connections"
	switch spec.Kind {
	case load.KindOpen:
		files = 2 // a socket and a timer per connection
	case load.KindClosed:
		conns, what = spec.Clients, "clients"
	}
	if most, why := study.ConnectionBound(files); conns > most {
		return fmt.Errorf("%d %s: more than this worker holds, %d (%s)", conns, what, most, why)
	}
	return nil
}

// FleetJob is a fleet worker's job (fleet.Worker.Job): it reads the part
// the coordinator sent, takes its share, runs it and reports what it
// measured, with the generator's CPU time and what that says.
func FleetJob(ctx context.Context, p *fleet.Part) (fleet.Report, error) {
	var whole FleetPart
	if err := json.Unmarshal(p.Spec, &whole); err != nil {
		return fleet.Report{}, fmt.Errorf("malformed part: %w", err)
	}
	part, words, err := whole.Split(p.Index, p.Count)
	if err != nil {
		return fleet.Report{}, err
	}
	p.Describe(words)
	cpu0, _ := host.CPUTime()
	s, err := RunFleetPart(ctx, part, p.Tap, p.Live)
	cpu1, _ := host.CPUTime()
	if err != nil {
		return fleet.Report{}, err
	}
	conns := part.Spec.Connections
	if part.Spec.Kind == load.KindClosed {
		conns = part.Spec.Clients
	}
	return fleet.Report{Share: words, Sample: s, CPUNs: int64(cpu1 - cpu0), Warnings: finding.Generator(s, cpu1-cpu0, conns)}, nil
}

// CheckFleet refuses a study whose loops (those only leaves; all if
// empty) cannot be split over n workers: every level, and its warm-up, needs a client or
// connection per worker, and a request count a request per worker.
func CheckFleet(s *study.Study, only []string, n int) error {
	var errs []error
	for i := range s.Scenarios {
		sc := &s.Scenarios[i]
		kind := s.Kind(sc)
		if sc.Sweep != nil || len(only) > 0 && !slices.Contains(only, sc.Name) ||
			kind != study.KindClosed && kind != study.KindOpen && kind != study.KindBatched {
			continue
		}
		levels := []int(sc.Load.Concurrency)
		if kind != study.KindClosed {
			levels = []int{max(sc.Load.Connections, 1)}
		}
		for _, c := range levels {
			whole := load.Spec{Kind: load.Kind(kind), Clients: c, Connections: c, Requests: sc.Requests}
			for index := range n {
				if _, _, err := whole.Split(index, n); err != nil {
					errs = append(errs, fmt.Errorf("scenario %s: %w", sc.Name, err))
					break
				}
			}
		}
	}
	if len(errs) > 0 {
		errs = append(errs, errors.New("raise them, run fewer workers, or leave those scenarios out with --only"))
	}
	return errors.Join(errs...)
}

// FleetSession runs a study's loops on a fleet's session: each part goes
// out as JSON and comes back merged (fleet.Outcome.Sample). Where a worker
// is lost, it says so through Cancel, once, and keeps why in Lost.
type FleetSession struct {
	Session *fleet.Session
	// Where and OnLoss are what Outcome.Sample records.
	Where, OnLoss string
	// Lost is why the run stopped, if a worker was lost.
	Lost error
	// cancel stops the run (Run sets it) when a worker is lost and the
	// run fails.
	cancel  context.CancelCauseFunc
	meeting *fleet.Meeting
}

// OpenFleet checks that the study's loops (those only leaves) split over
// the fleet fo names, starts the fleet (fleet.Meet; say hears what it
// waits for) and waits for its workers. Close ends it.
func OpenFleet(ctx context.Context, s *study.Study, only []string, fo fleet.Options, version string, say func(string)) (*FleetSession, error) {
	if err := fo.Check(); err != nil {
		return nil, err
	}
	if err := CheckFleet(s, only, fo.Count()); err != nil {
		return nil, err
	}
	m, err := fleet.Meet(fo, say)
	if err != nil {
		return nil, err
	}
	sess, err := m.Coordinator(version).Open(ctx)
	if err != nil {
		m.Close()
		return nil, m.Explain(err)
	}
	return &FleetSession{Session: sess, Where: m.Where, OnLoss: fo.OnLoss, meeting: m}, nil
}

// Close ends the fleet's session and the meeting OpenFleet started.
func (f *FleetSession) Close() {
	f.Session.Close()
	if f.meeting != nil {
		f.meeting.Close()
	}
}

// Load runs one part of the study on the fleet.
func (f *FleetSession) Load(ctx context.Context, p FleetPart) (results.Sample, error) {
	spec, err := json.Marshal(p)
	if err != nil {
		return results.Sample{}, err
	}
	out, err := f.Session.Run(ctx, spec)
	if errors.Is(err, fleet.ErrWorkerLost) && f.Lost == nil {
		f.Lost = err
		if f.cancel != nil {
			f.cancel(err)
		}
	}
	if out == nil {
		return results.Sample{}, err
	}
	s, _ := out.Sample(f.Where, f.OnLoss)
	if why := out.Failed(); err == nil && why != "" && ctx.Err() == nil {
		err = fmt.Errorf("the fleet's run is not whole: %s", why) // the round fails: its load was not what was asked
	}
	return s, err
}
