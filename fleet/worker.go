package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/tandem-bench/tandem/load"
)

// Part is what a Job gets: its assignment, the Tap to set on its
// executor (the fleet starts the load through it) and the Live counts its
// heartbeats carry.
type Part struct {
	Assignment
	Tap  *load.Tap
	Live *load.Live

	mu    sync.Mutex
	share string
}

// Describe says, before the load starts, what share of the load this
// worker runs ("rate 333.3/s: every 3rd arrival from the 1st").
func (p *Part) Describe(share string) {
	p.mu.Lock()
	p.share = share
	p.mu.Unlock()
}

func (p *Part) described() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.share
}

// A Job runs a worker's part of the load: it splits the spec for its
// index, reaches the target and runs the load with p.Tap set on the
// executor, and returns its own report. An error before the load starts
// is returned as an error.
type Job func(ctx context.Context, p *Part) (Report, error)

// Worker joins a fleet's next run, runs its part and streams what it
// records. One Worker serves one run.
type Worker struct {
	Conn *nats.Conn
	// Fleet names the fleet: workers join the coordinator of the same
	// name ("tandem" when empty).
	Fleet string
	// ID names the worker within the run; it must be unique.
	ID string
	// Host is where it runs, for the results.
	Host string
	// Version is tandem's version: a fleet runs one version.
	Version string
	// Wait bounds the wait for a coordinator to accept the worker.
	Wait time.Duration
	// Job runs the worker's part.
	Job Job
	// Log, if set, receives a line for each step.
	Log func(string)
}

// ErrRefused is returned when the coordinator refused the worker.
var ErrRefused = errors.New("fleet: the coordinator refused this worker")

// ErrStopped is returned when the part stopped before its end: the
// coordinator stopped it, or it lost its coordinator.
var ErrStopped = errors.New("fleet: the part stopped early")

func (w *Worker) logf(format string, args ...any) {
	if w.Log != nil {
		w.Log(fmt.Sprintf(format, args...))
	}
}

// Run joins, then runs each part it is assigned and sends its tallies
// and report, until the coordinator says the run is done (nil), stops the
// run, or goes silent for the lease (ErrStopped). ctx ends the worker: its
// load stops and what it measured is still sent.
func (w *Worker) Run(ctx context.Context) error {
	if w.Fleet == "" {
		w.Fleet = "tandem"
	}
	if w.Wait <= 0 {
		w.Wait = 10 * time.Minute
	}
	k, err := newKeys()
	if err != nil {
		return err
	}
	// a subject this worker's credentials do not allow ends it at once:
	// waiting would only time out
	ctx, refuse := context.WithCancelCause(ctx)
	defer refuse(nil)
	w.Conn.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			refuse(fmt.Errorf("%w: the NATS server refused it: %v (its credentials are for another --id or --fleet?)", ErrRefused, err))
		}
	})
	acc, err := w.join(ctx, k)
	if err != nil {
		return err
	}
	if !validKey(acc.Key) {
		return fmt.Errorf("%w: the coordinator sent no key (a tandem older than this worker?)", ErrRefused)
	}
	w.logf("joined run %s as worker %d of %d", acc.Run, acc.Index+1, acc.Count)

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &workerRun{w: w, k: k, key: acc.Key, sub: subjects{fleet: w.Fleet, run: acc.Run}, lease: time.Duration(acc.LeaseNs),
		cancel: cancel, heard: time.Now(),
		assigned: make(chan assignment, 1), starts: make(chan startMsg, 1), finished: make(chan struct{})}
	defer r.unsubscribe()
	if err := r.subscribe(); err != nil {
		return err
	}
	if err := w.Conn.Flush(); err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	// the lease: without a word from the coordinator for lease, stop.
	var bg sync.WaitGroup
	bgDone := make(chan struct{})
	defer func() { close(bgDone); bg.Wait() }()
	bg.Go(func() { r.watchLease(bgDone) })
	r.live.Store(&load.Live{})
	bg.Go(func() { r.heartbeats(bgDone) }) // heartbeats, for the whole run
	js, err := jetstream.New(w.Conn)
	if err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	var stopped error // a part the coordinator stopped: the run did not end well
	for {
		var got assignment
		select {
		case got = <-r.assigned:
		case <-r.finished:
			w.logf("the run is done")
			return stopped
		case <-runCtx.Done():
			return context.Cause(runCtx)
		}
		partCtx, stop, ok := r.take(runCtx, got)
		if !ok {
			continue
		}
		err := r.runTaken(ctx, partCtx, stop, js, got)
		if runCtx.Err() != nil {
			return context.Cause(runCtx)
		}
		if err != nil {
			w.logf("part %d: %v", got.a.Part, err)
			if errors.Is(err, ErrStopped) {
				stopped = err
			}
		}
	}
}

// workerRun is the state of one worker's run that its message handlers,
// its lease watch, its heartbeats and its loop over parts share.
type workerRun struct {
	w     *Worker
	k     *keys
	key   string // the coordinator's public key
	sub   subjects
	lease time.Duration
	// cancel ends the run.
	cancel context.CancelCauseFunc
	subs   []*nats.Subscription

	mu          sync.Mutex
	heard       time.Time
	part        int                     // the part under way, 0 between parts
	stopPart    context.CancelCauseFunc // stops it
	stoppedPart int                     // the highest part stopped

	assigned chan assignment
	starts   chan startMsg
	finished chan struct{}
	gone     atomic.Bool               // the lease ran out
	live     atomic.Pointer[load.Live] // the part under way's counts
}

// seal seals v to the coordinator (nil, and a log line, if it cannot).
func (r *workerRun) seal(v any) []byte {
	b, err := r.k.seal(v, r.key)
	if err != nil {
		r.w.logf("seal: %v", err)
	}
	return b
}

// reply answers m with v, sealed.
func (r *workerRun) reply(m *nats.Msg, v any) { m.Respond(r.seal(v)) }

// forged logs a message (what) that failed authentication.
func (r *workerRun) forged(what string, err error) {
	r.w.logf("%s that failed authentication, ignored (someone else on the bus sends as the coordinator): %v", what, err)
}

// hear notes that the coordinator was heard now.
func (r *workerRun) hear() { r.mu.Lock(); r.heard = time.Now(); r.mu.Unlock() }

// subscribe subscribes the run's handlers; the subscriptions made are
// kept for unsubscribe, even when one fails.
func (r *workerRun) subscribe() error {
	w, sub := r.w, r.sub
	for subj, handle := range map[string]nats.MsgHandler{
		sub.worker(w.ID, "clock"):  r.onClock,
		sub.worker(w.ID, "assign"): r.onAssign,
		sub.worker(w.ID, "start"):  r.onStart,
		sub.beat():                 func(*nats.Msg) { r.hear() },
		sub.stop():                 r.onStop,
		sub.done():                 r.onDone,
	} {
		s, err := w.Conn.Subscribe(subj, handle)
		if err != nil {
			return fmt.Errorf("fleet: subscribe %s: %w", subj, err)
		}
		r.subs = append(r.subs, s)
	}
	return nil
}

// unsubscribe ends the subscriptions subscribe made.
func (r *workerRun) unsubscribe() {
	for _, s := range r.subs {
		s.Unsubscribe()
	}
}

// onClock answers a clock request with the worker's clock, read when it came.
func (r *workerRun) onClock(m *nats.Msg) {
	now := time.Now()
	var q clockRequest
	if err := r.k.open(m.Data, r.key, &q); err != nil {
		r.forged("a clock request", err)
		return
	}
	r.hear()
	r.reply(m, clockReply{UnixNs: now.UnixNano()})
}

// onAssign hands an assignment to the loop over parts, or refuses it while
// a part is under way.
func (r *workerRun) onAssign(m *nats.Msg) {
	var a Assignment
	if err := r.k.open(m.Data, r.key, &a); err != nil {
		r.forged("an assignment", err)
		return
	}
	r.hear()
	r.mu.Lock()
	busy := r.part != 0
	r.mu.Unlock()
	if !busy {
		select {
		case r.assigned <- assignment{m, a}:
			return
		default:
		}
	}
	r.reply(m, readyReply{Err: "a part is already under way"}) // one part at a time
}

// onStart hands a part's start to the part waiting at its barrier.
func (r *workerRun) onStart(m *nats.Msg) {
	var s startMsg
	if err := r.k.open(m.Data, r.key, &s); err != nil {
		r.forged("a start", err)
		return
	}
	r.hear()
	for { // the newest start replaces one a stopped part never took
		select {
		case r.starts <- s:
			return
		default:
			select {
			case <-r.starts:
			default:
			}
		}
	}
}

// onStop stops the run (part 0) or the part named, if it is this worker's.
func (r *workerRun) onStop(m *nats.Msg) {
	var s stopMsg
	if json.Unmarshal(m.Data, &s) != nil || s.Worker != "" && s.Worker != r.w.ID {
		return // not a stop, or another worker's
	}
	err := fmt.Errorf("%w: the coordinator stopped the run: %s", ErrStopped, s.Reason)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stoppedPart = max(r.stoppedPart, s.Part)
	switch {
	case s.Part == 0:
		r.cancel(err)
	case s.Part == r.part && r.stopPart != nil:
		r.stopPart(err)
	}
}

// onDone notes that the coordinator says the run is done.
func (r *workerRun) onDone(*nats.Msg) {
	select {
	case <-r.finished:
	default:
		close(r.finished)
	}
}

// watchLease ends the run once nothing is heard from the coordinator for
// the lease, until done closes.
func (r *workerRun) watchLease(done <-chan struct{}) {
	tick := time.NewTicker(r.lease / 20)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			r.mu.Lock()
			silent := time.Since(r.heard)
			r.mu.Unlock()
			if silent > r.lease {
				r.gone.Store(true)
				r.cancel(fmt.Errorf("%w: nothing heard from the coordinator for %v (the lease)", ErrStopped, silent.Round(time.Millisecond)))
				return
			}
		}
	}
}

// heartbeats sends a heartbeat every beatEvery, with the part under way
// and its counts, until done closes.
func (r *workerRun) heartbeats(done <-chan struct{}) {
	t := time.NewTicker(beatEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			l := r.live.Load()
			r.mu.Lock()
			p := r.part
			r.mu.Unlock()
			r.w.Conn.Publish(r.sub.worker(r.w.ID, "beat"), r.seal(beat{Part: p, Sent: l.Sent.Load(), OK: l.OK.Load(), Errors: l.Errors.Load()}))
		}
	}
}

// take makes an assignment the part under way, with its context; ok is
// false, and the coordinator told why, for a malformed part or one stopped
// before it was taken.
func (r *workerRun) take(runCtx context.Context, got assignment) (partCtx context.Context, stop context.CancelCauseFunc, ok bool) {
	am, a := got.m, got.a
	if a.Part < 1 {
		r.reply(am, readyReply{Err: fmt.Sprintf("malformed assignment (part %d)", a.Part)})
		return nil, nil, false
	}
	partCtx, stop = context.WithCancelCause(runCtx)
	r.mu.Lock()
	if a.Part <= r.stoppedPart { // stopped before it was taken
		r.mu.Unlock()
		stop(nil)
		r.reply(am, readyReply{Err: fmt.Sprintf("part %d was stopped", a.Part)})
		return nil, nil, false
	}
	r.part, r.stopPart = a.Part, stop
	r.mu.Unlock()
	return partCtx, stop, true
}

// runTaken runs the part take took, with counts of its own, and then
// leaves the worker between parts.
func (r *workerRun) runTaken(ctx, partCtx context.Context, stop context.CancelCauseFunc, js jetstream.JetStream, got assignment) error {
	l := &load.Live{}
	r.live.Store(l)
	err := r.w.runPart(ctx, partCtx, js, r.sub, got.m, got.a, r.starts, r.finished, l, r.lease, &r.gone, r.reply, r.seal)
	stop(nil)
	r.mu.Lock()
	r.part, r.stopPart = 0, nil
	r.mu.Unlock()
	return err
}

// assignment is an assignment that opened with the coordinator's key, and
// its message (the readiness reply answers it).
type assignment struct {
	m *nats.Msg
	a Assignment
}

// runPart runs one assigned part: the Job, a tally every second, the last
// tally with the report (delivered within the lease, even after ctx ends).
func (w *Worker) runPart(ctx, partCtx context.Context, js jetstream.JetStream, sub subjects, am *nats.Msg, a Assignment,
	starts chan startMsg, finished chan struct{}, live *load.Live, lease time.Duration, gone *atomic.Bool,
	reply func(*nats.Msg, any), seal func(any) []byte) error {
	p := &Part{Assignment: a, Tap: &load.Tap{}, Live: live}
	readied := false
	p.Tap.Ready = func(ctx context.Context) (time.Time, error) {
		readied = true
		reply(am, readyReply{Share: p.described()})
		// the start comes once every worker is ready: within the barrier
		// (and a lease more for the message), or not at all
		wait := time.NewTimer(time.Duration(a.BarrierNs) + lease)
		defer wait.Stop()
		for {
			select {
			case s := <-starts:
				if s.Part == a.Part {
					return time.Unix(0, s.AtUnixNs), nil
				}
			case <-ctx.Done():
				return time.Time{}, context.Cause(ctx)
			case <-finished:
				return time.Time{}, fmt.Errorf("%w: the run ended before part %d started", ErrStopped, a.Part)
			case <-wait.C:
				return time.Time{}, fmt.Errorf("%w: part %d did not start within the barrier", ErrStopped, a.Part)
			}
		}
	}
	salt, err := runID()
	if err != nil {
		return err
	}
	out := &sender{js: js, sub: sub, id: w.ID, part: a.Part, seal: seal, salt: salt}
	done := make(chan struct{})
	var rep Report
	var jobErr error
	go func() {
		defer close(done)
		rep, jobErr = w.Job(partCtx, p)
	}()
	snap := time.NewTicker(snapEvery)
	defer snap.Stop()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-snap.C:
			if err := out.take(partCtx, p.Tap, nil); err != nil {
				w.logf("tally: %v", err)
			}
		}
	}
	if jobErr != nil && !readied {
		reply(am, readyReply{Err: jobErr.Error()})
		return jobErr
	}
	if jobErr != nil {
		rep.Err = jobErr.Error()
	}
	if partCtx.Err() != nil {
		rep.Stopped = context.Cause(partCtx).Error()
	}
	if t := p.Tap.Started(); !t.IsZero() {
		rep.StartedUnixNs = t.UnixNano()
	}
	rep.Sample.Series = nil // the coordinator has it from the tallies: a report stays small
	// the last tally: while the coordinator is heard (the lease holds),
	// keep trying for a minute; once it is not, for one lease more
	within := time.Minute
	if gone.Load() {
		within = lease
	}
	finalCtx, cancelFinal := context.WithTimeout(context.WithoutCancel(ctx), within)
	defer cancelFinal()
	if err := out.take(finalCtx, p.Tap, &rep); err != nil {
		return fmt.Errorf("fleet: the last tally was not delivered: %w", err)
	}
	w.logf("part %d: sent %d tallies", a.Part, out.seq)
	if jobErr != nil {
		return jobErr
	}
	return context.Cause(partCtx)
}

// join asks the fleet's coordinator to take the worker, until it answers
// or Wait runs out.
func (w *Worker) join(ctx context.Context, k *keys) (joinReply, error) {
	nonce, err := runID()
	if err != nil {
		return joinReply{}, err
	}
	req, _ := json.Marshal(joinRequest{ID: w.ID, Host: w.Host, Cores: runtime.NumCPU(), Version: w.Version, Nonce: nonce, Key: k.pub})
	subj := subjects{fleet: w.Fleet}.join()
	deadline := time.Now().Add(w.Wait)
	for {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		m, err := w.Conn.RequestWithContext(rctx, subj, req)
		cancel()
		if err == nil {
			var r joinReply
			if err := json.Unmarshal(m.Data, &r); err != nil {
				return r, fmt.Errorf("fleet: malformed join reply: %w", err)
			}
			if r.Refused != "" {
				return r, fmt.Errorf("%w: %s", ErrRefused, r.Refused)
			}
			return r, nil
		}
		if ctx.Err() != nil {
			return joinReply{}, context.Cause(ctx)
		}
		if time.Now().After(deadline) {
			return joinReply{}, fmt.Errorf("fleet: no coordinator of fleet %q answered within %v (%v)", w.Fleet, w.Wait, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func respond(m *nats.Msg, v any) {
	b, _ := json.Marshal(v)
	m.Respond(b)
}

// sender publishes a worker's tallies in order, each once: a tally that
// could not be published stays queued and is sent again, with the same
// message id, before the next.
type sender struct {
	js      jetstream.JetStream
	sub     subjects
	id      string
	part    int
	seq     int64
	pending []snapshot
	// seal seals a tally to the coordinator.
	seal func(any) []byte
	// salt makes the tallies' message ids unguessable.
	salt string
}

// take takes the tap's tally (with the final report, if rep is set),
// queues it and publishes what is queued.
func (s *sender) take(ctx context.Context, tap *load.Tap, rep *Report) error {
	if rep == nil && tap.Started().IsZero() {
		return s.flush(ctx) // the load has not started: nothing to take yet
	}
	tl, err := tap.Take()
	if err != nil {
		return err
	}
	s.seq++
	sn := snapshot{Worker: s.id, Part: s.part, Seq: s.seq, Tally: tl}
	if rep != nil {
		rep.Snapshots = s.seq
		sn.Final = rep
	}
	s.pending = append(s.pending, sn)
	for {
		err := s.flush(ctx)
		if err == nil || rep == nil || ctx.Err() != nil {
			return err
		}
		select { // the last tally: retry until delivered or ctx ends
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *sender) flush(ctx context.Context) error {
	for len(s.pending) > 0 {
		sn := s.pending[0]
		b := s.seal(sn)
		if b == nil {
			return fmt.Errorf("tally %d could not be sealed", sn.Seq)
		}
		// the salt is the worker's own: nobody can take a tally's id first
		msgID := fmt.Sprintf("%s.%d.%s.%d.%s", s.sub.run, s.part, s.id, sn.Seq, s.salt)
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := s.js.Publish(pctx, s.sub.snap(s.part, s.id), b, jetstream.WithMsgID(msgID))
		cancel()
		if err != nil {
			return fmt.Errorf("publish tally %d: %w", sn.Seq, err)
		}
		s.pending = s.pending[1:]
	}
	return nil
}
