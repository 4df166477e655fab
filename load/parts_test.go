package load_test

import (
	"context"
	"maps"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
)

// partOf is the mix of the tests: request i is part i mod 3.
func partOf(i uint64) int { return int(i % 3) }

// failed says which requests fail unsent: every seventh.
func failed(i uint64) bool { return i%7 == 0 }

// mixDialer sends seqDialer's requests in three parts by partOf, failing
// every seventh unsent (status "test:7" on the workers, "request" on the
// event loop).
type mixDialer struct{ seqDialer }

func (d mixDialer) Parts() load.Parts { return load.Parts{N: 3, Of: partOf} }

func (d mixDialer) Dial(ctx context.Context) (load.Conn, error) {
	cn, err := d.seqDialer.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return mixConn{cn}, nil
}

func (d mixDialer) Wire() (load.Wire, bool) { return mixWire{seqWire{d.s.addr}}, true }

type mixConn struct{ load.Conn }

func (c mixConn) Do(ctx context.Context, i uint64, deadline time.Time) load.Result {
	if failed(i) {
		return load.Result{Status: "test:7"}
	}
	return c.Conn.Do(ctx, i, deadline)
}

type mixWire struct{ seqWire }

func (w mixWire) Parts() load.Parts      { return load.Parts{N: 3, Of: partOf} }
func (w mixWire) NewConn() load.WireConn { return load.Serial(mixWireConn{}) }

type mixWireConn struct{ seqWireConn }

func (c mixWireConn) AppendRequest(b []byte, i uint64) ([]byte, error) {
	if failed(i) {
		return b, context.DeadlineExceeded // any error: the request fails unsent
	}
	return c.seqWireConn.AppendRequest(b, i)
}

// Every executor records a mix's parts apart, each exactly what its
// requests did: a part's requests are the numbers of that part the run
// gave, its errors those of them that failed, its ok those the server
// answered; and the parts add up to the run (requests, ok, errors by
// status, unfinished). Its latencies are of its own successful answers.
func TestPartsOfAMix(t *testing.T) {
	const n = 420
	batched := load.Batched{Connections: 2, PerPeriod: 3, Period: 100 * time.Millisecond, Duration: 400 * time.Millisecond}
	cases := []struct {
		name string
		loop bool
		run  func(load.Dialer) (results.Sample, error)
	}{
		{"closed workers", false, func(d load.Dialer) (results.Sample, error) {
			return load.Closed{Concurrency: 4, Requests: n, Engine: load.EngineWorkers}.Run(context.Background(), d)
		}},
		{"closed loop", true, func(d load.Dialer) (results.Sample, error) {
			return load.Closed{Concurrency: 4, Requests: n, Engine: load.EngineLoop}.Run(context.Background(), d)
		}},
		{"open workers", false, func(d load.Dialer) (results.Sample, error) {
			return load.Open{Schedule: load.Constant{Rate: 4000}, Connections: 4, Requests: n, Engine: load.EngineWorkers}.Run(context.Background(), d)
		}},
		{"open loop", true, func(d load.Dialer) (results.Sample, error) {
			return load.Open{Schedule: load.Constant{Rate: 4000}, Connections: 4, Requests: n, Engine: load.EngineLoop}.Run(context.Background(), d)
		}},
		{"batched", false, func(d load.Dialer) (results.Sample, error) { return batched.Run(context.Background(), d) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.loop && runtime.GOOS != "linux" {
				t.Skip("the event loop runs on Linux only")
			}
			srv := newSeqServer(t)
			s, err := tc.run(mixDialer{seqDialer{srv}})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Parts) != 3 {
				t.Fatalf("%d parts, want 3", len(s.Parts))
			}
			// what the server answered, by part; the failed ones by part
			answered := make([]int64, 3)
			for _, num := range srv.numbers() {
				answered[partOf(num)]++
			}
			var sum results.Sample
			sum.Errors = map[string]int64{}
			for k, p := range s.Parts {
				if p.OK != answered[k] {
					t.Errorf("part %d: ok %d, the server answered %d of its requests", k, p.OK, answered[k])
				}
				var failures int64
				for _, c := range p.Errors {
					failures += c
				}
				if p.Requests != p.OK+failures {
					t.Errorf("part %d: %d requests, %d ok and %d failed", k, p.Requests, p.OK, failures)
				}
				if p.OK > 0 && (p.LatencyNs.P50 <= 0 || p.LatencyNs.Min > p.LatencyNs.Max) {
					t.Errorf("part %d: latency %+v", k, p.LatencyNs)
				}
				sum.Requests += p.Requests
				sum.OK += p.OK
				sum.Unfinished += p.Unfinished
				for st, c := range p.Errors {
					sum.Errors[st] += c
				}
			}
			if sum.Requests != s.Requests || sum.OK != s.OK || sum.Unfinished != s.Unfinished || !maps.Equal(sum.Errors, s.Errors) {
				t.Errorf("parts add up to %d requests, %d ok, %d unfinished, errors %v; the run: %d, %d, %d, %v",
					sum.Requests, sum.OK, sum.Unfinished, sum.Errors, s.Requests, s.OK, s.Unfinished, s.Errors)
			}
			if s.Dropped == 0 && s.Unfinished == 0 && tc.name != "batched" {
				// every request 0..n−1 ran: each part holds exactly its numbers
				for k := range 3 {
					var want, fails int64
					for i := range uint64(n) {
						if partOf(i) == k {
							want++
							if failed(i) {
								fails++
							}
						}
					}
					if p := s.Parts[k]; p.Requests != want || p.Requests-p.OK != fails {
						t.Errorf("part %d: %d requests, %d failed; want %d, %d", k, p.Requests, p.Requests-p.OK, want, fails)
					}
				}
			}
		})
	}
}

// stepDialer's requests are flows of two steps: a request to the server,
// then another; the second is not sent when i is a multiple of 5 (as if a
// capture found nothing) and fails with status "capture". It offers no
// Wire: a flow runs on the workers.
type stepDialer struct{ d seqDialer }

func (d stepDialer) Parts() load.Parts { return load.Parts{N: 2} }

func (d stepDialer) Dial(ctx context.Context) (load.Conn, error) {
	cn, err := d.d.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return &stepConn{Conn: cn}, nil
}

type stepConn struct {
	load.Conn
	steps load.StepRecorder
}

func (c *stepConn) RecordSteps(s load.StepRecorder) { c.steps = s }

func (c *stepConn) Do(ctx context.Context, i uint64, deadline time.Time) load.Result {
	sent := time.Now()
	res := c.Conn.Do(ctx, 2*i, deadline)
	c.steps.Step(ctx, 0, deadline, sent, time.Now(), res)
	if i%5 == 0 {
		res = load.Result{Status: "capture"}
		c.steps.Step(ctx, 1, deadline, time.Time{}, time.Time{}, res)
		return res
	}
	sent = time.Now()
	res = c.Conn.Do(ctx, 2*i+1, deadline)
	c.steps.Step(ctx, 1, deadline, sent, time.Now(), res)
	return res
}

// A flow's Conn records each step into its part: a step not sent is a
// failure by its status, counted and never timed; every step sent is
// counted once; the run itself counts the iterations.
func TestStepsOfAFlow(t *testing.T) {
	srv := newSeqServer(t)
	const n = 200
	s, err := load.Closed{Concurrency: 3, Requests: n}.Run(context.Background(), stepDialer{seqDialer{srv}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != n || s.OK != n-n/5 || s.Errors["capture"] != n/5 || len(s.Parts) != 2 {
		t.Fatalf("run: %d requests, %d ok, errors %v, %d parts; want %d, %d, capture %d, 2", s.Requests, s.OK, s.Errors, len(s.Parts), n, n-n/5, n/5)
	}
	first, second := s.Parts[0], s.Parts[1]
	if first.Requests != n || first.OK != n || len(first.Errors) != 0 {
		t.Errorf("step 1: %d requests, %d ok, errors %v; want %d ok", first.Requests, first.OK, first.Errors, n)
	}
	if second.Requests != n || second.OK != n-n/5 || second.Errors["capture"] != n/5 {
		t.Errorf("step 2: %d requests, %d ok, errors %v; want %d, %d ok, capture %d", second.Requests, second.OK, second.Errors, n, n-n/5, n/5)
	}
	if got := int64(len(srv.numbers())); got != first.OK+second.OK {
		t.Errorf("the server answered %d; the steps say %d ok", got, first.OK+second.OK)
	}
	h := second.LatencyNs
	if h.P50 <= 0 || h.Max < h.P50 {
		t.Errorf("step 2's latency %+v", h)
	}
}

// cutStepDialer's flows wait in their first step for the run's end, then
// skip the second, as a flow does when a step fails; started counts the
// passes begun.
type cutStepDialer struct{ started *atomic.Int64 }

func (cutStepDialer) Parts() load.Parts { return load.Parts{N: 2} }

func (d cutStepDialer) Dial(context.Context) (load.Conn, error) {
	return &cutStepConn{started: d.started}, nil
}

type cutStepConn struct {
	steps   load.StepRecorder
	started *atomic.Int64
}

func (c *cutStepConn) RecordSteps(s load.StepRecorder) { c.steps = s }
func (c *cutStepConn) Close() error                    { return nil }

func (c *cutStepConn) Do(ctx context.Context, _ uint64, deadline time.Time) load.Result {
	c.started.Add(1)
	sent := time.Now()
	<-ctx.Done()
	res := load.Result{Status: "timeout"}
	c.steps.Step(ctx, 0, deadline, sent, time.Now(), res)
	c.steps.Step(ctx, 1, deadline, time.Time{}, time.Time{}, load.Result{Status: "skipped"})
	return res
}

// A step the run's end cut off is unfinished, and the steps its pass then
// did not send are not counted at all: neither failures nor requests.
// (Every pass begun is cut off; a machine too busy to begin one before the
// end begins fewer, which the counts follow.)
func TestStepsCutOffByTheEnd(t *testing.T) {
	var started atomic.Int64
	s, err := load.Closed{Concurrency: 2, Duration: 300 * time.Millisecond}.Run(context.Background(), cutStepDialer{&started})
	if err != nil {
		t.Fatal(err)
	}
	n := started.Load()
	if n == 0 {
		t.Fatal("no pass began within the run's 300 ms")
	}
	if s.Requests != 0 || s.Unfinished != n || len(s.Parts) != 2 {
		t.Fatalf("run: %d requests, %d unfinished, %d parts; want the %d passes begun unfinished", s.Requests, s.Unfinished, len(s.Parts), n)
	}
	if p := s.Parts[0]; p.Requests != 0 || p.Unfinished != n {
		t.Errorf("step 1: %d requests, %d unfinished; want %d unfinished", p.Requests, p.Unfinished, n)
	}
	if p := s.Parts[1]; p.Requests != 0 || p.Unfinished != 0 || len(p.Errors) != 0 {
		t.Errorf("step 2: %d requests, %d unfinished, errors %v; want nothing counted", p.Requests, p.Unfinished, p.Errors)
	}
}
