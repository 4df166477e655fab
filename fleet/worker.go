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
	seal := func(v any) []byte {
		b, err := k.seal(v, acc.Key)
		if err != nil {
			w.logf("seal: %v", err)
		}
		return b
	}
	reply := func(m *nats.Msg, v any) { m.Respond(seal(v)) }
	forged := func(what string, err error) {
		w.logf("%s that failed authentication, ignored (someone else on the bus sends as the coordinator): %v", what, err)
	}
	sub := subjects{fleet: w.Fleet, run: acc.Run}
	lease := time.Duration(acc.LeaseNs)
	w.logf("joined run %s as worker %d of %d", acc.Run, acc.Index+1, acc.Count)

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu          sync.Mutex
		heard       = time.Now()
		part        int                     // the part under way, 0 between parts
		stopPart    context.CancelCauseFunc // stops it
		stoppedPart int                     // the highest part stopped
		assigned    = make(chan assignment, 1)
		starts      = make(chan startMsg, 1)
		finished    = make(chan struct{})
	)
	hear := func() { mu.Lock(); heard = time.Now(); mu.Unlock() }
	var subs []*nats.Subscription
	defer func() {
		for _, s := range subs {
			s.Unsubscribe()
		}
	}()
	for subj, handle := range map[string]nats.MsgHandler{
		sub.worker(w.ID, "clock"): func(m *nats.Msg) {
			now := time.Now()
			var q clockRequest
			if err := k.open(m.Data, acc.Key, &q); err != nil {
				forged("a clock request", err)
				return
			}
			hear()
			reply(m, clockReply{UnixNs: now.UnixNano()})
		},
		sub.worker(w.ID, "assign"): func(m *nats.Msg) {
			var a Assignment
			if err := k.open(m.Data, acc.Key, &a); err != nil {
				forged("an assignment", err)
				return
			}
			hear()
			mu.Lock()
			busy := part != 0
			mu.Unlock()
			if !busy {
				select {
				case assigned <- assignment{m, a}:
					return
				default:
				}
			}
			reply(m, readyReply{Err: "a part is already under way"}) // one part at a time
		},
		sub.worker(w.ID, "start"): func(m *nats.Msg) {
			var s startMsg
			if err := k.open(m.Data, acc.Key, &s); err != nil {
				forged("a start", err)
				return
			}
			hear()
			for { // the newest start replaces one a stopped part never took
				select {
				case starts <- s:
					return
				default:
					select {
					case <-starts:
					default:
					}
				}
			}
		},
		sub.beat(): func(*nats.Msg) { hear() },
		sub.stop(): func(m *nats.Msg) {
			var s stopMsg
			if json.Unmarshal(m.Data, &s) != nil || s.Worker != "" && s.Worker != w.ID {
				return // not a stop, or another worker's
			}
			err := fmt.Errorf("%w: the coordinator stopped the run: %s", ErrStopped, s.Reason)
			mu.Lock()
			defer mu.Unlock()
			stoppedPart = max(stoppedPart, s.Part)
			switch {
			case s.Part == 0:
				cancel(err)
			case s.Part == part && stopPart != nil:
				stopPart(err)
			}
		},
		sub.done(): func(*nats.Msg) {
			select {
			case <-finished:
			default:
				close(finished)
			}
		},
	} {
		s, err := w.Conn.Subscribe(subj, handle)
		if err != nil {
			return fmt.Errorf("fleet: subscribe %s: %w", subj, err)
		}
		subs = append(subs, s)
	}
	if err := w.Conn.Flush(); err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	// the lease: without a word from the coordinator for lease, stop.
	var gone atomic.Bool // the lease ran out
	var bg sync.WaitGroup
	bgDone := make(chan struct{})
	defer func() { close(bgDone); bg.Wait() }()
	bg.Go(func() {
		tick := time.NewTicker(lease / 20)
		defer tick.Stop()
		for {
			select {
			case <-bgDone:
				return
			case <-tick.C:
				mu.Lock()
				silent := time.Since(heard)
				mu.Unlock()
				if silent > lease {
					gone.Store(true)
					cancel(fmt.Errorf("%w: nothing heard from the coordinator for %v (the lease)", ErrStopped, silent.Round(time.Millisecond)))
					return
				}
			}
		}
	})
	var live atomic.Pointer[load.Live] // the part under way's counts
	live.Store(&load.Live{})
	bg.Go(func() { // heartbeats, for the whole run
		t := time.NewTicker(beatEvery)
		defer t.Stop()
		for {
			select {
			case <-bgDone:
				return
			case <-t.C:
				l := live.Load()
				mu.Lock()
				p := part
				mu.Unlock()
				w.Conn.Publish(sub.worker(w.ID, "beat"), seal(beat{Part: p, Sent: l.Sent.Load(), OK: l.OK.Load(), Errors: l.Errors.Load()}))
			}
		}
	})
	js, err := jetstream.New(w.Conn)
	if err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	var stopped error // a part the coordinator stopped: the run did not end well
	for {
		var got assignment
		select {
		case got = <-assigned:
		case <-finished:
			w.logf("the run is done")
			return stopped
		case <-runCtx.Done():
			return context.Cause(runCtx)
		}
		am, a := got.m, got.a
		if a.Part < 1 {
			reply(am, readyReply{Err: fmt.Sprintf("malformed assignment (part %d)", a.Part)})
			continue
		}
		partCtx, stop := context.WithCancelCause(runCtx)
		mu.Lock()
		if a.Part <= stoppedPart { // stopped before it was taken
			mu.Unlock()
			stop(nil)
			reply(am, readyReply{Err: fmt.Sprintf("part %d was stopped", a.Part)})
			continue
		}
		part, stopPart = a.Part, stop
		mu.Unlock()
		l := &load.Live{}
		live.Store(l)
		err := w.runPart(ctx, partCtx, js, sub, am, a, starts, finished, l, lease, &gone, reply, func(v any) []byte { return seal(v) })
		stop(nil)
		mu.Lock()
		part, stopPart = 0, nil
		mu.Unlock()
		if runCtx.Err() != nil {
			return context.Cause(runCtx)
		}
		if err != nil {
			w.logf("part %d: %v", a.Part, err)
			if errors.Is(err, ErrStopped) {
				stopped = err
			}
		}
	}
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
