package study

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/tandem-bench/tandem/link/veth"
)

// Bounds on a scenario's load: what one generator can send and hold. A
// study that asks for more is refused by validation, not cut short by the
// run.
const (
	// MinRunDuration is the shortest measured run (a scenario's duration,
	// or its steps' total); a batched loop's run is at least one period.
	MinRunDuration = time.Millisecond
	// MaxRate is the highest open-loop rate: arrivals per second in total,
	// over every connection (a ramp's or step's peak, a batched loop's
	// per_period × connections / period, a sweep cell's rate × connections).
	MaxRate = 10_000_000
	// MaxArrivals is the most requests one run may send: its arrivals
	// (rate × duration), or its requests.
	MaxArrivals = 1_000_000_000
	// MaxRoundsLimit is the most rounds a scenario's level may run (the
	// shift rule's distributions are counted exactly up to 300 pairs).
	MaxRoundsLimit = 300
	// MaxConnections is the most connections (closed-loop clients) of one
	// run, whatever the open-file limit: the generator keeps latency
	// histograms of a few hundred KiB per connection.
	MaxConnections = 100_000
	// FileHeadroom is the open files kept for tandem itself (its listeners,
	// logs, results, the targets' pipes) when connections are held against
	// the open-file limit.
	FileHeadroom = 64
)

// limits is the machine a study's load is checked against.
type limits struct {
	// openFiles is the process's open-file limit; 0 when unknown.
	openFiles int
	// kernelPath says why this process may not make the kernel's network
	// path (veth.Probe); nil if it may. Asked only of a study that wants it.
	kernelPath func() error
}

// machineLimits looks up this process's limits.
func machineLimits() limits {
	n, _ := openFileLimit() // 0 when unknown
	return limits{openFiles: n, kernelPath: veth.Probe}
}

// connections checks a connection count n (what names it: concurrency or
// connections) against MaxConnections and the open-file limit, at files
// open files per connection.
func (v *validator) connections(path, what string, n, files int) {
	if n <= MaxConnections && (v.lim.openFiles == 0 || n <= (v.lim.openFiles-FileHeadroom)/files) {
		return
	}
	if v.lim.openFiles == 0 || (v.lim.openFiles-FileHeadroom)/files >= MaxConnections {
		v.errorf(path, fmt.Sprintf("at most %s: the generator keeps latency histograms for every connection", thousands(MaxConnections)),
			"%s %d exceeds tandem's limit of %s connections", what, n, thousands(MaxConnections))
		return
	}
	most := max((v.lim.openFiles-FileHeadroom)/files, 0)
	if files == 1 {
		v.errorf(path, fmt.Sprintf("at most %d: one open file per connection, %d kept for tandem", most, FileHeadroom),
			"%s %d exceeds the open-file limit %d (ulimit -n)", what, n, v.lim.openFiles)
		return
	}
	v.errorf(path, fmt.Sprintf("at most %d: an open loop's connection takes %d open files (a socket and a timer), %d kept for tandem", most, files, FileHeadroom),
		"%s %d at %d open files each exceed the open-file limit %d (ulimit -n)", what, n, files, v.lim.openFiles)
}

// number formats a rate or a count for a message: whole numbers with
// thousands separators, others as %g.
func number(r float64) string {
	if r == math.Trunc(r) && math.Abs(r) < 1e15 {
		return thousands(int64(r))
	}
	return strconv.FormatFloat(r, 'g', 4, 64)
}

// reported reports whether path already has an error: one mistake, one
// message.
func (v *validator) reported(path string) bool {
	return slices.ContainsFunc(v.errs, func(e *Error) bool { return e.Path == path })
}

// positive refuses a zero that a study gives explicitly where the key's
// absence means a default: the zero would be replaced, not used.
func (v *validator) positive(path, what string, zero bool, expected string) {
	if _, set := v.pos[path]; set && zero {
		v.errorf(path, expected, "%s is 0", what)
	}
}

// positiveDuration is positive for a duration.
func (v *validator) positiveDuration(path, what string, d time.Duration, expected string) {
	if _, set := v.pos[path]; set && d == 0 {
		v.errorf(path, expected, "%s is 0s", what)
	}
}

// settings checks the settings that validation used to accept and the run
// then ignored or choked on: the order of targets, explicit zeros that
// would be replaced by defaults, every scenario's load against what a
// generator can send and hold, and the generator's CPU list.
func (v *validator) settings() {
	s := v.s
	if o := s.Defaults.Order; o != "" && o != "alternate" && o != "shuffle" {
		v.errorf("defaults.order", "alternate or shuffle", "unknown order %q", o)
	}
	v.positive("defaults.rounds", "rounds", s.Defaults.Rounds == 0, "at least 1; leave it out for the default, 3")
	v.positiveDuration("defaults.timeout", "timeout", s.Defaults.Timeout, "a positive duration; leave it out for the default, 10s")
	for i := range s.Targets {
		v.positiveDuration(fmt.Sprintf("targets[%d].ready.timeout", i), "timeout", s.Targets[i].Ready.Timeout, "a positive duration; leave it out for the default, 120s")
	}
	for i := range s.Services {
		v.positiveDuration(fmt.Sprintf("services[%d].ready.timeout", i), "timeout", s.Services[i].Ready.Timeout, "a positive duration; leave it out for the default, 120s")
	}
	for i := range s.Scenarios {
		v.scenarioBounds(fmt.Sprintf("scenarios[%d]", i), &s.Scenarios[i])
	}
	v.generator()
}

// scenarioBounds checks a scenario's counts, duration, rate, arrivals and
// connections.
func (v *validator) scenarioBounds(path string, sc *Scenario) {
	l := sc.Load
	v.positive(path+".rounds", "rounds", sc.Rounds == 0, "at least 1; leave it out for defaults.rounds")
	v.positive(path+".requests", "requests", sc.Requests == 0, "at least 1; leave it out to let calibration choose")
	v.positive(path+".load.connections", "connections", l.Connections == 0, "at least 1; leave it out for the default, 1")
	v.positive(path+".load.max_waiting", "max_waiting", l.MaxWaiting == 0, "at least 1; leave it out for the default, 10,000")
	for _, b := range LoadBounds(Load{}, 0, sc.Requests) { // whatever the shape
		v.errorf(path+"."+b.Key, b.Expected, "%s", b.Msg)
	}
	if sw := sc.Sweep; sw != nil {
		v.sweepBounds(path+".sweep", sw)
	}
	if v.consumers(sc) > 0 || sc.Sweep != nil {
		return // a drain has no load shape; a sweep's cells have their own
	}
	for i, c := range l.Concurrency {
		v.connections(fmt.Sprintf("%s.load.concurrency[%d]", path, i), "concurrency", c, 1)
	}
	conns := max(l.Connections, 1)
	switch sc.Model() {
	case KindOpen:
		files := 2 // a socket and a timer
		if l.Engine == "loop" {
			files = 1
		}
		v.connections(path+".load.connections", "connections", conns, files)
	case KindBatched:
		v.connections(path+".load.connections", "connections", conns, 1)
	}

	// The run's length: at least one request, or one batch.
	if _, set := v.pos[path+".duration"]; set && sc.Duration < MinRunDuration && !v.reported(path+".duration") {
		v.errorf(path+".duration", fmt.Sprintf("at least %v, so that a run sends a request", MinRunDuration), "duration %v is too short", sc.Duration)
	} else if b := l.Batch; b != nil && sc.Duration > 0 {
		period := b.Period
		if period == 0 {
			period = time.Second
		}
		if sc.Duration < period {
			v.errorf(path+".duration", "at least one period, so that every connection sends a batch",
				"duration %v is shorter than the batch period %v", sc.Duration, period)
		}
	}
	if b := l.Batch; b != nil {
		v.positiveDuration(path+".load.batch.period", "period", b.Period, "a positive duration; leave it out for the default, 1s")
	}
	if len(l.Steps) > 0 {
		var total time.Duration
		given := true // a missing duration is reported as missing
		for i, st := range l.Steps {
			total += st.Duration
			_, set := v.pos[fmt.Sprintf("%s.load.steps[%d].duration", path, i)]
			given = given && set
		}
		if given && total < MinRunDuration {
			v.errorf(path+".load.steps", fmt.Sprintf("steps that last at least %v in all, so that a run sends a request", MinRunDuration), "steps of %v in all", total)
		}
	}

	for _, b := range LoadBounds(l, sc.Duration, 0) {
		v.errorf(path+"."+b.Key, b.Expected, "%s", b.Msg)
	}
}

// A Bound is a load over one of tandem's bounds (MaxRate, MaxArrivals),
// in the words a study's validation gives it.
type Bound struct {
	// Key is the setting the bound is at, as a study names it within a
	// scenario: requests, duration, load.rate, load.ramp, load.steps,
	// load.steps[i].rate or load.batch.
	Key string
	// Msg says what is over; Expected what is allowed.
	Msg, Expected string
}

// LoadBounds holds a load shape run for duration (its steps' own lengths
// for steps), or for requests requests, to tandem's bounds: its peak rate,
// in arrivals per second over every connection, to MaxRate; its arrivals
// and its requests to MaxArrivals. It returns each bound it is over, for a
// study's scenario or tandem load's flags alike.
func LoadBounds(l Load, duration time.Duration, requests int64) []Bound {
	var out []Bound
	over := func(key, expected, format string, args ...any) {
		out = append(out, Bound{Key: key, Msg: fmt.Sprintf(format, args...), Expected: expected})
	}
	if requests > MaxArrivals {
		over("requests", fmt.Sprintf("at most %s requests per run", thousands(MaxArrivals)), "requests %d exceeds tandem's limit", requests)
	}
	maxRate := fmt.Sprintf("at most %s arrivals per second in total", thousands(MaxRate))
	var peak, arrivals float64
	var shape string // what gives the arrivals, for the message
	d := duration.Seconds()
	switch {
	case l.Rate > 0:
		peak, arrivals = l.Rate, l.Rate*d
		shape = fmt.Sprintf("rate %s for %v", number(l.Rate), duration)
		if peak > MaxRate {
			over("load.rate", maxRate, "rate %s exceeds tandem's limit", number(peak))
		}
	case l.Ramp != nil:
		peak, arrivals = max(l.Ramp.From, l.Ramp.To), (l.Ramp.From+l.Ramp.To)/2*d
		shape = fmt.Sprintf("a ramp from %s to %s over %v", number(l.Ramp.From), number(l.Ramp.To), duration)
		if peak > MaxRate {
			over("load.ramp", maxRate, "ramp to %s exceeds tandem's limit", number(peak))
		}
	case len(l.Steps) > 0:
		shape = fmt.Sprintf("%d steps", len(l.Steps))
		for i, st := range l.Steps {
			arrivals += st.Rate * st.Duration.Seconds()
			if st.Rate > MaxRate {
				peak = st.Rate
				over(fmt.Sprintf("load.steps[%d].rate", i), maxRate, "rate %s exceeds tandem's limit", number(st.Rate))
			}
		}
	case l.Batch != nil && l.Batch.PerPeriod > 0:
		period := l.Batch.Period
		if period == 0 {
			period = time.Second
		}
		conns := max(l.Connections, 1)
		perPeriod := float64(l.Batch.PerPeriod) * float64(conns)
		peak = perPeriod / period.Seconds()
		arrivals = perPeriod * float64(duration/period)
		shape = fmt.Sprintf("%d per period on %d connections for %v", l.Batch.PerPeriod, conns, duration)
		if peak > MaxRate {
			over("load.batch", maxRate, "%d per period of %v on %d connections is %s per second, over tandem's limit",
				l.Batch.PerPeriod, period, conns, number(peak))
		}
	}
	if peak <= MaxRate && arrivals > MaxArrivals {
		at := "duration"
		if len(l.Steps) > 0 {
			at = "load.steps"
		}
		over(at, fmt.Sprintf("at most %s arrivals per run: a lower rate or a shorter duration", thousands(MaxArrivals)),
			"%s: %s arrivals per run, over tandem's limit", shape, number(arrivals))
	}
	return out
}

// sweepBounds checks a sweep's connections and rates.
func (v *validator) sweepBounds(path string, sw *Sweep) {
	files := 1
	if sw.Load == SweepOpen {
		files = 2 // a socket and a timer
	}
	most := 0
	for i, c := range sw.Connections {
		v.connections(fmt.Sprintf("%s.connections[%d]", path, i), "connections", c, files)
		most = max(most, c)
	}
	top, at := 0.0, path+".rate"
	for _, r := range sw.Rate {
		top = max(top, r)
	}
	if sw.Search != nil {
		top, at = sw.Search.To, path+".search"
	}
	if q := sw.Quick; q != nil {
		for i, c := range q.Connections {
			if c <= 0 {
				v.errorf(fmt.Sprintf("%s.quick.connections[%d]", path, i), "a positive integer", "connections %d", c)
			}
			v.connections(fmt.Sprintf("%s.quick.connections[%d]", path, i), "connections", c, files)
		}
		for i, r := range q.Rate {
			if r <= 0 {
				v.errorf(fmt.Sprintf("%s.quick.rate[%d]", path, i), "a positive rate", "rate %v", r)
			}
		}
	}
	if total := top * float64(most); total > MaxRate {
		v.errorf(at, fmt.Sprintf("at most %s arrivals per second in total (rate × connections)", thousands(MaxRate)),
			"rate %s on %d connections is %s per second, over tandem's limit", number(top), most, number(total))
	}
	if n := top * float64(most) * max(sw.Duration-time.Second, 0).Seconds(); top*float64(most) <= MaxRate && n > MaxArrivals {
		v.errorf(path+".duration", fmt.Sprintf("at most %s arrivals per cell: a lower rate or a shorter duration", thousands(MaxArrivals)),
			"rate %s on %d connections for %v: %s arrivals per cell, over tandem's limit", number(top), most, sw.Duration-time.Second, number(n))
	}
}

// ConnectionBound is the most connections (or closed-loop clients) one run
// may hold on this machine when each takes files open files, and what sets
// that bound, for checks outside a study (tandem load's flags).
func ConnectionBound(files int) (int, string) {
	lim := machineLimits().openFiles
	if lim == 0 || (lim-FileHeadroom)/files >= MaxConnections {
		return MaxConnections, "tandem's limit: the generator keeps latency histograms for every connection"
	}
	return max((lim-FileHeadroom)/files, 0), fmt.Sprintf("the open-file limit %d (ulimit -n): %d per connection, %d kept for tandem", lim, files, FileHeadroom)
}
