package runner

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/internal/host"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/record"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/target"
	"github.com/tandem-bench/tandem/verdict"
)

// schedule is the open loop's timetable for a run of length d.
func schedule(l study.Load, d time.Duration) load.Schedule {
	switch {
	case l.Ramp != nil:
		return load.Ramp{From: l.Ramp.From, To: l.Ramp.To, Duration: d}
	case len(l.Steps) > 0:
		st := make(load.Steps, len(l.Steps))
		for i, s := range l.Steps {
			st[i] = load.Step{Rate: s.Rate, Duration: s.Duration}
		}
		return st
	}
	return load.Constant{Rate: l.Rate, Duration: d}
}

// measurer makes the runs of one scenario at one level, one target at a
// time. Each kind of scenario has its own (measurerFor).
type measurer interface {
	// at is the measurer of the scenario's level (a closed loop's
	// concurrency; 0 for the other kinds).
	at(level int) measurer
	// warm loads the target for about d (or a fixed count), to be
	// discarded.
	warm(ctx context.Context, l *live, d time.Duration) (results.Sample, error)
	// measure is one measured run: requests (0: until bound) within bound;
	// live, if set, follows it (loops only).
	measure(ctx context.Context, l *live, requests int64, bound time.Duration, live *load.Live) (results.Sample, error)
}

// loopRun is one run of a load loop against a target's dialer.
type loopRun func(ctx context.Context, d load.Dialer, requests int64, bound time.Duration, live *load.Live) (results.Sample, error)

// loops measures with one of load's loops (closed, open, batched) over a
// driver per target, built once per scenario; its warm-up is a loop of its
// own.
type loops struct {
	callers map[string]load.Dialer
	// shape is the loop at a level; warmShape its warm-up's.
	shape, warmShape func(level int) loopRun
	level            int
	// limit, if positive, bounds every run's requests: the rows of the
	// call's feeder read once.
	limit int64
}

func (m loops) at(level int) measurer {
	m.level = level
	return m
}

func (m loops) warm(ctx context.Context, l *live, d time.Duration) (results.Sample, error) {
	return m.warmShape(m.level)(ctx, m.caller(l), capRequests(0, m.limit), d, nil)
}

func (m loops) measure(ctx context.Context, l *live, requests int64, bound time.Duration, live *load.Live) (results.Sample, error) {
	return m.shape(m.level)(ctx, m.caller(l), capRequests(requests, m.limit), bound, live)
}

// capRequests is a run's request count (0: none) held to limit (0: none).
func capRequests(requests, limit int64) int64 {
	if limit > 0 && (requests == 0 || requests > limit) {
		return limit
	}
	return requests
}

// caller is l's caller, ready for a run: a group's round robin starts
// again from its first node, so every run spreads the same way.
func (m loops) caller(l *live) load.Dialer {
	c := m.callers[l.spec.Name]
	if rr, ok := c.(*roundRobin); ok {
		rr.reset()
	}
	return c
}

// loopSpec is a run of a scenario's loop of the given kind at a level (a
// closed loop's clients), of requests (0: until bound) and bound: the
// one description of it, whether it runs here or on a fleet's workers.
func loopSpec(kind study.Kind, ld study.Load, level int, requests int64, bound, timeout time.Duration, unit string) load.Spec {
	spec := load.Spec{Kind: load.Kind(kind), Requests: requests, Duration: bound, Timeout: timeout, Unit: unit,
		Engine: ld.Engine, Quantum: ld.Quantum}
	switch kind {
	case study.KindOpen:
		spec.Schedule, spec.Connections, spec.MaxWaiting = schedule(ld, bound), ld.Connections, ld.MaxWaiting
	case study.KindBatched:
		spec.Connections, spec.PerPeriod, spec.Period = ld.Connections, ld.Batch.PerPeriod, ld.Batch.Period
		spec.Requests, spec.Engine, spec.Quantum = 0, "", 0 // a batched loop is bounded by time, on its one engine
	default:
		spec.Clients = level
	}
	return spec
}

// closedLoop is a closed loop of clients at the given concurrency.
func closedLoop(clients int, l study.Load, timeout time.Duration, unit string) loopRun {
	return func(ctx context.Context, d load.Dialer, requests int64, bound time.Duration, live *load.Live) (results.Sample, error) {
		spec := loopSpec(study.KindClosed, l, clients, requests, bound, timeout, unit)
		spec.Live = live
		return spec.Run(ctx, d)
	}
}

// drains measures consumer targets: every run fills a queue and times a
// consumer's drain of it.
type drains struct {
	r    *runner
	call string
}

func (m drains) at(int) measurer { return m }

func (m drains) warm(ctx context.Context, l *live, _ time.Duration) (results.Sample, error) {
	return m.r.drainRun(ctx, l, m.call, drainWarmup)
}

func (m drains) measure(ctx context.Context, l *live, requests int64, _ time.Duration, _ *load.Live) (results.Sample, error) {
	return m.r.drainRun(ctx, l, m.call, requests)
}

// brokers measures an amqp call: every run publishes and consumes through
// one queue.
type brokers map[string]driver.Broker

func (m brokers) at(int) measurer { return m }

func (m brokers) warm(ctx context.Context, l *live, d time.Duration) (results.Sample, error) {
	return m[l.spec.Name].Run(ctx, driver.BrokerRun{Duration: d})
}

func (m brokers) measure(ctx context.Context, l *live, requests int64, bound time.Duration, _ *load.Live) (results.Sample, error) {
	if requests > 0 {
		bound = 0 // the count bounds the run; the timeout bounds the wait
	}
	return m[l.spec.Name].Run(ctx, driver.BrokerRun{Messages: requests, Duration: bound})
}

// measurerFor builds the measurer of a scenario of the given kind for its
// running targets, its call's values in vals (nil: none), the recording
// it replays in rec (nil: none) or its mix or flow (mu), each run held to
// limit requests (0: no limit).
func (r *runner) measurerFor(ctx context.Context, kind study.Kind, sc *study.Scenario, ls []*live, unit string,
	vals *driver.Values, rec *record.Index, mu *multi, limit int64) (measurer, error) {
	switch kind {
	case study.KindDrain:
		return drains{r: r, call: sc.Call}, nil
	case study.KindBroker:
		m := brokers{}
		for _, l := range ls {
			b, err := r.broker(l, sc.Call)
			if err != nil {
				return nil, err
			}
			m[l.spec.Name] = b
		}
		return m, nil
	}
	m := loops{callers: map[string]load.Dialer{}, limit: limit}
	for _, l := range ls {
		var c load.Dialer
		var err error
		switch {
		case rec != nil:
			c, err = r.replayer(l, sc.Replay, rec)
		case mu != nil:
			c, err = mu.caller(ctx, r, l)
		default:
			c, err = r.caller(ctx, l, sc.Call, vals)
		}
		if err != nil {
			return nil, err
		}
		m.callers[l.spec.Name] = c
	}
	timeout, ld := r.s.Defaults.Timeout, sc.Load
	if r.o.Fleet != nil {
		return r.fleetMeasurer(kind, sc, ls, m.callers, unit)
	}
	engine, err := oneEngine(kind, sc, ls, m.callers)
	if err != nil {
		return nil, err
	}
	ld.Engine = engine
	m.shape = func(level int) loopRun { return closedLoop(level, ld, timeout, unit) }
	switch kind {
	case study.KindOpen:
		m.shape = func(int) loopRun {
			return func(ctx context.Context, d load.Dialer, requests int64, bound time.Duration, live *load.Live) (results.Sample, error) {
				spec := loopSpec(kind, ld, 0, requests, bound, timeout, unit)
				if rec != nil {
					spec.Schedule = recorded(sc.Replay, rec)
				}
				spec.Live = live
				return spec.Run(ctx, d)
			}
		}
	case study.KindBatched:
		m.shape = func(int) loopRun {
			return func(ctx context.Context, d load.Dialer, requests int64, bound time.Duration, live *load.Live) (results.Sample, error) {
				spec := loopSpec(kind, ld, 0, requests, bound, timeout, unit)
				spec.Live = live
				return spec.Run(ctx, d)
			}
		}
	}
	// the warm-up is the scenario's own load for warmup's length; a batched
	// load's is a closed loop of its connections
	m.warmShape = m.shape
	if kind == study.KindBatched {
		m.warmShape = func(int) loopRun { return closedLoop(ld.Connections, study.Load{}, timeout, unit) }
	}
	return m, nil
}

// oneEngine is the engine every target of a scenario runs on, so that
// they are compared on one generator, locally or on a fleet's workers: the
// scenario's own, else the event loop if it can run every target's caller
// (callers, by target name), else the workers; a batched loop's has none.
func oneEngine(kind study.Kind, sc *study.Scenario, ls []*live, callers map[string]load.Dialer) (string, error) {
	if sc.Load.Engine != "" || kind == study.KindBatched {
		return sc.Load.Engine, nil
	}
	for _, l := range ls {
		if w, err := load.EngineWire("", callers[l.spec.Name]); w == nil || err != nil {
			if sc.Load.Quantum > 0 {
				return "", fmt.Errorf("scenario %s: a quantum needs the event loop, which cannot run target %s's call %s (HTTP/1.1, HTTP/2, JSON-RPC or gRPC to IPv4, on Linux, not round-robin)",
					sc.Name, l.spec.Name, sc.Call)
			}
			return load.EngineWorkers, nil
		}
	}
	return load.EngineLoop, nil
}

// levels are a scenario's levels: a closed loop's concurrencies (an amqp
// call's too; a drain has none), else one level, 0.
func levels(kind study.Kind, sc *study.Scenario) []int {
	if kind == study.KindDrain || sc.Model() != study.KindClosed {
		return []int{0}
	}
	return sc.Load.Concurrency
}

// counted reports whether a scenario's runs are bounded by a count of
// requests (or messages), calibrated when the study gives none, rather
// than by a duration.
func counted(kind study.Kind, sc *study.Scenario) bool {
	return kind == study.KindDrain || sc.Model() == study.KindClosed
}

// resultsLoad is the load recorded for a scenario of the given kind.
func resultsLoad(kind study.Kind, l study.Load, d time.Duration) results.Load {
	model := kind
	if kind == study.KindBroker {
		model = l.Model() // recorded by its load shape, as it is written
	}
	out := results.Load{Model: results.Model(model), Concurrency: l.Concurrency, Connections: l.Connections, Engine: l.Engine,
		QuantumNs: int64(l.Quantum)}
	switch model {
	case study.KindOpen:
		sch := schedule(l, d)
		out.Schedule = sch.String()
		if c, ok := sch.(load.Constant); ok {
			out.Rate = c.Rate
		}
	case study.KindBatched:
		out.PerPeriod, out.PeriodNs = l.Batch.PerPeriod, int64(l.Batch.Period)
		out.Rate = float64(l.Connections*l.Batch.PerPeriod) / l.Batch.Period.Seconds()
	}
	return out
}

// running returns the scenario's targets that are up, in its order; with
// none it warns that the scenario (what names it) is skipped.
func (r *runner) running(sc *study.Scenario, what string) []*live {
	var ls []*live
	for _, name := range sc.Targets {
		for _, l := range r.live {
			if l.spec.Name == name && l.err == nil {
				ls = append(ls, l)
			}
		}
	}
	if len(ls) == 0 {
		r.warn(fmt.Sprintf("%s %s: skipped: none of its targets is running", what, sc.Name))
	}
	return ls
}

func (r *runner) scenario(ctx context.Context, sc *study.Scenario) error {
	ls := r.running(sc, "scenario")
	if len(ls) == 0 {
		return nil
	}
	kind := r.s.Kind(sc)
	rounds := sc.Rounds
	if r.o.Rounds > 0 {
		rounds = r.o.Rounds
	}
	unit := "request"
	if names := sc.CallNames(); len(names) > 0 && r.s.Calls[names[0]] != nil && r.s.Calls[names[0]].Unit != "" {
		unit = r.s.Calls[names[0]].Unit
	}
	rec, err := r.openReplay(sc)
	if err != nil {
		return err
	}
	if rec != nil {
		defer rec.Close()
	}
	bound := sc.Duration
	if len(sc.Load.Steps) > 0 {
		bound = schedule(sc.Load, 0).Len()
	}
	if rec != nil && bound == 0 && kind == study.KindOpen {
		bound = recorded(sc.Replay, rec).Len() // one pass, or 0 for a loop bounded by its requests
	}
	rs := results.Scenario{Name: sc.Name, Call: sc.Call, Metric: "latency_p50_ns", Direction: results.Lower, Unit: unit,
		Load: resultsLoad(kind, sc.Load, bound), Rounds: []results.Round{}, Summary: []results.Summary{}, Comparisons: []results.Comparison{}}
	if rec != nil {
		replayResults(&rs, sc.Replay, rec, kind)
	}
	switch sc.Metric {
	case "throughput":
		rs.Metric, rs.Direction = "units_per_s", "higher"
	case "recovery":
		rs.Metric = "recovery_ns"
	}
	if c := r.s.Calls[sc.Call]; c != nil {
		rs.Load.Prefetch = driver.Prefetch(c)
	}
	mu, err := r.newMulti(sc)
	if err != nil {
		return err
	}
	vals, limit, err := r.openValues(ctx, sc)
	if err != nil {
		return err
	}
	if mu != nil {
		r.progress("%s", mu.describe())
		if limit, err = mu.open(ctx, r); err != nil {
			return err
		}
		defer mu.close()
		rs.Kind = mu.kind
	}
	if rec != nil && !sc.Replay.Loop {
		limit = int64(rec.Len()) // every run sends the recording once at most
	}
	if vals != nil {
		defer vals.Set().Close()
	}
	// the scenario, and after it its parts' scenarios: none is added to
	// the results while it runs, so their places hold
	at := len(r.res.Scenarios)
	r.res.Scenarios = append(r.res.Scenarios, rs)
	var parts []*results.Scenario
	if mu != nil {
		r.res.Scenarios = append(r.res.Scenarios, mu.scenarios(rs)...)
		for k := range mu.calls {
			parts = append(parts, &r.res.Scenarios[at+1+k])
		}
	}
	out := &r.res.Scenarios[at]
	m, err := r.measurerFor(ctx, kind, sc, ls, unit, vals, rec, mu, limit)
	if err != nil {
		return err
	}
	for _, level := range levels(kind, sc) {
		if err := r.level(ctx, sc, kind, out, parts, ls, m.at(level), level, rounds, unit, bound, limit); err != nil {
			return err
		}
	}
	if vals != nil {
		return r.recordValues(ctx, sc, out, vals)
	}
	return r.recordParts(ctx, sc, out, parts, mu, m)
}

// recordParts records what a mix or a flow took: each part's drawn
// values and a mix's picks.
func (r *runner) recordParts(ctx context.Context, sc *study.Scenario, out *results.Scenario, parts []*results.Scenario, mu *multi, m measurer) error {
	if mu == nil {
		return nil
	}
	for k, v := range mu.vals {
		if v != nil && mu.drawn[k] {
			if err := r.recordValues(ctx, sc, parts[k], v); err != nil {
				return err
			}
		}
	}
	if lp, ok := m.(loops); ok && mu.kind == results.KindMix {
		return r.recordPicks(sc, out, lp.callers)
	}
	return nil
}

// headline is a round's value of the scenario's metric, from its
// successful answers; NaN (a failed round) when it has none.
func headline(s results.Sample, higher bool) float64 {
	switch {
	case s.OK == 0, higher && s.UnitsPerS <= 0:
		return math.NaN()
	case higher:
		return s.UnitsPerS
	}
	return float64(s.LatencyNs.P50)
}

func (r *runner) level(ctx context.Context, sc *study.Scenario, kind study.Kind, out *results.Scenario, parts []*results.Scenario, ls []*live,
	m measurer, level, rounds int, unit string, bound time.Duration, limit int64) error {
	lv := &levelRun{sc: sc, kind: kind, out: out, parts: parts, m: m, level: level, unit: unit, higher: sc.Metric == "throughput", name: sc.Name}
	if level > 0 { // a closed loop's
		lv.name = fmt.Sprintf("%s c=%d", sc.Name, level)
	}
	// Warm-up, discarded.
	if err := r.warmUp(ctx, lv, ls); err != nil {
		return err
	}
	ls = slices.DeleteFunc(slices.Clone(ls), func(l *live) bool { return l.err != nil })
	requests, bound, err := r.levelRequests(ctx, lv, ls, bound, limit)
	if err != nil {
		return err
	}
	out.Requests, out.DurationNs = requests, int64(bound)
	rounds, adaptive, plan := r.levelPlan(sc, ls, rounds)
	started, done := time.Now(), 0
	for round := 1; round <= rounds; round++ {
		if err := r.levelRound(ctx, lv, ls, round, rounds, requests, bound); err != nil {
			return err
		}
		done = round
		if adaptive && r.decided(sc, out, ls, level, plan, round, lv.name) {
			break
		}
		if adaptive && round < rounds {
			// another round would take about as long as the average one
			if spent := time.Since(started); spent+spent/time.Duration(round) > r.s.Defaults.MaxTime {
				r.progress("%s: the budget (max_time %s) is spent after %d rounds", lv.name, roundEstimate(r.s.Defaults.MaxTime), round)
				break
			}
		}
	}
	design := stats.Design{Paired: true, Alpha: r.alpha, Looks: stats.Final(plan, done)}
	r.summarize(sc, out, ls, level, design)
	r.judgeParts(parts, out, ls, level, design)
	r.send(Event{Line: lv.name + ": done", Done: out, Level: level})
	for _, p := range parts {
		r.send(Event{Line: p.Name + ": done", Done: p, Level: level})
	}
	return r.save()
}

// levelRun is what the phases of one level of a scenario share.
type levelRun struct {
	sc     *study.Scenario
	kind   study.Kind
	out    *results.Scenario
	parts  []*results.Scenario
	m      measurer
	level  int
	unit   string
	name   string // the level's name in progress lines
	higher bool   // the metric is throughput: higher is better
}

// checkedRun is a run's sample and error, with the error of a started
// target that exited during it if the run had none.
func checkedRun(l *live, s results.Sample, err error) (results.Sample, error) {
	if err == nil && l.proc != nil {
		err = exitedDuring(l, s)
	}
	return s, err
}

// warmUp runs the level's discarded warm-up on each target; a target that
// fails it is failed.
func (r *runner) warmUp(ctx context.Context, lv *levelRun, ls []*live) error {
	for _, l := range ls {
		if lv.kind == study.KindDrain {
			r.progressEvent(Event{Target: l.spec.Name}, "%s: warm-up on %s (%d messages)", lv.name, l.spec.Name, drainWarmup)
		} else {
			r.progressEvent(Event{Target: l.spec.Name}, "%s: warm-up on %s (%v)", lv.name, l.spec.Name, r.s.Defaults.Warmup)
		}
		s, err := lv.m.warm(ctx, l, r.s.Defaults.Warmup)
		if _, err := checkedRun(l, s, err); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.fail(l, fmt.Errorf("scenario %s: warm-up on %s: %w", lv.sc.Name, l.spec.Name, err))
		}
	}
	return nil
}

// levelRequests is how many requests, within what bound, each of the
// level's runs makes: the scenario's, a recording's one pass, or
// calibrated; capped at limit.
func (r *runner) levelRequests(ctx context.Context, lv *levelRun, ls []*live, bound time.Duration, limit int64) (int64, time.Duration, error) {
	sc := lv.sc
	exec := func(l *live, requests int64, d time.Duration) (results.Sample, error) {
		s, err := lv.m.measure(ctx, l, requests, d, nil)
		return checkedRun(l, s, err)
	}
	requests := sc.Requests
	if sc.Replay != nil && requests == 0 && bound == 0 {
		requests = limit // a closed loop's one pass of the recording, not calibrated
	}
	if counted(lv.kind, sc) && requests == 0 && bound == 0 {
		var err error
		if requests, err = r.calibrate(ctx, sc, lv.kind, ls, lv.level, exec); err != nil {
			return 0, 0, err
		}
		bound = 3 * r.s.Defaults.MinDuration
		r.progress("%s: calibrated to %d requests per run", lv.name, requests)
	}
	requests = capRequests(requests, limit) // as the measurer holds every run
	return requests, bound, nil
}

// levelPlan is the level's rounds, whether it stops adaptively and the
// looks at which it may.
func (r *runner) levelPlan(sc *study.Scenario, ls []*live, rounds int) (int, bool, []stats.Look) {
	adaptive := sc.Adaptive && r.o.Rounds == 0
	plan := []stats.Look{{Rounds: rounds, Share: 1}}
	if adaptive {
		if !r.judged(sc, ls) {
			rounds = study.DefaultRounds // nothing to compare: a summary of a few rounds
			adaptive = false
		}
		plan = stats.Schedule(r.alpha, rounds)
	}
	return rounds, adaptive, plan
}

// levelRound runs one round of the level on each target not failed, in
// the round's order, recording and saving each as it ends.
func (r *runner) levelRound(ctx context.Context, lv *levelRun, ls []*live, round, rounds int, requests int64, bound time.Duration) error {
	order := roundOrder(ls, r.s.Defaults.Order, r.s.Seed, lv.sc.Name, lv.level, round)
	for i, l := range order {
		if l.err != nil {
			continue
		}
		r.send(Event{Status: true, Target: l.spec.Name, Round: round, Rounds: rounds})
		rd, err := r.measureRound(ctx, lv, l, round, i, requests, bound)
		if err != nil {
			return err
		}
		partRounds(rd, lv.parts)
		rd.Parts = nil // recorded in the parts' scenarios
		lv.out.Rounds = append(lv.out.Rounds, rd)
		r.progressEvent(Event{Target: l.spec.Name, Round: round, Rounds: rounds}, "%s round %d/%d %s: %s", lv.name, round, rounds, l.spec.Name, describeRound(rd))
		if err := r.save(); err != nil {
			return err
		}
	}
	return nil
}

// measureRound runs target l's round (the i-th in the round's order), with
// its perturbations, and makes its record: a failed run is a failed round
// (and a target that exited is failed); only ctx's end is an error.
func (r *runner) measureRound(ctx context.Context, lv *levelRun, l *live, round, i int, requests int64, bound time.Duration) (results.Round, error) {
	cpu0, _ := host.CPUTime() // 0 where the OS does not say
	t0 := time.Now()
	s, events, err := r.perturbed(ctx, lv.sc, lv.m, l, requests, bound)
	if err == nil && l.proc != nil && len(events) == 0 {
		err = exitedDuring(l, s)
	} else if err == nil && l.proc != nil {
		err = exitedNow(l) // the perturbations' own errors are not an exit
	}
	if ctx.Err() != nil {
		return results.Round{}, ctx.Err()
	}
	cpu1, _ := host.CPUTime()
	cpu := int64(cpu1 - cpu0)
	rd := results.Round{Round: round, Order: i + 1, Target: l.spec.Name, Concurrency: lv.level, Sample: s, Headline: headline(s, lv.higher),
		GeneratorCPUNs: cpu, GeneratorCPUUse: float64(cpu) / float64(time.Since(t0)) / r.generatorCapacity(s.Engine),
		Perturbations: events}
	if s.EngineCPUNs > 0 && s.DurationNs > 0 { // the event loop's thread: the generator itself
		rd.GeneratorCPUUse = float64(s.EngineCPUNs) / float64(s.DurationNs)
	}
	if lv.sc.Metric == "recovery" {
		rd.Headline = recoveryHeadline(events)
	}
	if s.Fleet != nil { // the generator is the workers: as busy as the busiest
		rd.GeneratorCPUUse = fleetCPUUse(s.Fleet, time.Duration(s.DurationNs))
	}
	if err != nil {
		rd.Failed, rd.Error, rd.Headline = true, err.Error(), 0
		var exit *target.ExitError
		if errors.As(err, &exit) {
			r.fail(l, err)
		}
	}
	if math.IsNaN(rd.Headline) {
		rd.Failed, rd.Error, rd.Headline = true, "no successful "+lv.unit, 0
	}
	if rd.Errors == nil {
		rd.Errors = map[string]int64{}
	}
	return rd, nil
}

// judged reports whether a scenario's level has a comparison to judge:
// the baseline and a candidate running.
func (r *runner) judged(sc *study.Scenario, ls []*live) bool {
	base := slices.ContainsFunc(ls, func(l *live) bool { return l.spec.Name == r.s.Baseline })
	return base && len(ls) > 1
}

// decided reports, at a planned look, whether every comparison of the
// level is decided on the rounds so far; it says which are still open.
func (r *runner) decided(sc *study.Scenario, out *results.Scenario, ls []*live, level int, plan []stats.Look, round int, name string) bool {
	var taken []stats.Look
	for _, l := range plan {
		if l.Rounds <= round {
			taken = append(taken, l)
		}
	}
	names := make([]string, 0, len(ls))
	for _, l := range ls {
		if l.err == nil {
			names = append(names, l.spec.Name)
		}
	}
	if round >= r.policy.MinRounds && verdict.Gated(r.policy, out, level, names, r.s.Baseline, r.s.AA) {
		r.progress("%s: after %d rounds the health gate decides every comparison: no speed verdict more rounds could give", name, round)
		return true
	}
	if len(taken) == 0 || taken[len(taken)-1].Rounds != round {
		return false // not a look
	}
	open := verdict.Open(r.policy, out, level, names, r.s.Baseline, r.s.AA, stats.Design{Paired: true, Alpha: r.alpha, Looks: taken})
	if len(open) == 0 {
		r.progress("%s: every comparison decided after %d rounds", name, round)
		return true
	}
	var what []string
	for _, c := range open {
		w := c.Candidate
		if e := c.Estimate; e != nil && e.Bounded() {
			w += fmt.Sprintf(" (ratio %s [%s … %s])", stats.Ratio(e.Ratio), stats.Ratio(e.Lo), stats.Ratio(e.Hi))
		}
		what = append(what, w)
	}
	next := ""
	for _, l := range plan {
		if l.Rounds > round {
			next = fmt.Sprintf("; next look after round %d", l.Rounds)
			break
		}
	}
	r.progress("%s: after %d rounds still open: %s%s", name, round, strings.Join(what, ", "), next)
	return false
}

// roundOrder is the order of the targets in a round: alternating (round 1
// in study order, round 2 reversed, …) or a shuffle seeded by the study's
// seed, the scenario, the level and the round, so a rerun repeats it.
func roundOrder(ls []*live, order string, seed uint64, scenario string, level, round int) []*live {
	out := slices.Clone(ls)
	if order == "shuffle" {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s/%d/%d", scenario, level, round)
		rng := rand.New(rand.NewPCG(seed, h.Sum64()))
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
	if round%2 == 0 {
		slices.Reverse(out)
	}
	return out
}

// exitedDuring reports a target that exited during a run. A run that met
// transport errors (refused, reset, eof) gives the exit a moment to be
// reaped, so the round carries the exit status and the last output rather
// than a list of connection errors.
func exitedDuring(l *live, s results.Sample) error {
	if err := exitedNow(l); err != nil {
		return err
	}
	if s.Errors["refused"]+s.Errors["reset"]+s.Errors["eof"]+s.Errors["transport"] == 0 {
		return nil
	}
	t := time.NewTimer(500 * time.Millisecond)
	defer t.Stop()
	select {
	case <-l.proc.Done():
		return l.proc.ExitErr()
	case <-t.C:
		return nil
	}
}

// exitedNow reports a target (any of its processes) that has exited.
func exitedNow(l *live) error { return l.exitedNode() }

func describeRound(rd results.Round) string {
	if rd.Failed {
		return "failed: " + rd.Error
	}
	s := fmt.Sprintf("%s of %s ok, p50 %s, p99 %s, %s %s/s", human.Count(rd.OK), human.Count(rd.Requests),
		human.Duration(float64(rd.LatencyNs.P50)), human.Duration(float64(rd.LatencyNs.P99)), human.Number(rd.UnitsPerS), rd.Unit)
	if rd.OfferedRate > 0 {
		s += fmt.Sprintf(" (offered %s/s, achieved %s/s, dropped %s)", human.Number(rd.OfferedRate), human.Number(rd.AchievedRate),
			human.Count(rd.Dropped))
	}
	return s
}

// minCalibrated is the fewest requests a calibrated run makes, so the
// fastest target's percentiles rest on enough samples; with adaptive
// rounds, whose many rounds carry the verdict, minAdaptive.
const (
	minCalibrated = 200
	minAdaptive   = 20
)

// calibrate doubles the request count until a run on every target lasts
// at least min_duration, and returns the count that makes the slowest
// target's run last min_duration (at least minCalibrated).
func (r *runner) calibrate(ctx context.Context, sc *study.Scenario, kind study.Kind, ls []*live, level int,
	exec func(*live, int64, time.Duration) (results.Sample, error)) (int64, error) {
	minDur := r.s.Defaults.MinDuration
	best := int64(math.MaxInt64)
	for _, l := range ls {
		n := int64(16 * max(level, 1))
		if kind == study.KindDrain {
			n = 1000 // each run fills a queue and starts a consumer: start higher
		}
		for {
			s, err := exec(l, n, 2*minDur)
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			if err != nil {
				r.fail(l, fmt.Errorf("scenario %s: calibration on %s: %w", sc.Name, l.spec.Name, err))
				break
			}
			if time.Duration(s.DurationNs) >= minDur || s.Requests < n {
				// long enough, or cut short by the time bound: scale to min_duration
				rate := float64(s.Requests) / time.Duration(s.DurationNs).Seconds()
				best = min(best, max(int64(math.Ceil(rate*minDur.Seconds())), 1))
				break
			}
			n *= 2
		}
	}
	if best == math.MaxInt64 {
		return 0, nil // every target failed and is recorded so
	}
	if sc.Adaptive && r.o.Rounds == 0 {
		return max(best, minAdaptive), nil
	}
	return max(best, minCalibrated), nil
}
