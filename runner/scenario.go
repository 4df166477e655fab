package runner

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/target"
)

// executor runs one measured run of a scenario at one level against a
// dialer; requests and bound are the calibrated count and time bound.
type executor func(ctx context.Context, d load.Dialer, requests int64, bound time.Duration) (results.Sample, error)

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

// executorFor returns the executor of a scenario's load shape at level
// (the concurrency of a closed loop; unused otherwise).
func (r *runner) executorFor(sc *study.Scenario, level int, unit string) executor {
	timeout := r.s.Defaults.Timeout
	l := sc.Load
	switch l.Model() {
	case "open":
		return func(ctx context.Context, d load.Dialer, requests int64, bound time.Duration) (results.Sample, error) {
			return load.Open{Schedule: schedule(l, bound), Connections: l.Connections, Requests: requests, Duration: bound,
				MaxWaiting: l.MaxWaiting, Timeout: timeout, Unit: unit, Engine: l.Engine, Quantum: l.Quantum}.Run(ctx, d)
		}
	case "batched":
		return func(ctx context.Context, d load.Dialer, _ int64, bound time.Duration) (results.Sample, error) {
			return load.Batched{Connections: l.Connections, PerPeriod: l.Batch.PerPeriod, Period: l.Batch.Period,
				Duration: bound, Timeout: timeout, Unit: unit}.Run(ctx, d)
		}
	}
	return func(ctx context.Context, d load.Dialer, requests int64, bound time.Duration) (results.Sample, error) {
		return load.Closed{Concurrency: level, Requests: requests, Duration: bound, Timeout: timeout, Unit: unit, Engine: l.Engine,
			Quantum: l.Quantum}.Run(ctx, d)
	}
}

func resultsLoad(l study.Load, d time.Duration) results.Load {
	out := results.Load{Model: l.Model(), Concurrency: l.Concurrency, Connections: l.Connections, Engine: l.Engine,
		QuantumNs: int64(l.Quantum)}
	switch out.Model {
	case "open":
		sch := schedule(l, d)
		out.Schedule = sch.String()
		if c, ok := sch.(load.Constant); ok {
			out.Rate = c.Rate
		}
	case "batched":
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
	rounds := sc.Rounds
	if r.o.Rounds > 0 {
		rounds = r.o.Rounds
	}
	unit := r.s.Calls[sc.Call].Unit
	if unit == "" {
		unit = "request"
	}
	bound := sc.Duration
	if len(sc.Load.Steps) > 0 {
		bound = schedule(sc.Load, 0).Len()
	}
	rs := results.Scenario{Name: sc.Name, Call: sc.Call, Metric: "latency_p50_ns", Direction: "lower", Unit: unit,
		Load: resultsLoad(sc.Load, bound), Rounds: []results.Round{}, Summary: []results.Summary{}, Comparisons: []results.Comparison{}}
	if sc.Metric == "throughput" {
		rs.Metric, rs.Direction = "units_per_s", "higher"
	}
	if a := r.s.Calls[sc.Call].AMQP; a != nil {
		rs.Load.Prefetch = max(a.Prefetch, 1)
	}
	drains := r.s.Drains(sc)
	if drains {
		rs.Load.Model = "drain"
	}
	r.res.Scenarios = append(r.res.Scenarios, rs)
	out := &r.res.Scenarios[len(r.res.Scenarios)-1]
	callers := map[string]driver.Caller{}
	for _, l := range ls {
		if drains {
			break // each run fills a queue and starts the consumer
		}
		c, err := r.caller(ctx, l, sc.Call)
		if err != nil {
			return err
		}
		callers[l.spec.Name] = c
	}
	levels := []int(sc.Load.Concurrency)
	if drains || sc.Load.Model() != "closed" {
		levels = []int{0}
	}
	for _, level := range levels {
		if err := r.level(ctx, sc, out, ls, callers, level, rounds, unit, bound); err != nil {
			return err
		}
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

func (r *runner) level(ctx context.Context, sc *study.Scenario, out *results.Scenario, ls []*live,
	callers map[string]driver.Caller, level, rounds int, unit string, bound time.Duration) error {
	higher := sc.Metric == "throughput"
	drains := r.s.Drains(sc)
	run := r.executorFor(sc, level, unit)
	exec := func(l *live, requests int64, d time.Duration) (results.Sample, error) {
		var s results.Sample
		var err error
		if drains {
			s, err = r.drainRun(ctx, l, sc.Call, requests) // fill a queue, time a consumer's drain
		} else if a, ok := callers[l.spec.Name].(driver.AMQP); ok {
			s, err = a.Run(ctx, requests, d) // a broker run: publish and consume through one queue
		} else {
			s, err = run(ctx, callers[l.spec.Name], requests, d)
		}
		if err == nil && l.proc != nil {
			err = exitedDuring(l, s)
		}
		return s, err
	}
	name := sc.Name
	if sc.Load.Model() == "closed" && !drains {
		name = fmt.Sprintf("%s c=%d", sc.Name, level)
	}
	// Warm-up, discarded: the scenario's own load shape for warmup's length
	// (a closed loop of the connections for batched loads).
	warm := exec
	if _, ok := callers[ls[0].spec.Name].(driver.AMQP); !ok && sc.Load.Model() == "batched" {
		closed := r.executorFor(&study.Scenario{Load: study.Load{Concurrency: study.IntList{sc.Load.Connections}}}, sc.Load.Connections, unit)
		warm = func(l *live, requests int64, d time.Duration) (results.Sample, error) {
			return closed(ctx, callers[l.spec.Name], requests, d)
		}
	}
	for _, l := range ls {
		if drains {
			r.progress("%s: warm-up on %s (%d messages)", name, l.spec.Name, drainWarmup)
		} else {
			r.progress("%s: warm-up on %s (%v)", name, l.spec.Name, r.s.Defaults.Warmup)
		}
		if _, err := warm(l, 0, r.s.Defaults.Warmup); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.fail(l, fmt.Errorf("scenario %s: warm-up on %s: %w", sc.Name, l.spec.Name, err))
		}
	}
	ls = slices.DeleteFunc(slices.Clone(ls), func(l *live) bool { return l.err != nil })
	requests := sc.Requests
	if (sc.Load.Model() == "closed" || drains) && requests == 0 && bound == 0 {
		var err error
		if requests, err = r.calibrate(ctx, sc, ls, level, exec); err != nil {
			return err
		}
		bound = 3 * r.s.Defaults.MinDuration
		r.progress("%s: calibrated to %d requests per run", name, requests)
	}
	out.Requests, out.DurationNs = requests, int64(bound)
	for round := 1; round <= rounds; round++ {
		order := roundOrder(ls, r.s.Defaults.Order, r.s.Seed, sc.Name, level, round)
		for i, l := range order {
			if l.err != nil {
				continue
			}
			cpu0, t0 := selfCPU(), time.Now()
			s, err := exec(l, requests, bound)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			cpu := selfCPU() - cpu0
			rd := results.Round{Round: round, Order: i + 1, Target: l.spec.Name, Concurrency: level, Sample: s, Headline: headline(s, higher),
				GeneratorCPUNs: cpu, GeneratorCPUUse: float64(cpu) / float64(time.Since(t0)) / r.generatorCapacity(sc.Load)}
			if err != nil {
				rd.Failed, rd.Error, rd.Headline = true, err.Error(), 0
				var exit *target.ExitError
				if errors.As(err, &exit) {
					r.fail(l, err)
				}
			}
			if math.IsNaN(rd.Headline) {
				rd.Failed, rd.Error, rd.Headline = true, "no successful "+unit, 0
			}
			if rd.Errors == nil {
				rd.Errors = map[string]int64{}
			}
			out.Rounds = append(out.Rounds, rd)
			r.progress("%s round %d/%d %s: %s", name, round, rounds, l.spec.Name, describeRound(rd))
			if err := r.save(); err != nil {
				return err
			}
		}
	}
	r.summarize(sc, out, ls, level)
	return r.save()
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
	select {
	case <-l.proc.Done():
		return l.proc.ExitErr()
	default:
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

func describeRound(rd results.Round) string {
	if rd.Failed {
		return "failed: " + rd.Error
	}
	s := fmt.Sprintf("%d ok, %d errors, p50 %v, p99 %v, %.0f %s/s", rd.OK, rd.Requests-rd.OK,
		time.Duration(rd.LatencyNs.P50), time.Duration(rd.LatencyNs.P99), rd.UnitsPerS, rd.Unit)
	if rd.OfferedRate > 0 {
		s += fmt.Sprintf(" (offered %.0f/s, achieved %.0f/s, dropped %d)", rd.OfferedRate, rd.AchievedRate, rd.Dropped)
	}
	return s
}

// minCalibrated is the fewest requests a calibrated run makes, so the
// fastest target's percentiles rest on enough samples.
const minCalibrated = 200

// calibrate doubles the request count until a run on every target lasts
// at least min_duration, and returns the count that makes the slowest
// target's run last min_duration (at least minCalibrated).
func (r *runner) calibrate(ctx context.Context, sc *study.Scenario, ls []*live, level int,
	exec func(*live, int64, time.Duration) (results.Sample, error)) (int64, error) {
	minDur := r.s.Defaults.MinDuration
	best := int64(math.MaxInt64)
	for _, l := range ls {
		n := int64(16 * max(level, 1))
		if r.s.Drains(sc) {
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
	return max(best, minCalibrated), nil
}
