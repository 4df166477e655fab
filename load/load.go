// Package load drives requests at a target and records what happened.
// There are three executors: Closed (each client sends when its last
// answer is in), Open (arrivals on an absolute timetable, whatever the
// server does) and Batched (a batch per connection at the start of every
// period, as CometBFT's load runner sends). A closed or open loop over a
// dialer that offers a Wire (HTTP/1.1, HTTP/2 or gRPC to IPv4) runs by default, on
// Linux, on the event loop: one goroutine, locked to its thread, that owns
// every connection through epoll. Otherwise, or with engine workers, each
// executor runs one worker goroutine per connection and nothing else:
// there is no pacer. An open loop's worker, when its connection is free,
// claims the next arrival of the timetable and sleeps until it is due on
// an alarm of its own (a timerfd on Linux); a batched loop's worker sleeps
// until each period starts. None starts a goroutine per request. Each worker, or the event loop, records into histograms of its
// own, merged when the run ends, so memory does not grow with run length;
// an open loop keeps nothing per arrival (those waiting for a connection
// are a range of its timetable), so neither does it grow with the arrivals
// offered or dropped, whatever the rate.
// A failed request is data (a status in Result), never an error.
//
// Every request of a run has a number, counted from 0, that the executor
// passes to Conn.Do (or the event loop to WireConn.AppendRequest): a
// request's values (package values) are a function of its number, so two
// targets given the same run get the same requests. A closed loop numbers
// its requests in the order it issues them (the worker engine by an atomic
// counter its connections share, the event loop by its own count); an open
// loop's request k is arrival k of its timetable (a dropped arrival's
// number is never sent); a batched loop's request n of period p on
// connection c is (p·Connections + c)·PerPeriod + n. A run counts from 0
// again: a warm-up, every round, every cell.
package load

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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
	// First is the time to the first message of a stream; 0 otherwise.
	First time.Duration
}

// Conn sends requests over one connection. A Conn is used by one worker at
// a time. Do sends request number i of the run (see the package doc),
// which must end by deadline (the earlier of the request's timeout and the
// run's end); ctx ends the run. A Conn whose requests are all alike
// ignores i.
type Conn interface {
	Do(ctx context.Context, i uint64, deadline time.Time) Result
	Close() error
}

// Dialer opens connections to a target for one call.
type Dialer interface {
	Dial(ctx context.Context) (Conn, error)
}

// EngineWire chooses a run's engine: the Wire the event loop speaks, or
// nil for the worker engine. Engine "loop" demands the event loop (an error
// where it cannot run), "workers" the worker engine, and "" takes the event
// loop wherever it applies (Linux, a dialer that offers a Wire: plain
// HTTP/1.1, HTTP/2, JSON-RPC or gRPC to IPv4) and the workers elsewhere.
func EngineWire(engine string, d Dialer) (Wire, error) {
	switch engine {
	case "loop":
		if runtime.GOOS != "linux" {
			return nil, errLoopLinux
		}
		if w, ok := wireOf(d); ok {
			return w, nil
		}
		return nil, errors.New("load: the event loop speaks HTTP/1.1, HTTP/2 and gRPC to an IPv4 address only, without QuickACK")
	case "":
		if w, ok := wireOf(d); ok && runtime.GOOS == "linux" {
			return w, nil
		}
		return nil, nil
	case "workers":
		return nil, nil
	}
	return nil, fmt.Errorf("load: engine %q: want loop or workers", engine)
}

// wireOf is the Wire d offers, if any.
func wireOf(d Dialer) (Wire, bool) {
	if wd, ok := d.(Wired); ok {
		return wd.Wire()
	}
	return nil, false
}

// Engine names, as a sample records the one that ran.
const (
	EngineLoop    = "loop"
	EngineWorkers = "workers"
)

var errQuantum = errors.New("load: a quantum needs the event loop (engine loop)")

// ErrUnbounded is returned for a run bounded by neither count nor time.
var ErrUnbounded = errors.New("load: a run needs a request count or a duration")

// Live counts a run's requests as it goes, for a progress display, and
// reads the latency of its last whole second.
type Live struct {
	Sent, OK, Errors atomic.Int64
	// Timeline, if set before the run, counts its answers by when they
	// ended, finer than the series.
	Timeline *Timeline
	// Window, if set before the run, follows the answers to the arrivals
	// of its span.
	Window *Window
	// series is the run's per-second series, once it has started.
	series atomic.Pointer[series]
}

// start follows the series of a run that begins (l may be nil).
func (l *Live) start(s *series) {
	if l != nil {
		if l.Timeline != nil {
			s.fine = l.Timeline
			l.Timeline.begin(s.start)
		}
		s.win = l.Window
		l.series.Store(s)
	}
}

// LastSecond is the last whole second of the run so far: its requests
// issued, answers and p50/p99 latency of the successful ones; false
// before the run's first second has ended.
func (l *Live) LastSecond() (results.Second, bool) {
	s := l.series.Load()
	if s == nil {
		return results.Second{}, false
	}
	return s.peek(int64(time.Since(s.start)/time.Second) - 1)
}

// count counts one request (l may be nil).
func (l *Live) count(res Result) {
	if l == nil {
		return
	}
	l.Sent.Add(1)
	if res.Status == "" {
		l.OK.Add(1)
	} else {
		l.Errors.Add(1)
	}
}

// run is what every executor shares: connections, recorders, the series.
type run struct {
	conns  []Conn
	recs   []*recorder
	series *series
	start  time.Time
	live   *Live
}

func dialAll(ctx context.Context, d Dialer, n int, open bool, live *Live, tap *Tap) (*run, error) {
	r := &run{live: live}
	for i := 0; i < n; i++ {
		cn, err := d.Dial(ctx)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("dial connection %d of %d: %w", i+1, n, err)
		}
		r.conns = append(r.conns, cn)
	}
	start, err := tap.begin(ctx)
	if err != nil {
		r.close()
		return nil, err
	}
	r.start = start
	r.series = newSeries(r.start)
	live.start(r.series)
	ps, parted := partsOf(d)
	for _, cn := range r.conns {
		rec := newRecorder(open, r.series)
		if parted {
			rec.split(ps, open)
			if sc, ok := cn.(StepConn); ok {
				sc.RecordSteps(rec)
			}
		}
		r.recs = append(r.recs, rec)
	}
	tap.attach(r.start, open, r.series, r.recs...)
	return r, nil
}

func (r *run) close() {
	for _, cn := range r.conns {
		cn.Close()
	}
}

// workers runs work(i) for every connection i, each in a goroutine of
// its own (the run's only goroutines), and returns the time from the
// run's start to when the last one returned.
func (r *run) workers(work func(i int)) time.Duration {
	var wg sync.WaitGroup
	for i := range r.conns {
		wg.Go(func() { work(i) })
	}
	wg.Wait()
	return time.Since(r.start)
}

func (r *run) merged() *recorder {
	total := r.recs[0]
	for _, o := range r.recs[1:] {
		total.merge(o)
	}
	return total
}

// outcome is what became of one request.
type outcome uint8

const (
	unsent   outcome = iota // the run was over: not sent
	wasCut                  // sent, and cut off by the run's end
	recorded                // answered (or failed), and recorded
)

// one sends request number seq on connection i, intended at intended
// (zero: now, as in a closed loop), and records it. ctx is the run: its deadline, if any, is the run's end.
// The request must end by its timeout or the run's end, whichever comes
// first. Nothing is sent at or after the run's end (unsent). A request the
// end cut off (see cutOff) is neither a failure nor a latency: it is
// counted as cut (wasCut).
func (r *run) one(ctx context.Context, i int, seq uint64, intended time.Time, timeout time.Duration) outcome {
	sent := time.Now()
	runEnd, bounded := ctx.Deadline()
	if ctx.Err() != nil || bounded && !sent.Before(runEnd) {
		return unsent
	}
	deadline := sent.Add(timeout)
	if bounded && runEnd.Before(deadline) {
		deadline = runEnd
	}
	if intended.IsZero() {
		intended = sent
	}
	res := r.conns[i].Do(ctx, seq, deadline)
	end := time.Now()
	if cutOff(ctx, deadline, end, res) {
		r.recs[i].cutReq(seq)
		return wasCut
	}
	r.recs[i].recordReq(seq, intended, sent, end, res)
	r.live.count(res)
	return recorded
}

// cutOff says whether a request that ended at end with res, held to
// deadline, was cut off by the end of the run ctx is: it ended at or after
// the run's deadline; or it timed out at a deadline that was the run's,
// not its own timeout's; or it failed after the run was cancelled. A
// timeout at the request's own deadline before the run's end is a
// failure like any other. The run's context alone cannot tell: it ends on
// a timer that fires a little after its deadline, and in between a driver
// that holds a request to the context's deadline fails it at once.
func cutOff(ctx context.Context, deadline, end time.Time, res Result) bool {
	if runEnd, ok := ctx.Deadline(); ok {
		if !end.Before(runEnd) || res.Status == "timeout" && !deadline.Before(runEnd) {
			return true
		}
	}
	return res.Status != "" && errors.Is(ctx.Err(), context.Canceled)
}

func defaults(timeout *time.Duration, unit *string) {
	if *timeout <= 0 {
		*timeout = 10 * time.Second
	}
	if *unit == "" {
		*unit = "request"
	}
}

// Closed is a closed loop: Concurrency clients, each sending its next
// request when the last is answered. A run ends after Requests requests (if
// positive) or Duration (if positive), whichever comes first. Requests that
// the end of Duration (or of ctx) cuts off are not counted at all: neither
// failures nor latencies.
type Closed struct {
	Concurrency int
	Requests    int64
	Duration    time.Duration
	// Timeout bounds each request; default 10 s.
	Timeout time.Duration
	// Unit names the unit of work, "request" by default.
	Unit string
	// Live, if set, counts requests as they complete.
	Live *Live
	// Tap, if set, starts the run at an agreed time and lets a
	// distributed worker take its record as it goes.
	Tap *Tap
	// Engine is loop (one thread owns every connection, as for Open; a
	// dialer that offers a Wire only), workers (a goroutine per connection, any
	// protocol) or "": the loop wherever it applies (see EngineWire).
	Engine string
	// Quantum, with Engine loop, lets the loop read answers at most once
	// per quantum while they keep coming, instead of waking for each: on
	// loopback every wake-up of the generator is paid on the server's core
	// (the answer's send wakes it), so a server the generator saturates
	// serves more. Answers keep the kernel's receive stamps, so service
	// time stays exact; the generator's delay shows in ThinkTimeNs. Zero:
	// wake for every answer. Ignored where the kernel does not stamp.
	Quantum time.Duration
}

// Run dials Concurrency connections, runs the loop and returns its sample.
// The run stops early, with what it recorded, when ctx is cancelled.
func (c Closed) Run(ctx context.Context, d Dialer) (results.Sample, error) {
	if c.Requests <= 0 && c.Duration <= 0 {
		return results.Sample{}, ErrUnbounded
	}
	c.Concurrency = max(c.Concurrency, 1)
	defaults(&c.Timeout, &c.Unit)
	if w, err := EngineWire(c.Engine, d); err != nil || w != nil {
		if err != nil {
			return results.Sample{}, err
		}
		s, err := c.runLoop(ctx, w)
		s.Engine = EngineLoop
		return s, err
	}
	if c.Quantum > 0 {
		return results.Sample{}, errQuantum
	}
	r, err := dialAll(ctx, d, c.Concurrency, false, c.Live, c.Tap)
	if err != nil {
		return results.Sample{}, err
	}
	defer r.close()
	runCtx := ctx
	if c.Duration > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithDeadline(ctx, r.start.Add(c.Duration))
		defer cancel()
	}
	// issued numbers the requests in the order the connections take them
	var issued atomic.Uint64
	elapsed := r.workers(func(i int) {
		for runCtx.Err() == nil {
			seq := issued.Add(1) - 1
			if c.Requests > 0 && seq >= uint64(c.Requests) {
				return
			}
			if r.one(runCtx, i, seq, time.Time{}, c.Timeout) != recorded {
				return
			}
		}
	})
	s := r.merged().sample(elapsed, elapsed, c.Unit, 0, 0)
	s.Engine = EngineWorkers
	return s, nil
}

// Open is an open loop: arrivals follow Schedule on an absolute timetable,
// whatever the server does, spread over Connections connections. When every
// connection is busy an arrival waits in the generator, and its latency
// still counts from its intended time; at most MaxWaiting wait, and the
// oldest arrivals beyond that are dropped and counted. The run ends when the
// schedule does, after Requests arrivals, or at Duration; Drain (by default
// Timeout) after that, arrivals still waiting are dropped and requests in
// flight are unfinished. A run cancelled stops at once and offered the
// arrivals due by then: each one is sent (answered or unfinished) or counted
// as dropped (Requests + Unfinished + Dropped), none of those still to come.
//
// There is no pacer goroutine: each worker, when its connection is free,
// claims the next arrival of the timetable and sleeps until it is due on a
// timerfd (see alarm), so an arrival costs one wake-up and the first free
// connection always takes the oldest arrival.
type Open struct {
	Schedule    Schedule
	Connections int
	Requests    int64
	Duration    time.Duration
	// MaxWaiting bounds the arrivals waiting for a free connection;
	// default 10,000.
	MaxWaiting int
	Timeout    time.Duration
	// Drain, with Duration, is how long after it the run still sends the
	// arrivals waiting and waits for the answers in flight; what it cuts
	// off then is dropped (not sent) or unfinished (in flight), neither a
	// failure nor a latency. Default Timeout.
	Drain time.Duration
	Unit  string
	Live  *Live
	// Tap, if set, starts the run at an agreed time and lets a
	// distributed worker take its record as it goes.
	Tap *Tap
	// Engine is workers (a goroutine per connection, any protocol), loop,
	// or "": the loop wherever it applies (see EngineWire). On the loop
	// one thread owns every connection and sleeps
	// through the answers, which the kernel stamps (see runLoop); about a
	// third less CPU per request at moderate rates, for a dialer that
	// offers a Wire (HTTP/1.1, HTTP/2 or gRPC to IPv4). The loop holds one P of the
	// process while it waits.
	Engine string
	// Quantum, with Engine loop, lets the loop wake up at most once per
	// quantum and send every arrival due by then: fewer wake-ups (less
	// CPU) for lateness of up to a quantum, which schedule lag and latency
	// from the intended send both show. Zero: a wake-up per arrival.
	Quantum time.Duration
}

// timetable is an open loop's schedule within its bounds.
type timetable struct {
	Schedule
	start    time.Time
	requests int64
	duration time.Duration
}

// due returns when arrival k is due, or false if it is not in the run.
func (t timetable) due(k int64) (time.Time, bool) {
	if t.requests > 0 && k >= t.requests {
		return time.Time{}, false
	}
	off, ok := t.Offset(k)
	if !ok || (t.duration > 0 && off >= t.duration) {
		return time.Time{}, false
	}
	return t.start.Add(off), true
}

// dueBy counts the arrivals due at or before now, searching from lo (an
// arrival known to be due).
func (t timetable) dueBy(now time.Time, lo int64) int64 {
	hi := lo + 1
	for {
		d, ok := t.due(hi)
		if !ok || d.After(now) {
			break
		}
		lo, hi = hi, hi+(hi-lo)*2
	}
	for hi-lo > 1 { // due(lo) ≤ now < due(hi), or hi is past the end
		mid := lo + (hi-lo)/2
		if d, ok := t.due(mid); ok && !d.After(now) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// dueThrough is how many arrivals are due at or before now, given that
// the first next of them are (a search from next: its cost does not grow
// with the arrivals due, however many the rate makes).
func (t timetable) dueThrough(now time.Time, next int64) int64 {
	if d, ok := t.due(next); !ok || d.After(now) {
		return next
	}
	return t.dueBy(now, next)
}

// dueNow is how many arrivals are due by now, or taken (the arrivals a
// run took: sent, or given up on), whichever is more: those due and never
// taken are the ones a run cut short dropped.
func (t timetable) dueNow(taken int64) int64 {
	if taken > 0 {
		if all := t.dueBy(time.Now(), taken-1); all > taken {
			return all
		}
	}
	return taken
}

// sample is an open loop's sample of what rec recorded over elapsed: the
// offered rate is the timetable's over its first scheduled arrivals, the
// achieved rate the sends' over their own span.
func (t timetable) sample(rec *recorder, elapsed time.Duration, unit string, scheduled, dropped int64) results.Sample {
	offered := 0.0
	first := t.start
	if _, shard := t.Schedule.(Shard); shard { // a shard's first arrival is staggered from the start
		first, _ = t.due(0)
	}
	if scheduled > 1 {
		if last, ok := t.due(scheduled - 1); ok && last.After(first) {
			offered = float64(scheduled-1) / last.Sub(first).Seconds()
		}
	}
	s := rec.sample(elapsed, 0, unit, dropped, offered)
	if span := rec.lastSent.Sub(t.start); rec.requests > 1 && span > 0 {
		s.AchievedRate = float64(rec.requests-1) / span.Seconds()
	}
	return s
}

// Run dials the connections, runs the schedule and returns its sample.
func (o Open) Run(ctx context.Context, d Dialer) (results.Sample, error) {
	if o.Schedule == nil {
		return results.Sample{}, errors.New("load: open loop without a schedule")
	}
	if o.Duration <= 0 {
		o.Duration = o.Schedule.Len()
	}
	if o.Requests <= 0 && o.Duration <= 0 {
		return results.Sample{}, ErrUnbounded
	}
	o.Connections = max(o.Connections, 1)
	if o.MaxWaiting <= 0 {
		o.MaxWaiting = 10_000
	}
	defaults(&o.Timeout, &o.Unit)
	if o.Drain <= 0 {
		o.Drain = o.Timeout
	}
	switch w, err := EngineWire(o.Engine, d); {
	case err != nil:
		return results.Sample{}, err
	case w != nil:
		s, err := o.runLoop(ctx, w)
		s.Engine = EngineLoop
		return s, err
	case o.Quantum > 0:
		return results.Sample{}, errQuantum
	}
	alarms := make([]*alarm, o.Connections)
	for i := range alarms {
		a, err := newAlarm()
		if err != nil {
			return results.Sample{}, err
		}
		defer a.close()
		alarms[i] = a
	}
	r, err := dialAll(ctx, d, o.Connections, true, o.Live, o.Tap)
	if err != nil {
		return results.Sample{}, err
	}
	defer r.close()
	tt := timetable{Schedule: o.Schedule, start: r.start, requests: o.Requests, duration: o.Duration}
	// Requests in flight or waiting get Drain past the end, then the run
	// is cut.
	hardCtx := ctx
	if o.Duration > 0 {
		var cancel context.CancelFunc
		hardCtx, cancel = context.WithDeadline(ctx, r.start.Add(o.Duration+o.Drain))
		defer cancel()
	}
	var next atomic.Int64
	// claim takes the oldest arrival not yet taken, first skipping (and so
	// dropping) the oldest ones if more than MaxWaiting are already due. It
	// takes the arrival it found in the same step as the skip: were it to
	// look again, at a rate that brings more arrivals while it looks than
	// it has time to take, it would skip for ever.
	claim := func() (time.Time, int64, bool) {
		for {
			k := next.Load()
			due, ok := tt.due(k)
			if !ok {
				return time.Time{}, 0, false
			}
			take := k
			if now := time.Now(); due.Before(now) {
				if n := tt.dueBy(now, k); n-k > int64(o.MaxWaiting) {
					take = n - int64(o.MaxWaiting)
					due, _ = tt.due(take)
				}
			}
			if next.CompareAndSwap(k, take+1) {
				return due, take, true
			}
		}
	}
	elapsed := r.workers(func(i int) {
		for {
			due, k, ok := claim()
			if !ok || !alarms[i].wait(hardCtx, due) {
				return // a worker stops at its first wait cut short, rather than claim the rest of the timetable
			}
			r.one(hardCtx, i, uint64(k), due, o.Timeout) // arrival k is request k
		}
	})
	// Every arrival offered and not sent was dropped: skipped, not sent
	// by the end, or never taken (one sent and cut off is unfinished). The arrivals offered are those the workers claimed (and
	// any due since); a run cancelled offered those due by its end.
	rec := r.merged()
	scheduled := tt.dueNow(next.Load())
	if ctx.Err() != nil {
		scheduled = tt.dueThrough(time.Now(), 0)
	}
	dropped := scheduled - rec.requests - rec.cut
	s := tt.sample(rec, elapsed, o.Unit, scheduled, dropped)
	s.Engine = EngineWorkers
	return s, nil
}

// sleepTimer waits until t on a runtime timer (up to a millisecond late
// when the process is idle), or until ctx ends (false).
func sleepTimer(ctx context.Context, timer *time.Timer, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer.Reset(d)
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// Batched is the load shape of CometBFT's load runner: at the start of
// every Period each of Connections connections sends PerPeriod requests
// one after another. A batch that is not sent before its period ends is cut
// and the shortfall counted as dropped. Latency counts from the start of the
// request's period.
type Batched struct {
	Connections int
	PerPeriod   int
	Period      time.Duration
	Duration    time.Duration
	Timeout     time.Duration
	// Drain is how long after the last period the run waits for the
	// answers in flight; what it cuts off then is unfinished, neither a
	// failure nor a latency. Default Timeout.
	Drain time.Duration
	Unit  string
	Live  *Live
	// Tap, if set, starts the run at an agreed time and lets a
	// distributed worker take its record as it goes.
	Tap *Tap
}

// Periods is the number of batches each connection sends in Duration.
func (b Batched) Periods() int64 {
	if b.Period <= 0 {
		b.Period = time.Second
	}
	return int64(b.Duration / b.Period)
}

// Expected is the request count a run sends if the target keeps up.
func (b Batched) Expected() int64 {
	return int64(max(b.Connections, 1)) * int64(b.PerPeriod) * b.Periods()
}

// Run dials the connections, sends the batches and returns the sample.
func (b Batched) Run(ctx context.Context, d Dialer) (results.Sample, error) {
	if b.Duration <= 0 || b.PerPeriod <= 0 {
		return results.Sample{}, errors.New("load: a batched run needs a duration and requests per period")
	}
	if b.Period <= 0 {
		b.Period = time.Second
	}
	b.Connections = max(b.Connections, 1)
	defaults(&b.Timeout, &b.Unit)
	if b.Drain <= 0 {
		b.Drain = b.Timeout
	}
	r, err := dialAll(ctx, d, b.Connections, true, b.Live, b.Tap)
	if err != nil {
		return results.Sample{}, err
	}
	defer r.close()
	periods := b.Periods()
	hardCtx, cancel := context.WithDeadline(ctx, r.start.Add(time.Duration(periods)*b.Period+b.Drain))
	defer cancel()
	var dropped atomic.Int64
	elapsed := r.workers(func(i int) {
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for p := int64(0); p < periods; p++ {
			due := r.start.Add(time.Duration(p) * b.Period)
			if !sleepTimer(ctx, timer, due) {
				dropped.Add(int64(b.PerPeriod) * (periods - p))
				return
			}
			end := due.Add(b.Period)
			for n := 0; n < b.PerPeriod; n++ {
				if time.Now().After(end) || hardCtx.Err() != nil {
					dropped.Add(int64(b.PerPeriod - n))
					break
				}
				seq := (uint64(p)*uint64(b.Connections)+uint64(i))*uint64(b.PerPeriod) + uint64(n)
				switch r.one(hardCtx, i, seq, due, b.Timeout) {
				case unsent:
					dropped.Add(int64(b.PerPeriod - n))
				case wasCut: // sent: counted as cut
					dropped.Add(int64(b.PerPeriod - n - 1))
				default:
					continue
				}
				break
			}
		}
	})
	offered := float64(b.Connections*b.PerPeriod) / b.Period.Seconds()
	return r.merged().sample(elapsed, time.Duration(periods)*b.Period, b.Unit, dropped.Load(), offered), nil
}
