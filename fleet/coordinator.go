package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/tandem-bench/tandem/load"
)

// Coordinator runs one load over Workers workers.
type Coordinator struct {
	Conn *nats.Conn
	// Fleet names the fleet ("tandem" when empty).
	Fleet string
	// Workers is how many workers the run waits for.
	Workers int
	// Spec is the whole load; each worker's Job splits it.
	Spec json.RawMessage
	// Version is tandem's version; a worker of another is refused.
	Version string
	// JoinWait bounds the wait for the workers to join (default 2 min);
	// Barrier the wait for every worker to be ready (default 30 s).
	JoinWait, Barrier time.Duration
	// ContinueOnLoss keeps the run going when a worker is lost (else the
	// run stops, and Run returns ErrWorkerLost).
	ContinueOnLoss bool
	// Suspect, Lost and Lease are the failure detector's times (defaults
	// DefaultSuspect, DefaultLost, DefaultLease).
	Suspect, Lost, Lease time.Duration
	// Log, if set, receives a line for each step and each suspicion.
	Log func(string)
	// Joined, if set, is told of each worker as it joins.
	Joined func(id, host string)
}

// ErrWorkerLost is returned when a worker was lost and the run stopped.
var ErrWorkerLost = errors.New("fleet: a worker was lost")

// Outcome is what a distributed run measured.
type Outcome struct {
	// Sum adds up every tally received, each once.
	Sum load.Sum
	// Workers are the run's workers in index order.
	Workers []*WorkerOutcome
	// Agreed is the common start on the coordinator's clock; StartSkew
	// the spread of the workers' actual starts, as the coordinator's clock
	// reads them.
	Agreed    time.Time
	StartSkew time.Duration
	// Duplicates counts tallies received more than once (and added once).
	Duplicates int64
	// Messages and Bytes count what the coordinator received from the
	// workers (heartbeats and tallies) while the load ran.
	Messages, Bytes int64
	// Stopped says why the run stopped early, if it did.
	Stopped string
}

// WorkerOutcome is one worker's account.
type WorkerOutcome struct {
	ID, Host string
	Index    int
	// ClockOffset is the worker's clock minus the coordinator's, from the
	// round trip of least RTT.
	ClockOffset, RTT time.Duration
	// Share says what part of the load the worker ran.
	Share string
	// Report is the worker's own account, nil if it never came.
	Report *Report
	// Started is its load's start on the coordinator's clock.
	Started time.Time
	// Suspected and LostAfter (0: not lost) say how its heartbeats went.
	Suspected bool
	Lost      bool
	LostAfter time.Duration
	// Tallies, Messages and Bytes count what it sent.
	Tallies, Messages, Bytes int64
	// seqs holds the tallies received, by sequence number.
	seqs  map[int64]bool
	heard time.Time
}

// Run waits for the workers, measures their clocks, hands out the parts,
// starts them together and adds up what they send until every worker has
// reported or is lost. ctx ends the run early: the workers are stopped and
// what they measured is still collected.
func (c *Coordinator) Run(ctx context.Context) (*Outcome, error) {
	c.defaults()
	run, err := runID()
	if err != nil {
		return nil, err
	}
	sub := subjects{fleet: c.Fleet, run: run}
	js, err := jetstream.New(c.Conn)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: sub.stream(), Subjects: []string{sub.snaps()},
		Storage: jetstream.FileStorage, Duplicates: 10 * time.Minute, MaxAge: 24 * time.Hour})
	if err != nil {
		return nil, fmt.Errorf("fleet: JetStream stream for the tallies: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		js.DeleteStream(dctx, sub.stream())
	}()

	out := &Outcome{}
	var mu sync.Mutex
	byID := map[string]*WorkerOutcome{}
	full := make(chan struct{})
	joining := true
	joinSub, err := c.Conn.Subscribe(sub.join(), func(m *nats.Msg) {
		var req joinRequest
		if err := json.Unmarshal(m.Data, &req); err != nil || req.ID == "" {
			respond(m, joinReply{Refused: "malformed join request"})
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case byID[req.ID] != nil && !joining:
			respond(m, joinReply{Refused: fmt.Sprintf("worker %s is already in run %s, which is under way: no joining mid-run", req.ID, run)})
		case byID[req.ID] != nil:
			respond(m, joinReply{Refused: fmt.Sprintf("a worker named %s already joined: give each worker its own --id", req.ID)})
		case !joining:
			respond(m, joinReply{Refused: fmt.Sprintf("run %s is under way with its %d workers: no joining mid-run", run, c.Workers)})
		case req.Version != c.Version:
			respond(m, joinReply{Refused: fmt.Sprintf("worker %s runs tandem %s, the coordinator %s: run one version", req.ID, req.Version, c.Version)})
		default:
			w := &WorkerOutcome{ID: req.ID, Host: req.Host, Index: len(out.Workers), seqs: map[int64]bool{}, heard: time.Now()}
			out.Workers = append(out.Workers, w)
			byID[req.ID] = w
			respond(m, joinReply{Run: run, Index: w.Index, Count: c.Workers, LeaseNs: int64(c.Lease)})
			if c.Joined != nil {
				c.Joined(w.ID, w.Host)
			}
			if len(out.Workers) == c.Workers {
				joining = false
				close(full)
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	defer joinSub.Unsubscribe()
	c.logf("waiting for %d workers (fleet %s, run %s)", c.Workers, c.Fleet, run)
	select {
	case <-full:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-time.After(c.JoinWait):
		mu.Lock()
		n := len(out.Workers)
		joining = false
		mu.Unlock()
		c.stop(sub, "not every worker joined")
		return nil, fmt.Errorf("fleet: %d of %d workers joined within %v", n, c.Workers, c.JoinWait)
	}

	// from here on the coordinator beats, and hears the workers
	beatsDone := make(chan struct{})
	var beatWG sync.WaitGroup
	beatWG.Go(func() {
		t := time.NewTicker(beatEvery)
		defer t.Stop()
		for {
			c.Conn.Publish(sub.beat(), nil)
			select {
			case <-beatsDone:
				return
			case <-t.C:
			}
		}
	})
	defer func() { close(beatsDone); beatWG.Wait() }()
	reported := make(chan struct{}, c.Workers)
	var addErr error
	beatSub, err := c.Conn.Subscribe(sub.workerBeats(), func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		if w := byID[workerOf(m.Subject)]; w != nil {
			w.heard = time.Now()
			w.Messages++
			w.Bytes += int64(len(m.Data))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	defer beatSub.Unsubscribe()
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		var sn snapshot
		if err := json.Unmarshal(m.Data(), &sn); err != nil {
			c.logf("a malformed tally on %s: %v", m.Subject(), err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		w := byID[sn.Worker]
		if w == nil {
			return
		}
		w.heard = time.Now()
		w.Messages++
		w.Bytes += int64(len(m.Data()))
		if w.seqs[sn.Seq] {
			out.Duplicates++
			return
		}
		w.seqs[sn.Seq] = true
		w.Tallies++
		if err := out.Sum.Add(sn.Tally); err != nil && addErr == nil {
			addErr = fmt.Errorf("fleet: worker %s, tally %d: %w", w.ID, sn.Seq, err)
		}
		if sn.Final != nil && w.Report == nil {
			w.Report = sn.Final
			if !w.Lost { // a lost worker is no longer waited for
				reported <- struct{}{}
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	defer cc.Stop()

	if err := c.measureClocks(ctx, sub, out.Workers); err != nil {
		c.stop(sub, err.Error())
		return nil, err
	}
	if err := c.assign(ctx, sub, run, out.Workers); err != nil {
		c.stop(sub, err.Error())
		return nil, err
	}
	var maxRTT time.Duration
	for _, w := range out.Workers {
		maxRTT = max(maxRTT, w.RTT)
	}
	out.Agreed = time.Now().Add(max(200*time.Millisecond, 20*maxRTT))
	for _, w := range out.Workers {
		b, _ := json.Marshal(startMsg{AtUnixNs: out.Agreed.Add(w.ClockOffset).UnixNano()})
		if err := c.Conn.Publish(sub.worker(w.ID, "start"), b); err != nil {
			c.stop(sub, "start not sent")
			return nil, fmt.Errorf("fleet: start: %w", err)
		}
	}
	c.logf("start at %s on every worker", out.Agreed.Format("15:04:05.000"))
	msgs0, bytes0 := c.Conn.Stats().InMsgs, c.Conn.Stats().InBytes

	// wait for every report, watching for silence
	var lostErr error
	waiting := c.Workers
	check := time.NewTicker(100 * time.Millisecond)
	defer check.Stop()
	done := ctx.Done()
	var interrupted <-chan time.Time
	for waiting > 0 {
		select {
		case <-reported:
			waiting--
			continue
		case <-done:
			out.Stopped = "interrupted"
			c.stop(sub, "interrupted at the coordinator")
			done = nil
			interrupted = time.After(c.Lease + c.Lost)
			continue
		case <-interrupted:
			waiting = 0
			continue
		case <-check.C:
		}
		if c.Conn.IsClosed() {
			return out, errors.New("fleet: the coordinator's NATS connection is closed: the workers stop within their lease")
		}
		mu.Lock()
		for _, w := range out.Workers {
			if w.Report != nil || w.Lost {
				continue
			}
			silent := time.Since(w.heard)
			if silent > c.Suspect && !w.Suspected {
				w.Suspected = true
				c.logf("worker %s is suspect: silent for %v", w.ID, silent.Round(time.Millisecond))
			}
			if silent > c.Lost {
				w.Lost, w.LostAfter = true, time.Since(out.Agreed)
				waiting--
				c.logf("worker %s is lost: silent for %v", w.ID, silent.Round(time.Millisecond))
				if !c.ContinueOnLoss && lostErr == nil {
					lostErr = fmt.Errorf("%w: %s, silent for %v", ErrWorkerLost, w.ID, silent.Round(time.Millisecond))
					out.Stopped = "worker " + w.ID + " lost"
					c.stop(sub, out.Stopped)
				}
			}
		}
		mu.Unlock()
	}
	cc.Stop()
	st := c.Conn.Stats()
	mu.Lock()
	defer mu.Unlock()
	out.Messages, out.Bytes = int64(st.InMsgs-msgs0), int64(st.InBytes-bytes0)
	var first, last time.Time
	for _, w := range out.Workers {
		if w.Report == nil {
			continue
		}
		w.Share = w.Report.Share
		if w.Report.StartedUnixNs != 0 {
			w.Started = time.Unix(0, w.Report.StartedUnixNs).Add(-w.ClockOffset)
			if first.IsZero() || w.Started.Before(first) {
				first = w.Started
			}
			if w.Started.After(last) {
				last = w.Started
			}
		}
		if w.Tallies != w.Report.Snapshots {
			c.logf("worker %s: %d of its %d tallies arrived", w.ID, w.Tallies, w.Report.Snapshots)
		}
	}
	out.StartSkew = last.Sub(first)
	if addErr != nil {
		return out, addErr
	}
	return out, lostErr
}

// Missing names the workers whose tallies did not all arrive, for the
// results: a run with one is not whole.
func (o *Outcome) Missing() []string {
	var ids []string
	for _, w := range o.Workers {
		if w.Report == nil || w.Tallies != w.Report.Snapshots {
			ids = append(ids, w.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

func (c *Coordinator) defaults() {
	if c.Fleet == "" {
		c.Fleet = "tandem"
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&c.JoinWait, 2 * time.Minute}, {&c.Barrier, 30 * time.Second}, {&c.Suspect, DefaultSuspect}, {&c.Lost, DefaultLost}, {&c.Lease, DefaultLease}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
}

func (c *Coordinator) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(fmt.Sprintf(format, args...))
	}
}

// stop tells every worker of the run to stop its load.
func (c *Coordinator) stop(sub subjects, reason string) {
	b, _ := json.Marshal(stopMsg{Reason: reason})
	c.Conn.Publish(sub.stop(), b)
	c.Conn.Flush()
}

// measureClocks reads each worker's clock over several round trips and
// keeps the sample of least RTT: offset = worker's reading − the
// coordinator's clock at the round trip's middle.
func (c *Coordinator) measureClocks(ctx context.Context, sub subjects, workers []*WorkerOutcome) error {
	for _, w := range workers {
		best := time.Duration(-1)
		for range clockSamples {
			t0 := time.Now()
			m, err := c.request(ctx, 2*time.Second, sub.worker(w.ID, "clock"), nil)
			t1 := time.Now()
			if err != nil {
				return fmt.Errorf("fleet: worker %s: clock: %w", w.ID, err)
			}
			var r clockReply
			if err := json.Unmarshal(m.Data, &r); err != nil {
				return fmt.Errorf("fleet: worker %s: clock: %w", w.ID, err)
			}
			rtt := t1.Sub(t0)
			if best < 0 || rtt < best {
				best = rtt
				mid := t0.Add(rtt / 2)
				w.RTT, w.ClockOffset = rtt, time.Duration(r.UnixNs-mid.UnixNano())
			}
		}
	}
	return nil
}

// assign hands every worker its part and waits (the barrier) until each
// has its connections open, or says why it cannot run.
func (c *Coordinator) assign(ctx context.Context, sub subjects, run string, workers []*WorkerOutcome) error {
	errs := make([]error, len(workers))
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Go(func() {
			b, _ := json.Marshal(Assignment{Run: run, Index: w.Index, Count: len(workers), Spec: c.Spec})
			m, err := c.request(ctx, c.Barrier, sub.worker(w.ID, "assign"), b)
			if err != nil {
				errs[i] = fmt.Errorf("fleet: worker %s was not ready within %v: %w", w.ID, c.Barrier, err)
				return
			}
			var r readyReply
			if err := json.Unmarshal(m.Data, &r); err != nil {
				errs[i] = fmt.Errorf("fleet: worker %s: malformed reply: %w", w.ID, err)
				return
			}
			if r.Err != "" {
				errs[i] = fmt.Errorf("fleet: worker %s: %s", w.ID, r.Err)
				return
			}
			w.Share = r.Share
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// request sends a request and waits up to d for its reply; while nobody
// listens yet (a worker that has just joined subscribes after its
// acceptance) it asks again.
func (c *Coordinator) request(ctx context.Context, d time.Duration, subj string, data []byte) (*nats.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		m, err := c.Conn.RequestWithContext(ctx, subj, data)
		if !errors.Is(err, nats.ErrNoResponders) {
			return m, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// workerOf is the worker id in a subject tandem.F.RUN.w.ID.WHAT.
func workerOf(subject string) string {
	parts := strings.Split(subject, ".")
	if len(parts) != 6 {
		return ""
	}
	return parts[4]
}

func runID() (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("fleet: run id: %w", err)
	}
	return hex.EncodeToString(b), nil
}
