package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/fleet"
	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/load"
)

// target is a real HTTP server that counts what it serves.
func target(t *testing.T) (*httpdrv.Caller, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(ts.Close)
	c, err := httpdrv.New(httpdrv.Options{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, &hits
}

// testWorkers are the worker ids the tests' embedded servers admit.
var testWorkers = []string{"w0", "w1", "w2", "x", "a", "b"}

// bus is where a test's fleet meets: the embedded server (with its NKeys)
// or, as an external server, one without any authentication.
type bus struct {
	e   *fleet.Embedded
	url string
}

func embedded(t *testing.T) *bus { return embeddedFleet(t, "") }

func embeddedFleet(t *testing.T, name string) *bus {
	t.Helper()
	e, err := fleet.Embed(fleet.EmbedOptions{Fleet: name, Workers: testWorkers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return &bus{e: e, url: e.URL()}
}

// open is a NATS server with JetStream that lets anyone in: a shared bus.
func open(t *testing.T) *bus {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	t.Cleanup(srv.Shutdown)
	return &bus{url: srv.ClientURL()}
}

// coord is a connection with the coordinator's rights.
func (b *bus) coord(t *testing.T) *nats.Conn {
	t.Helper()
	if b.e == nil {
		return dial(t, b.url)
	}
	nc, err := b.e.Connect("test coordinator")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// worker is a connection as worker id.
func (b *bus) worker(t *testing.T, id string) *nats.Conn {
	t.Helper()
	opts := fleet.WorkerOptions(id)
	if b.e != nil {
		seed, ok := b.e.WorkerSeed(id)
		if !ok {
			t.Fatalf("no seed for worker %s", id)
		}
		auth, err := fleet.NkeyOption(seed)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, auth)
	}
	return dial(t, b.url, opts...)
}

func dial(t *testing.T, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// startWorkers runs n workers w0… with job, worker i after i×stagger,
// and returns a wait for their ends.
func startWorkers(t *testing.T, b *bus, n int, stagger time.Duration, job fleet.Job) func() []error {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * stagger)
			id := fmt.Sprintf("w%d", i)
			w := &fleet.Worker{Conn: b.worker(t, id), ID: id, Version: "test", Wait: 3 * time.Minute, Job: job}
			errs[i] = w.Run(context.Background())
		})
	}
	return func() []error { wg.Wait(); return errs }
}

// spec is the test's whole load: a closed loop of Requests over Clients.
type spec struct {
	Requests int64 `json:"requests"`
	Clients  int64 `json:"clients"`
	// Secret stands for what a real spec carries (a target's password):
	// nobody on the bus but the workers may read it.
	Secret string `json:"secret,omitempty"`
}

// closedJob runs its share of a spec against c.
func closedJob(c load.Dialer) fleet.Job {
	return func(ctx context.Context, p *fleet.Part) (fleet.Report, error) {
		var sp spec
		if err := json.Unmarshal(p.Spec, &sp); err != nil {
			return fleet.Report{}, err
		}
		part, words, err := load.Spec{Kind: load.KindClosed, Clients: int(sp.Clients), Requests: sp.Requests}.Split(p.Index, p.Count)
		if err != nil {
			return fleet.Report{}, err
		}
		p.Describe(words)
		part.Tap, part.Live = p.Tap, p.Live
		s, err := part.Run(ctx, c)
		return fleet.Report{Sample: s}, err
	}
}

// TestFleetMergesExactly: three workers split a closed loop of 3001
// requests; the coordinator's sum holds exactly the requests the server
// served, and its latency distribution is the one histogram of every
// worker's own record.
func TestFleetMergesExactly(t *testing.T) {
	c, hits := target(t)
	b := embedded(t)
	body, _ := json.Marshal(spec{Requests: 3001, Clients: 4})
	co := &fleet.Coordinator{Conn: b.coord(t), Workers: 3, Spec: body, Version: "test", JoinWait: 3 * time.Minute}
	wait := startWorkers(t, b, 3, 0, closedJob(c))
	out, err := co.Run(context.Background())
	werrs := wait()
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range werrs {
		if e != nil {
			t.Errorf("worker %d: %v", i, e)
		}
	}
	s := out.Sum.Sample(time.Second, "request")
	if s.Requests != 3001 || hits.Load() != 3001 || s.OK != 3001 {
		t.Fatalf("merged %d requests (%d ok), server served %d; want 3001", s.Requests, s.OK, hits.Load())
	}
	var own []string
	var shares int64
	for _, w := range out.Workers {
		if w.Report == nil || w.Tallies != w.Report.Snapshots || w.Lost {
			t.Fatalf("worker %s: report %v, %d tallies", w.ID, w.Report, w.Tallies)
		}
		own = append(own, w.Report.Sample.HDR)
		shares += w.Report.Sample.Requests
		if w.Requests != w.Report.Sample.Requests || w.OK != w.Report.Sample.OK {
			t.Errorf("worker %s: its tallies counted %d requests, %d ok; its report %d, %d", w.ID, w.Requests, w.OK, w.Report.Sample.Requests, w.Report.Sample.OK)
		}
	}
	whole, err := hdr.Merge(own...)
	if err != nil {
		t.Fatal(err)
	}
	if d := hdr.Distribution(whole); d != s.LatencyNs || shares != 3001 {
		t.Errorf("merged latency %+v; the workers' own histograms together %+v (%d requests)", s.LatencyNs, d, shares)
	}
	// every worker started at the agreed time or after it (a timer fires
	// late, never early: how late is the machine's), and the skew is the
	// spread of those starts
	var first, last time.Time
	for _, w := range out.Workers {
		if w.Started.IsZero() || w.Started.Before(out.Agreed) {
			t.Errorf("worker %s started at %v, the agreed start %v: early", w.ID, w.Started, out.Agreed)
			continue
		}
		if first.IsZero() || w.Started.Before(first) {
			first = w.Started
		}
		if w.Started.After(last) {
			last = w.Started
		}
	}
	if out.Agreed.IsZero() || out.StartSkew < 0 || out.StartSkew != last.Sub(first) {
		t.Errorf("agreed start %v, start skew %v; want the spread of the workers' starts %v", out.Agreed, out.StartSkew, last.Sub(first))
	}
	if len(out.Missing()) != 0 || out.Duplicates != 0 || out.Messages == 0 {
		t.Errorf("missing %v, duplicates %d, messages %d", out.Missing(), out.Duplicates, out.Messages)
	}
}

// TestDuplicateTallyCountedOnce publishes a worker's first tally a second
// time under a new message id (past JetStream's deduplication): the
// coordinator still adds it once. The worker's job waits until the replay
// is in the stream before it ends, so the replay comes before the final
// tally whatever the machine's speed (tallies are sealed: the spy cannot
// read which one is the final).
func TestDuplicateTallyCountedOnce(t *testing.T) {
	c, hits := target(t)
	b := embeddedFleet(t, "dup")
	body, _ := json.Marshal(spec{Clients: 1})
	spy := b.coord(t)
	js, err := jetstream.New(spy)
	if err != nil {
		t.Fatal(err)
	}
	var replayed atomic.Int64
	stored := make(chan struct{})
	var once sync.Once
	_, err = spy.Subscribe("tandem.dup.*.snap.*.w0", func(m *nats.Msg) {
		if m.Header.Get("Replayed") != "" {
			return
		}
		once.Do(func() {
			r := nats.NewMsg(m.Subject)
			r.Data = m.Data
			r.Header.Set("Replayed", "1")
			r.Header.Set(jetstream.MsgIDHeader, m.Header.Get(jetstream.MsgIDHeader)+"-again")
			if _, err := js.PublishMsg(context.Background(), r); err != nil {
				t.Errorf("replay: %v", err)
			} else {
				replayed.Add(1)
			}
			close(stored)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	co := &fleet.Coordinator{Conn: b.coord(t), Fleet: "dup", Workers: 1, Spec: body, Version: "test", JoinWait: 3 * time.Minute}
	var wg sync.WaitGroup
	wg.Go(func() {
		w := &fleet.Worker{Conn: b.worker(t, "w0"), Fleet: "dup", ID: "w0", Version: "test", Wait: 3 * time.Minute,
			Job: func(ctx context.Context, p *fleet.Part) (fleet.Report, error) { // 1.5 s: a tally at 1 s, then the last
				s, err := load.Closed{Concurrency: 1, Duration: 1500 * time.Millisecond, Tap: p.Tap, Live: p.Live}.Run(ctx, c)
				select { // the first tally's replay is stored before the final is sent
				case <-stored:
				case <-time.After(20 * time.Second):
					t.Error("no tally was sent within 20 s of the load's end")
				}
				return fleet.Report{Sample: s}, err
			}}
		if err := w.Run(context.Background()); err != nil {
			t.Error(err)
		}
	})
	out, err := co.Run(context.Background())
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	// the worker's own count is exact; the server may also have served
	// what the run's end cut off (neither a failure nor a latency)
	own := out.Workers[0].Report.Sample
	if s := out.Sum.Sample(time.Second, "request"); s.Requests != own.Requests || s.Unfinished != own.Unfinished ||
		own.Requests > hits.Load() || own.Requests+own.Unfinished < hits.Load() || replayed.Load() != 1 || out.Duplicates != 1 {
		t.Fatalf("merged %d requests (%d cut), the worker counted %d (%d cut), the server served %d; %d tallies replayed, %d seen as duplicates",
			s.Requests, s.Unfinished, own.Requests, own.Unfinished, hits.Load(), replayed.Load(), out.Duplicates)
	}
}

// TestLostWorker: a worker that goes silent mid-run (its connection to
// NATS closed once its load runs) is lost, and named, once it has been
// silent for the detector's Lost; by default the run fails with
// ErrWorkerLost, and the others stop with what they measured; with
// ContinueOnLoss the run goes on to its end. The detector's times are
// several heartbeats (500 ms) long, so that a beat a busy machine delays
// does not make the survivor suspect or lost.
func TestLostWorker(t *testing.T) {
	const suspect, lost, lease = 3 * time.Second, 5 * time.Second, 4 * time.Second
	for _, cont := range []bool{false, true} {
		t.Run(fmt.Sprintf("continue=%v", cont), func(t *testing.T) {
			c, _ := target(t)
			b := embedded(t)
			body, _ := json.Marshal(spec{Requests: 1 << 40, Clients: 2})
			var logMu sync.Mutex
			var silence []string // the silences the coordinator declared losses after
			co := &fleet.Coordinator{Conn: b.coord(t), Workers: 2, Spec: body, Version: "test", JoinWait: 3 * time.Minute,
				ContinueOnLoss: cont, Suspect: suspect, Lost: lost, Lease: lease, Log: func(line string) {
					if d, ok := strings.CutPrefix(line, "worker w1 is lost: silent for "); ok {
						logMu.Lock()
						silence = append(silence, d)
						logMu.Unlock()
					}
				}}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			victim := b.worker(t, "w1")
			parts := make(chan *fleet.Part, 1) // the victim's part, once its job runs
			errs := make([]error, 2)
			for i, nc := range []*nats.Conn{b.worker(t, "w0"), victim} {
				wg.Go(func() {
					job := closedJob(c)
					switch {
					case i == 1:
						job = func(ctx context.Context, p *fleet.Part) (fleet.Report, error) {
							parts <- p
							return closedJob(c)(ctx, p)
						}
					case cont: // the survivor ends by itself when the run continues
						job = func(ctx context.Context, p *fleet.Part) (fleet.Report, error) {
							p.Describe("2 s")
							s, err := load.Closed{Concurrency: 1, Duration: 2 * time.Second, Tap: p.Tap, Live: p.Live}.Run(ctx, c)
							return fleet.Report{Sample: s}, err
						}
					}
					w := &fleet.Worker{Conn: nc, ID: fmt.Sprintf("w%d", i), Version: "test", Wait: 3 * time.Minute, Job: job}
					errs[i] = w.Run(ctx)
				})
			}
			silenced := make(chan time.Time, 1)
			go func() { // silence w1 once its load has run a second (two beats)
				defer close(silenced)
				var p *fleet.Part
				select {
				case p = <-parts:
				case <-ctx.Done():
					return
				}
				for st := p.Tap.Started(); st.IsZero() || time.Since(st) < time.Second; st = p.Tap.Started() {
					if ctx.Err() != nil {
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
				victim.Close()
				silenced <- time.Now()
			}()
			out, err := co.Run(ctx)
			wg.Wait()
			at, ok := <-silenced
			if !ok {
				t.Fatalf("w1's load never started (run error %v)", err)
			}
			if cont != (err == nil) || !cont && (!errors.Is(err, fleet.ErrWorkerLost) || !strings.Contains(err.Error(), "w1")) {
				t.Fatalf("continue=%v: run error %v; want nil with continue, else ErrWorkerLost naming w1", cont, err)
			}
			byID := map[string]*fleet.WorkerOutcome{}
			for _, w := range out.Workers {
				byID[w.ID] = w
			}
			lostW, survivor := byID["w1"], byID["w0"]
			if !lostW.Lost || !lostW.Suspected || survivor.Lost || survivor.Report == nil {
				t.Fatalf("w1 lost %v suspected %v; w0 lost %v, report %v", lostW.Lost, lostW.Suspected, survivor.Lost, survivor.Report)
			}
			if !cont && out.Stopped != "worker w1 lost" {
				t.Errorf("stopped: %q; want the lost worker named", out.Stopped)
			}
			// lost only after a silence of Lost (never early): as the
			// coordinator said, and from when it last heard w1 (LostAfter is
			// 0 when that was before the start); and not hung
			logMu.Lock()
			said := slices.Clone(silence)
			logMu.Unlock()
			if d, err := time.ParseDuration(strings.Join(said, "")); len(said) != 1 || err != nil || d < lost {
				// (said to the millisecond: a silence of 5.0004 s reads "5s")
				t.Errorf("the coordinator declared w1 lost after silences %q; want one, longer than %v", said, lost)
			}
			heard := out.Agreed.Add(lostW.LostAfter)
			if lostW.LostAfter < 0 || lostW.LostAfter > 0 && out.Ended.Sub(heard) <= lost {
				t.Errorf("w1 last heard %v after the start, the run ended %v after that; a worker is lost after %v of silence",
					lostW.LostAfter, out.Ended.Sub(heard), lost)
			}
			if d := out.Ended.Sub(at); d > 60*time.Second {
				t.Errorf("the run ended %v after w1 fell silent; a worker is lost after %v of silence", d, lost)
			}
			if s := out.Sum.Sample(time.Second, "request"); s.Requests < survivor.Report.Sample.Requests || s.Requests == 0 {
				t.Errorf("merged %d requests; the survivor alone sent %d", s.Requests, survivor.Report.Sample.Requests)
			} else if lostW.Requests+survivor.Requests != s.Requests || lostW.OK+survivor.OK != s.OK {
				// what is known of the lost worker's load: its tallies
				t.Errorf("merged %d requests, %d ok; the workers' tallies counted %d+%d, %d+%d", s.Requests, s.OK,
					lostW.Requests, survivor.Requests, lostW.OK, survivor.OK)
			}
			if !cont && !errors.Is(errs[0], fleet.ErrStopped) {
				t.Errorf("the survivor's end: %v; want stopped by the coordinator", errs[0])
			}
			if errs[1] == nil {
				t.Error("the silenced worker ended without an error")
			}
		})
	}
}

// TestWorkerStopsWithinLease: a worker whose coordinator vanishes mid-run
// stops its load by itself (its lease runs out), and then no request of
// its load arrives any more. The lease is four heartbeats, so that a
// beat a busy machine delays does not end the run before the coordinator
// is gone.
func TestWorkerStopsWithinLease(t *testing.T) {
	const lease = 2 * time.Second
	c, hits := target(t)
	b := embedded(t)
	body, _ := json.Marshal(spec{Requests: 1 << 40, Clients: 1})
	coConn := b.coord(t)
	co := &fleet.Coordinator{Conn: coConn, Workers: 1, Spec: body, Version: "test", JoinWait: 3 * time.Minute, Lease: lease}
	coDone := make(chan error, 1)
	go func() { _, err := co.Run(context.Background()); coDone <- err }()
	w := &fleet.Worker{Conn: b.worker(t, "w0"), ID: "w0", Version: "test", Wait: 3 * time.Minute, Job: closedJob(c)}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	for deadline := time.Now().Add(30 * time.Second); hits.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no request of the load within 30 s")
		}
	}
	coConn.Close() // the coordinator is gone: no beats, no stop
	select {
	case err := <-done:
		if !errors.Is(err, fleet.ErrStopped) {
			t.Errorf("worker ended with %v; want stopped", err)
		}
	case <-time.After(30 * time.Second): // a hang guard: the lease is 2 s
		t.Fatalf("the worker still runs 30 s after its coordinator vanished; lease %v", lease)
	}
	// its load ended with it: at most the one client's request in flight
	// at the stop is still to reach the server
	n := hits.Load()
	time.Sleep(500 * time.Millisecond)
	if got := hits.Load(); got > n+1 {
		t.Errorf("%d requests arrived after the worker stopped", got-n)
	}
	if err := <-coDone; err == nil {
		t.Error("the coordinator without its connection ended without an error")
	}
}

// TestJoinRefusals: a worker of another version, a second worker of one
// name, and a worker that comes once the run is full are refused.
func TestJoinRefusals(t *testing.T) {
	c, _ := target(t)
	b := embedded(t)
	body, _ := json.Marshal(spec{Requests: 200, Clients: 1})
	co := &fleet.Coordinator{Conn: b.coord(t), Workers: 1, Spec: body, Version: "v1", JoinWait: 3 * time.Minute}
	ctx := context.Background()
	res := make(chan error, 1)
	go func() { _, err := co.Run(ctx); res <- err }()
	other := &fleet.Worker{Conn: b.worker(t, "x"), ID: "x", Version: "v2", Wait: 5 * time.Second, Job: closedJob(c)}
	if err := other.Run(ctx); !errors.Is(err, fleet.ErrRefused) {
		t.Errorf("a worker of another version: %v", err)
	}
	block, running := make(chan struct{}), make(chan struct{})
	first := &fleet.Worker{Conn: b.worker(t, "a"), ID: "a", Version: "v1", Wait: 5 * time.Second,
		Job: func(ctx context.Context, p *fleet.Part) (fleet.Report, error) {
			close(running) // joined, and given its part: the run is full
			<-block
			return closedJob(c)(ctx, p)
		}}
	fr := make(chan error, 1)
	go func() { fr <- first.Run(ctx) }()
	select {
	case <-running:
	case err := <-fr:
		t.Fatalf("the first worker of the right version ended before its job: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the first worker of the right version got no part within 30 s")
	}
	for _, id := range []string{"a", "b"} {
		late := &fleet.Worker{Conn: b.worker(t, id), ID: id, Version: "v1", Wait: 5 * time.Second, Job: closedJob(c)}
		if err := late.Run(ctx); !errors.Is(err, fleet.ErrRefused) {
			t.Errorf("worker %s joining a full run: %v", id, err)
		}
	}
	close(block)
	if err := <-fr; err != nil {
		t.Error(err)
	}
	if err := <-res; err != nil {
		t.Error(err)
	}
}

// TestSessionRunsManyParts: workers joined once run three loads in turn,
// each added up on its own, and exit cleanly when the session closes.
func TestSessionRunsManyParts(t *testing.T) {
	c, hits := target(t)
	b := embedded(t)
	co := &fleet.Coordinator{Conn: b.coord(t), Workers: 2, Version: "test", JoinWait: 3 * time.Minute}
	ctx := context.Background()
	wait := startWorkers(t, b, 2, 0, closedJob(c))
	sess, err := co.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for part, n := range []int64{101, 250, 7} {
		body, _ := json.Marshal(spec{Requests: n, Clients: 2})
		out, err := sess.Run(ctx, body)
		if err != nil {
			t.Fatalf("part %d: %v", part+1, err)
		}
		if s := out.Sum.Sample(time.Second, "request"); s.Requests != n || len(out.Workers) != 2 || len(out.Missing()) != 0 {
			t.Errorf("part %d: merged %d of %d requests, missing %v", part+1, s.Requests, n, out.Missing())
		}
		total += n
	}
	sess.Close()
	for i, e := range wait() {
		if e != nil {
			t.Errorf("worker %d ended with %v; want a clean end when the session closes", i, e)
		}
	}
	if hits.Load() != total {
		t.Errorf("the server served %d; the parts sent %d", hits.Load(), total)
	}
}

// TestSlowStartsAndLateJoins: a worker that joins long before the last
// one keeps its lease (the coordinator beats from the first join), and an
// open loop whose workers take more than a second to get ready adds up
// exactly (the empty tallies of before the start are no loop's). The
// lease is eight heartbeats, so that a beat a busy machine delays does not
// end it; the late worker comes well past it.
func TestSlowStartsAndLateJoins(t *testing.T) {
	const lease = 4 * time.Second
	c, hits := target(t)
	b := embedded(t)
	body, _ := json.Marshal(spec{Requests: 600, Clients: 2})
	co := &fleet.Coordinator{Conn: b.coord(t), Workers: 2, Spec: body, Version: "test", JoinWait: 3 * time.Minute, Lease: lease}
	ctx := context.Background()
	openJob := func(ctx context.Context, p *fleet.Part) (fleet.Report, error) {
		time.Sleep(1500 * time.Millisecond) // a slow warm-up: tallies are taken before the load starts
		p.Describe("open")
		s, err := load.Open{Schedule: load.Shard{Schedule: load.Constant{Rate: 600, Duration: time.Second}, Index: p.Index, Count: p.Count},
			Connections: 1, Tap: p.Tap, Live: p.Live}.Run(ctx, c)
		return fleet.Report{Sample: s}, err
	}
	wait := startWorkers(t, b, 2, lease+2*time.Second, openJob) // w1 comes 6 s after w0: past w0's 4 s lease
	out, err := co.Run(ctx)
	werrs := wait()
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range werrs {
		if e != nil {
			t.Errorf("worker %d: %v", i, e)
		}
	}
	// every arrival of the schedule is accounted for once: answered, cut
	// off by the run's end, or dropped (none is, unless the machine stalls
	// for the 10 s drain)
	// (the tallies carry no drops: each worker's report does)
	s := out.Sum.Sample(time.Second, "request")
	for _, w := range out.Workers {
		if w.Report != nil {
			s.Dropped += w.Report.Sample.Dropped
		}
	}
	if s.Requests+s.Unfinished+s.Dropped != 600 || s.Requests == 0 ||
		hits.Load() < s.Requests || hits.Load() > s.Requests+s.Unfinished || out.Failed() != "" {
		t.Fatalf("merged %d requests, %d cut off, %d dropped of 600 arrivals (server %d); %s", s.Requests, s.Unfinished, s.Dropped, hits.Load(), out.Failed())
	}
}

// The embedded server admits only the NKeys it made for the run, and a
// worker's key only to that worker's subjects.
func TestEmbeddedAdmitsOnlyItsKeys(t *testing.T) {
	b := embedded(t)
	if nc, err := nats.Connect(b.url); err == nil {
		nc.Close()
		t.Fatal("a connection without credentials was admitted")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("without credentials: %v; want an authorization violation", err)
	}
	refused := make(chan string, 8)
	nc := dial(t, b.url, append(fleet.WorkerOptions("w1"), nkey(t, b, "w1"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			refused <- err.Error()
		}
	}))...)
	for _, subj := range []string{"tandem.tandem.r1.snap.1.w0", "tandem.tandem.r1.w.w0.beat", "tandem.tandem.r1.stop", "tandem.tandem.r1.w.w0.clock"} {
		nc.Publish(subj, []byte("forged"))
	}
	for _, subj := range []string{">", "tandem.tandem.r1.w.w0.assign", "_INBOX.>"} {
		nc.Subscribe(subj, func(*nats.Msg) {})
	}
	nc.Flush()
	deadline := time.After(10 * time.Second)
	for n := 0; n < 7; n++ {
		select {
		case <-refused:
		case <-deadline:
			t.Fatalf("%d of 7 of w1's attempts on another's subjects refused", n)
		}
	}
	if err := nc.Publish("tandem.tandem.r1.w.w1.beat", nil); err != nil || nc.Flush() != nil {
		t.Errorf("w1's own heartbeat: %v", err)
	}
	select {
	case why := <-refused:
		t.Errorf("w1's own subject refused: %s", why)
	case <-time.After(200 * time.Millisecond):
	}
}

func nkey(t *testing.T, b *bus, id string) nats.Option {
	t.Helper()
	seed, _ := b.e.WorkerSeed(id)
	o, err := fleet.NkeyOption(seed)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// On a bus anyone may use: a passive listener on every subject neither
// reads the spec's secret nor breaks the run (the coordinator asks again
// when a reply is slow), and tallies forged as a worker fail the run
// without being counted.
func TestSharedBus(t *testing.T) {
	const secret = "Bearer s3cret-token"
	for _, forge := range []bool{false, true} {
		t.Run(fmt.Sprintf("forge=%v", forge), func(t *testing.T) {
			c, hits := target(t)
			b := open(t)
			body, _ := json.Marshal(spec{Clients: 1, Secret: secret})
			spy := dial(t, b.url)
			js, err := jetstream.New(spy)
			if err != nil {
				t.Fatal(err)
			}
			var leaked, forged atomic.Int64
			spy.Subscribe(">", func(m *nats.Msg) {
				if strings.Contains(string(m.Data), "s3cret") {
					leaked.Add(1)
				}
				if forge && strings.Contains(m.Subject, ".snap.1.w0") && m.Header.Get("Forged") == "" {
					f := nats.NewMsg(m.Subject)
					f.Data = []byte(`{"worker":"w0","part":1,"seq":1000,"tally":{}}`)
					f.Header.Set("Forged", "1")
					if _, err := js.PublishMsg(context.Background(), f); err == nil {
						forged.Add(1)
					}
				}
			})
			co := &fleet.Coordinator{Conn: b.coord(t), Workers: 1, Spec: body, Version: "test", JoinWait: 3 * time.Minute}
			var got spec
			var wg sync.WaitGroup
			wg.Go(func() {
				w := &fleet.Worker{Conn: b.worker(t, "w0"), ID: "w0", Version: "test", Wait: 3 * time.Minute,
					Job: func(ctx context.Context, p *fleet.Part) (fleet.Report, error) {
						json.Unmarshal(p.Spec, &got)
						s, err := load.Closed{Concurrency: 1, Duration: 1500 * time.Millisecond, Tap: p.Tap, Live: p.Live}.Run(ctx, c)
						return fleet.Report{Sample: s}, err
					}}
				w.Run(context.Background())
			})
			out, err := co.Run(context.Background())
			wg.Wait()
			if got.Secret != secret {
				t.Errorf("the worker got secret %q; want %q", got.Secret, secret)
			}
			if leaked.Load() != 0 {
				t.Errorf("the listener read the secret in %d messages", leaked.Load())
			}
			if !forge {
				if err != nil || out.Forged != 0 {
					t.Fatalf("with a passive listener: %v (forged %d)", err, out.Forged)
				}
				return
			}
			if !errors.Is(err, fleet.ErrForged) || out == nil || out.Forged == 0 || forged.Load() == 0 {
				t.Fatalf("%d forged tallies sent: run error %v; want ErrForged", forged.Load(), err)
			}
			if s := out.Sum.Sample(time.Second, "request"); s.Requests > hits.Load() {
				t.Errorf("merged %d requests, the server served %d: a forged tally was counted", s.Requests, hits.Load())
			}
		})
	}
}
