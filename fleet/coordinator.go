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
	// Ended is when the last report came or the last worker was lost.
	Ended time.Time
	// Duplicates counts tallies received more than once (and added once).
	Duplicates int64
	// Messages and Bytes count what the coordinator received from the
	// workers (heartbeats and tallies) while the load ran.
	Messages, Bytes int64
	// Stopped says why the run stopped early, if it did.
	Stopped string
	// Forged counts messages on the workers' subjects that failed their
	// authentication (none were counted); any fails the run (ErrForged).
	Forged int64
}

// WorkerOutcome is one worker's account.
type WorkerOutcome struct {
	ID, Host string
	// Cores is how many cores the worker's machine has.
	Cores int
	Index int
	// ClockOffset is the worker's clock minus the coordinator's, from the
	// round trip of least RTT.
	ClockOffset, RTT time.Duration
	// Share says what part of the load the worker ran.
	Share string
	// Report is the worker's own account, nil if it never came.
	Report *Report
	// Started is its load's start on the coordinator's clock.
	Started time.Time
	// Suspected, Lost and LostAfter (from the start to the last word
	// heard) say how its heartbeats went; Late, that a lost worker's
	// report came after all.
	Suspected bool
	Lost      bool
	LostAfter time.Duration
	Late      bool
	// Tallies, Messages and Bytes count what it sent.
	Tallies, Messages, Bytes int64
	// Requests and OK are what its tallies counted, each tally once: of a
	// worker lost without a report, all that is known of its load.
	Requests, OK int64
	// seqs holds the tallies received, by sequence number.
	seqs map[int64]bool
}

// Run runs one load over the fleet: Open, one Session.Run of Spec, Close.
func (c *Coordinator) Run(ctx context.Context) (*Outcome, error) {
	sess, err := c.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	return sess.Run(ctx, c.Spec)
}

// Session is a fleet held together for many loads (parts): its workers
// joined once and keep their clocks; each Run hands out one load.
type Session struct {
	c      *Coordinator
	run    string
	keys   *keys
	sub    subjects
	js     jetstream.JetStream
	stream jetstream.Stream
	subs   []*nats.Subscription

	mu      sync.Mutex
	workers []*member // in join order
	byID    map[string]*member
	part    int // the last part handed out

	beatsDone chan struct{}
	beats     sync.WaitGroup
	closeOnce sync.Once
	// failed, if set, is why the session ends without its run done: the
	// workers are stopped, not released.
	failed string
	// forged counts messages sent as a worker that failed authentication;
	// forgedWhat says the first.
	forged     int64
	forgedWhat string
}

// member is a worker of the session.
type member struct {
	id, host, nonce  string
	key              string // its curve public key
	cores, index     int
	part             int       // the part its heartbeats say it runs
	idle             time.Time // since when they say it runs none (zero: it runs one)
	offset, rtt      time.Duration
	heard            time.Time
	lost             bool
	messages, nbytes int64
}

// Open waits for the workers to join, starts the heartbeats and measures
// every worker's clock. Close ends the session.
func (c *Coordinator) Open(ctx context.Context) (*Session, error) {
	c.defaults()
	s, err := c.newSession(ctx)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			s.failed = "the fleet did not come together"
			s.Close()
		}
	}()
	// beats from the start: a worker that joins early must not lose its
	// lease while the others come
	s.beats.Go(s.sendBeats)
	j := &joins{s: s, joining: true, full: make(chan struct{})}
	if err := s.subscribe(s.sub.join(), j.handle); err != nil {
		return nil, err
	}
	c.logf("waiting for %d workers (fleet %s, run %s)", c.Workers, c.Fleet, s.run)
	select {
	case <-j.full:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-time.After(c.JoinWait):
		s.mu.Lock()
		n := len(s.workers)
		j.joining = false
		s.mu.Unlock()
		return nil, fmt.Errorf("fleet: %d of %d workers joined within %v", n, c.Workers, c.JoinWait)
	}
	if err := s.subscribe(s.sub.workerBeats(), s.onBeat); err != nil {
		return nil, err
	}
	if err := s.measureClocks(ctx); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// newSession makes a session under a new run id, with its keys and the
// JetStream stream for its tallies.
func (c *Coordinator) newSession(ctx context.Context) (*Session, error) {
	run, err := runID()
	if err != nil {
		return nil, err
	}
	s := &Session{c: c, run: run, sub: subjects{fleet: c.Fleet, run: run}, byID: map[string]*member{}, beatsDone: make(chan struct{})}
	if s.keys, err = newKeys(); err != nil {
		return nil, err
	}
	if s.js, err = jetstream.New(c.Conn); err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	s.stream, err = s.js.CreateStream(ctx, jetstream.StreamConfig{Name: s.sub.stream(), Subjects: []string{s.sub.snaps()},
		Storage: jetstream.FileStorage, Duplicates: 10 * time.Minute, MaxAge: 24 * time.Hour})
	if err != nil {
		return nil, fmt.Errorf("fleet: JetStream stream for the tallies: %w", err)
	}
	return s, nil
}

// sendBeats publishes the coordinator's heartbeat every beatEvery until
// beatsDone closes.
func (s *Session) sendBeats() {
	t := time.NewTicker(beatEvery)
	defer t.Stop()
	for {
		s.c.Conn.Publish(s.sub.beat(), nil)
		select {
		case <-s.beatsDone:
			return
		case <-t.C:
		}
	}
}

// joins is the state of a session's join requests: whether it still
// takes workers, and a channel closed once it has them all.
type joins struct {
	s       *Session
	joining bool // under s.mu
	full    chan struct{}
}

// handle answers a join request: the same answer to one asked again, a
// refusal, or the worker's place in the run.
func (j *joins) handle(m *nats.Msg) {
	s, c, run := j.s, j.s.c, j.s.run
	var req joinRequest
	if err := json.Unmarshal(m.Data, &req); err != nil || req.ID == "" {
		respond(m, joinReply{Refused: "malformed join request"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.byID[req.ID]; w != nil && w.nonce == req.Nonce && req.Nonce != "" { // asked again: the same answer
		respond(m, joinReply{Run: run, Index: w.index, Count: c.Workers, LeaseNs: int64(c.Lease), Key: s.keys.pub})
		return
	}
	switch {
	case s.byID[req.ID] != nil && !j.joining:
		respond(m, joinReply{Refused: fmt.Sprintf("worker %s is already in run %s, which is under way: no joining mid-run", req.ID, run)})
	case s.byID[req.ID] != nil:
		respond(m, joinReply{Refused: fmt.Sprintf("a worker named %s already joined: give each worker its own --id", req.ID)})
	case !j.joining:
		respond(m, joinReply{Refused: fmt.Sprintf("run %s is under way with its %d workers: no joining mid-run", run, c.Workers)})
	case req.Version != c.Version:
		respond(m, joinReply{Refused: fmt.Sprintf("worker %s runs tandem %s, the coordinator %s: run one version", req.ID, req.Version, c.Version)})
	case !validKey(req.Key):
		respond(m, joinReply{Refused: fmt.Sprintf("worker %s sent no key to seal its messages with", req.ID)})
	default:
		w := &member{id: req.ID, host: req.Host, cores: req.Cores, heard: time.Now(), nonce: req.Nonce, index: len(s.workers), key: req.Key}
		s.workers = append(s.workers, w)
		s.byID[req.ID] = w
		respond(m, joinReply{Run: run, Index: len(s.workers) - 1, Count: c.Workers, LeaseNs: int64(c.Lease), Key: s.keys.pub})
		if c.Joined != nil {
			c.Joined(w.id, w.host)
		}
		if len(s.workers) == c.Workers {
			j.joining = false
			close(j.full)
		}
	}
}

// onBeat notes a worker's heartbeat: heard now, and the part it says it
// runs (or since when none).
func (s *Session) onBeat(m *nats.Msg) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := workerOf(m.Subject)
	w := s.byID[id]
	var b beat
	if w == nil || s.keys.open(m.Data, w.key, &b) != nil {
		s.forge(id, "a heartbeat")
		return
	}
	w.heard = time.Now()
	w.messages++
	w.nbytes += int64(len(m.Data))
	switch {
	case b.Part != 0:
		w.part, w.idle = b.Part, time.Time{}
	case w.idle.IsZero() || w.part != 0:
		w.part, w.idle = 0, time.Now()
	}
}

// forge counts a message sent as worker id that failed authentication
// (what says what it was). Under s.mu.
func (s *Session) forge(id, what string) {
	if s.forged == 0 {
		s.forgedWhat = fmt.Sprintf("%s as worker %q", what, id)
		s.c.logf("%s failed authentication: someone else on the bus sends as a worker; the run fails", s.forgedWhat)
	}
	s.forged++
}

// forgery is the error of a session that received forgeries, nil if none.
func (s *Session) forgery() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forged == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d, the first %s (none was counted; the run's figures are not trusted)", ErrForged, s.forged, s.forgedWhat)
}

func (s *Session) subscribe(subj string, h nats.MsgHandler) error {
	sub, err := s.c.Conn.Subscribe(subj, h)
	if err != nil {
		return fmt.Errorf("fleet: subscribe %s: %w", subj, err)
	}
	s.subs = append(s.subs, sub)
	return nil
}

// Workers is how many workers the session has not lost.
func (s *Session) Workers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, w := range s.workers {
		if !w.lost {
			n++
		}
	}
	return n
}

// Close tells the workers the run is done (they exit), stops the
// heartbeats and removes the tallies' stream.
func (s *Session) Close() {
	s.closeOnce.Do(func() {
		if !s.c.Conn.IsClosed() {
			if s.failed != "" {
				b, _ := json.Marshal(stopMsg{Reason: s.failed})
				s.c.Conn.Publish(s.sub.stop(), b)
			} else {
				s.c.Conn.Publish(s.sub.done(), nil)
			}
			s.c.Conn.Flush()
		}
		close(s.beatsDone)
		s.beats.Wait()
		for _, sub := range s.subs {
			sub.Unsubscribe()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if !s.c.Conn.IsClosed() {
			s.js.DeleteStream(ctx, s.sub.stream())
		}
	})
}

// Run hands spec to every worker not lost, starts them together and adds
// up what they send until every one has reported or is lost. ctx ends the
// load early: the workers are stopped and what they measured is still
// collected (Outcome.Stopped says so).
func (s *Session) Run(ctx context.Context, spec json.RawMessage) (*Outcome, error) {
	c := s.c
	if err := s.forgery(); err != nil { // an earlier part's: the session is not trusted
		return nil, err
	}
	// clocks drift over a long session: measure them again for each part
	if err := s.measureClocks(ctx); err != nil {
		return nil, err
	}
	p := s.newPart()
	out := p.out
	if len(out.Workers) == 0 {
		return nil, errors.New("fleet: every worker is lost")
	}
	if err := p.consume(ctx); err != nil {
		return nil, err
	}
	defer p.endConsume()
	if err := s.assign(ctx, p.part, spec, out.Workers); err != nil {
		p.stop("", err.Error())
		return nil, err
	}
	if err := p.start(); err != nil {
		return nil, err
	}
	msgs0, bytes0 := c.Conn.Stats().InMsgs, c.Conn.Stats().InBytes

	// wait for every report, watching for silence
	p.waiting = len(out.Workers)
	check := time.NewTicker(100 * time.Millisecond)
	defer check.Stop()
	done := ctx.Done()
	var interrupted <-chan time.Time
	for p.waiting > 0 {
		select {
		case <-p.reported:
			p.waiting--
			continue
		case <-done:
			out.Stopped = "interrupted"
			p.stop("", "interrupted at the coordinator")
			done = nil
			interrupted = time.After(c.Lease + c.Lost)
			continue
		case <-interrupted:
			p.waiting = 0
			continue
		case <-check.C:
		}
		if c.Conn.IsClosed() {
			return out, errors.New("fleet: the coordinator's NATS connection is closed: the workers stop within their lease")
		}
		p.check()
	}
	return out, p.finish(msgs0, bytes0)
}

// partRun is the state of one Session.Run that its tally handler, its
// checks for silence and its end share.
type partRun struct {
	s    *Session
	part int
	out  *Outcome
	byID map[string]*WorkerOutcome
	// reported has a value for each worker's report.
	reported chan struct{}
	// addErr is the first tally that did not add up (under s.mu).
	addErr error
	cc     jetstream.ConsumeContext
	// consuming says the tally handler may still run.
	consuming bool

	// waiting counts the reports still awaited; lostErr is the first
	// loss that stops the part; disconnected says the coordinator's own
	// connection was down at the last check.
	waiting      int
	lostErr      error
	disconnected bool
}

// newPart counts a new part and makes its outcome, with every worker not
// lost in it.
func (s *Session) newPart() *partRun {
	p := &partRun{s: s, out: &Outcome{}, byID: map[string]*WorkerOutcome{}}
	s.mu.Lock()
	s.part++
	p.part = s.part
	for _, m := range s.workers {
		if m.lost {
			continue
		}
		w := &WorkerOutcome{ID: m.id, Host: m.host, Cores: m.cores, Index: len(p.out.Workers), ClockOffset: m.offset, RTT: m.rtt,
			seqs: map[int64]bool{}}
		p.out.Workers = append(p.out.Workers, w)
		p.byID[m.id] = w
	}
	s.mu.Unlock()
	p.reported = make(chan struct{}, len(p.out.Workers))
	return p
}

// consume starts adding up the part's tallies as they come from the
// stream.
func (p *partRun) consume(ctx context.Context) error {
	cons, err := p.s.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{p.s.sub.partSnaps(p.part)}})
	if err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	p.cc, err = cons.Consume(p.onTally)
	if err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	p.consuming = true
	return nil
}

// onTally adds a worker's tally to the sum, once, and takes the report
// the last one carries.
func (p *partRun) onTally(m jetstream.Msg) {
	s, out := p.s, p.out
	var sn snapshot
	id := m.Subject()[strings.LastIndexByte(m.Subject(), '.')+1:]
	s.mu.Lock()
	defer s.mu.Unlock()
	w, mem := p.byID[id], s.byID[id]
	if mem == nil || s.keys.open(m.Data(), mem.key, &sn) != nil || sn.Worker != id || sn.Part != p.part {
		s.forge(id, "a tally")
		return
	}
	if w == nil {
		return // a worker lost before this part: not in it
	}
	mem.heard = time.Now()
	w.Messages++
	w.Bytes += int64(len(m.Data()))
	if w.seqs[sn.Seq] {
		out.Duplicates++
		return
	}
	if err := out.Sum.Add(sn.Tally); err != nil {
		if p.addErr == nil { // not counted as received: the worker's tallies are incomplete
			p.addErr = fmt.Errorf("fleet: worker %s, tally %d: %w", w.ID, sn.Seq, err)
		}
	} else {
		w.seqs[sn.Seq] = true
		w.Tallies++
		w.Requests += sn.Tally.Requests
		w.OK += sn.Tally.OK
	}
	if sn.Final != nil && w.Report == nil {
		w.Report = sn.Final
		if w.Lost {
			w.Late = true // written off, yet it reported: not waited for any more
		} else {
			p.reported <- struct{}{}
		}
	}
}

// endConsume stops the tally handler: none runs once it returns.
func (p *partRun) endConsume() {
	if p.consuming {
		p.cc.Stop()
		<-p.cc.Closed()
		p.consuming = false
	}
}

// stop stops the part at worker ("": every worker), saying why. Not under
// s.mu: a flush may wait.
func (p *partRun) stop(worker, reason string) {
	b, _ := json.Marshal(stopMsg{Part: p.part, Worker: worker, Reason: reason})
	p.s.c.Conn.Publish(p.s.sub.stop(), b)
	p.s.c.Conn.Flush()
}

// start agrees a start far enough ahead for the slowest round trip and
// sends it to every worker on its own clock; a start not sent stops the
// part.
func (p *partRun) start() error {
	s, c, out := p.s, p.s.c, p.out
	var maxRTT time.Duration
	for _, w := range out.Workers {
		maxRTT = max(maxRTT, w.RTT)
	}
	out.Agreed = time.Now().Add(max(200*time.Millisecond, 20*maxRTT))
	for _, w := range out.Workers {
		b, err := s.keys.seal(startMsg{Part: p.part, AtUnixNs: out.Agreed.Add(w.ClockOffset).UnixNano()}, s.keyOf(w.ID))
		if err == nil {
			err = c.Conn.Publish(s.sub.worker(w.ID, "start"), b)
		}
		if err != nil {
			p.stop("", "start not sent")
			return fmt.Errorf("fleet: start: %w", err)
		}
	}
	c.logf("part %d: start at %s on every worker", p.part, out.Agreed.Format("15:04:05.000"))
	return nil
}

// check looks over the workers still awaited: it suspects those silent
// for Suspect and writes off those silent for Lost or idle without their
// report, and stops them (and, unless ContinueOnLoss, the part). While the
// coordinator's own connection is down nobody is blamed.
func (p *partRun) check() {
	s, c, out := p.s, p.s.c, p.out
	if c.Conn.Status() != nats.CONNECTED { // the coordinator's own outage: no worker is to blame
		p.disconnected = true
		return
	}
	var stops [][2]string
	s.mu.Lock()
	if p.disconnected { // back: every worker gets its time again
		p.disconnected = false
		for _, w := range out.Workers {
			s.byID[w.ID].heard = time.Now()
		}
	}
	for _, w := range out.Workers {
		if w.Report != nil || w.Lost {
			continue
		}
		mem := s.byID[w.ID]
		silent := time.Since(mem.heard)
		// alive, but done with the part (it said so after the start)
		// and its report has not come: it will not
		idle := !mem.idle.IsZero() && mem.idle.After(out.Agreed) && time.Since(mem.idle) > c.Lost
		if silent > c.Suspect && !w.Suspected {
			w.Suspected = true
			c.logf("worker %s is suspect: silent for %v", w.ID, silent.Round(time.Millisecond))
		}
		if silent <= c.Lost && !idle {
			continue
		}
		w.Lost, w.LostAfter, mem.lost = true, max(mem.heard.Sub(out.Agreed), 0), true
		p.waiting--
		why := fmt.Sprintf("silent for %v", silent.Round(time.Millisecond))
		if idle {
			why = "idle without its report"
		}
		c.logf("worker %s is lost: %s", w.ID, why)
		stops = append(stops, [2]string{w.ID, "lost: " + why})
		if !c.ContinueOnLoss && p.lostErr == nil {
			p.lostErr = fmt.Errorf("%w: %s, %s", ErrWorkerLost, w.ID, why)
			out.Stopped = "worker " + w.ID + " lost"
			stops = append(stops, [2]string{"", out.Stopped})
		}
	}
	s.mu.Unlock()
	for _, st := range stops {
		p.stop(st[0], st[1])
	}
}

// finish stops the tally handler and completes the outcome (the traffic
// since msgs0 and bytes0, each worker's start, the start skew); its error
// is the run's: forgeries first, then a tally that did not add up, then a
// loss.
func (p *partRun) finish(msgs0, bytes0 uint64) error {
	s, c, out := p.s, p.s.c, p.out
	p.endConsume()
	out.Ended = time.Now()
	st := c.Conn.Stats()
	s.mu.Lock()
	defer s.mu.Unlock()
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
	out.Forged = s.forged
	if s.forged > 0 {
		return fmt.Errorf("%w: %d, the first %s (none was counted; the run's figures are not trusted)", ErrForged, s.forged, s.forgedWhat)
	}
	if p.addErr != nil {
		return p.addErr
	}
	return p.lostErr
}

// Failed says why the outcome is not whole, "" if it is: a worker that
// failed or was lost, a tally that did not arrive, a run stopped early.
func (o *Outcome) Failed() string {
	var why []string
	for _, w := range o.Workers {
		switch {
		case w.Lost && !w.Late:
			why = append(why, "worker "+w.ID+" was lost")
		case w.Report != nil && w.Report.Err != "":
			why = append(why, "worker "+w.ID+" failed: "+w.Report.Err)
		}
	}
	if m := o.Missing(); len(m) > 0 {
		why = append(why, "tallies of "+strings.Join(m, ", ")+" missing")
	}
	if o.Stopped != "" {
		why = append(why, "stopped: "+o.Stopped)
	}
	return strings.Join(why, "; ")
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

// measureClocks reads each worker's clock over several round trips and
// keeps the sample of least RTT: offset = worker's reading − the
// coordinator's clock at the round trip's middle.
func (s *Session) measureClocks(ctx context.Context) error {
	s.mu.Lock()
	var live []*member
	for _, w := range s.workers {
		if !w.lost {
			live = append(live, w)
		}
	}
	s.mu.Unlock()
	for _, w := range live {
		q, err := s.keys.seal(clockRequest{Run: s.run}, w.key)
		if err != nil {
			return fmt.Errorf("fleet: worker %s: clock: %w", w.id, err)
		}
		best := time.Duration(-1)
		for range clockSamples {
			t0 := time.Now()
			m, err := s.c.request(ctx, clockWait, s.sub.worker(w.id, "clock"), q, true)
			t1 := time.Now()
			if err != nil {
				return fmt.Errorf("fleet: worker %s: clock: %w", w.id, err)
			}
			var r clockReply
			if err := s.keys.open(m.Data, w.key, &r); err != nil {
				s.mu.Lock()
				s.forge(w.id, "a clock reading")
				s.mu.Unlock()
				return fmt.Errorf("%w: worker %s: clock: %v", ErrForged, w.id, err)
			}
			rtt := t1.Sub(t0)
			if best < 0 || rtt < best {
				best = rtt
				mid := t0.Add(rtt / 2)
				s.mu.Lock()
				w.rtt, w.offset = rtt, time.Duration(r.UnixNs-mid.UnixNano())
				s.mu.Unlock()
			}
		}
	}
	return nil
}

// assign hands every worker its part and waits (the barrier) until each
// has its connections open, or says why it cannot run.
func (s *Session) assign(ctx context.Context, part int, spec json.RawMessage, workers []*WorkerOutcome) error {
	errs := make([]error, len(workers))
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Go(func() {
			key := s.keyOf(w.ID)
			b, err := s.keys.seal(Assignment{Run: s.run, Part: part, Index: w.Index, Count: len(workers), Spec: spec, BarrierNs: int64(s.c.Barrier)}, key)
			if err != nil {
				errs[i] = fmt.Errorf("fleet: worker %s: %w", w.ID, err)
				return
			}
			m, err := s.c.request(ctx, s.c.Barrier, s.sub.worker(w.ID, "assign"), b, false)
			if err != nil {
				errs[i] = fmt.Errorf("fleet: worker %s was not ready within %v: %w", w.ID, s.c.Barrier, err)
				return
			}
			var r readyReply
			if err := s.keys.open(m.Data, key, &r); err != nil {
				s.mu.Lock()
				s.forge(w.ID, "a readiness reply")
				s.mu.Unlock()
				errs[i] = fmt.Errorf("%w: worker %s: readiness: %v", ErrForged, w.ID, err)
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

// keyOf is worker id's public key.
func (s *Session) keyOf(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.byID[id]; m != nil {
		return m.key
	}
	return ""
}

// request sends a request and waits up to d for its reply; while nobody
// listens yet (a worker that has just joined subscribes after its
// acceptance) it asks again. An idempotent request is also asked again
// when an answer is slow (each try waits at most retryAfter): a passive
// subscriber on the subject keeps the server from saying nobody listens.
func (c *Coordinator) request(ctx context.Context, d time.Duration, subj string, data []byte, idempotent bool) (*nats.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		try, cancelTry := ctx, context.CancelFunc(func() {})
		if idempotent {
			try, cancelTry = context.WithTimeout(ctx, retryAfter)
		}
		m, err := c.Conn.RequestWithContext(try, subj, data)
		cancelTry()
		retry := errors.Is(err, nats.ErrNoResponders) || idempotent && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
		if !retry {
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
