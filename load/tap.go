package load

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/results"
)

// Tally is a mergeable record of requests: the counts, every histogram in
// HdrHistogram's encoding, and the finished seconds of the per-second
// series with their latency buckets. The tallies a run's parts took (see
// Tap) add up (see Sum) to the tally of the whole, whatever machine each
// part ran on: nothing in it is a percentile.
type Tally struct {
	// Open says the run was an open or batched loop, whose latency counts
	// from the intended send (else latency is service time).
	Open     bool  `json:"open,omitempty"`
	Requests int64 `json:"requests,omitempty"`
	// Unfinished counts requests sent that the run's end cut off.
	Unfinished int64            `json:"unfinished,omitempty"`
	OK         int64            `json:"ok,omitempty"`
	Units      int64            `json:"units,omitempty"`
	Errors     map[string]int64 `json:"errors,omitempty"`
	// The histograms (V2 compressed, base64), empty when nothing was
	// recorded: latency, service time, schedule lag, time to the first
	// message of a stream, think time.
	Latency string `json:"latency,omitempty"`
	Service string `json:"service,omitempty"`
	Lag     string `json:"lag,omitempty"`
	First   string `json:"first,omitempty"`
	Think   string `json:"think,omitempty"`
	// Seconds are the seconds of the series finished since the last tally.
	Seconds []SecondTally `json:"seconds,omitempty"`
}

// SecondTally is one second of a run's series, mergeable: the counts and
// the successful answers' latencies in the series' buckets.
type SecondTally struct {
	T      int64 `json:"t"`
	Issued int64 `json:"issued,omitempty"`
	OK     int64 `json:"ok,omitempty"`
	Errors int64 `json:"errors,omitempty"`
	// Buckets are (bucket, count) pairs of latency, in bucket order.
	Buckets [][2]int64 `json:"buckets,omitempty"`
}

// Tap lets a distributed worker start a run at an agreed time and take
// what the run records while it goes. Set it on an executor (Closed, Open,
// Batched); one Tap serves one run. While tapped, each connection records
// a second copy of every request under a lock of its own, which Take
// empties: the run's own sample is unchanged.
type Tap struct {
	// Ready, if set, is called once every connection is open; it returns
	// the time the run is to start (the run sleeps until then) or an
	// error that aborts the run.
	Ready func(ctx context.Context) (time.Time, error)

	mu      sync.Mutex
	recs    []*recorder
	series  *series
	started time.Time
	acc     *recorder
}

// Started is when the run's clock started, zero before.
func (t *Tap) Started() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.started
}

// begin waits for the agreed start once the connections are open (t may
// be nil: start now) and returns the run's start.
func (t *Tap) begin(ctx context.Context) (time.Time, error) {
	if t == nil || t.Ready == nil {
		return time.Now(), nil
	}
	at, err := t.Ready(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("load: start: %w", err)
	}
	if err := waitUntil(ctx, at); err != nil {
		return time.Time{}, err
	}
	return time.Now(), nil
}

// waitUntil sleeps until at: on a timer until a millisecond before, then
// yielding, so that workers that agreed on at start within a fraction of
// a millisecond of it.
func waitUntil(ctx context.Context, at time.Time) error {
	if d := time.Until(at) - time.Millisecond; d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
	for time.Now().Before(at) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(20 * time.Microsecond)
	}
	return nil
}

// attach follows a run's recorders and series from its start (t may be nil).
func (t *Tap) attach(start time.Time, open bool, s *series, recs ...*recorder) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started, t.series, t.recs = start, s, recs
	t.acc = newRecorder(open, nil)
	s.tap()
	for _, r := range recs {
		r.tap = &tapped{rec: newRecorder(open, nil)}
		if r.think != nil {
			r.tap.rec.think = hdr.New()
		}
	}
}

// tapped is a connection's copy of what it recorded since the last Take.
type tapped struct {
	mu  sync.Mutex
	rec *recorder
}

// Take returns what the run recorded since the last Take (or its start)
// and the seconds of its series finished meanwhile; after the run has
// returned, the rest of it. Before the run starts it is an empty Tally.
func (t *Tap) Take() (Tally, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.acc == nil {
		return Tally{}, nil
	}
	for _, r := range t.recs {
		r.tap.mu.Lock()
		t.acc.merge(r.tap.rec)
		r.tap.rec.reset()
		r.tap.mu.Unlock()
	}
	tl, err := t.acc.tally()
	if err != nil {
		return Tally{}, err // kept: the next Take has it
	}
	t.acc.reset()
	tl.Seconds = t.series.takeTapped()
	return tl, nil
}

// reset empties a recorder, keeping its histograms for reuse.
func (r *recorder) reset() {
	for _, h := range []*hdrhistogram.Histogram{r.latency, r.service, r.lag, r.first, r.think} {
		if h != nil {
			h.Reset()
		}
	}
	r.requests, r.cut, r.ok, r.units, r.lastSent = 0, 0, 0, 0, time.Time{}
	clear(r.errors)
}

// tally encodes what r recorded.
func (r *recorder) tally() (Tally, error) {
	t := Tally{Open: r.lag != nil, Requests: r.requests, Unfinished: r.cut, OK: r.ok, Units: r.units}
	if len(r.errors) > 0 {
		t.Errors = maps.Clone(r.errors)
	}
	for _, f := range []struct {
		h   *hdrhistogram.Histogram
		out *string
	}{{r.latency, &t.Latency}, {r.service, &t.Service}, {r.lag, &t.Lag}, {r.first, &t.First}, {r.think, &t.Think}} {
		if f.h == nil || f.h.TotalCount() == 0 || !t.Open && f.out == &t.Latency {
			continue
		}
		enc, err := hdr.Encode(f.h)
		if err != nil {
			return Tally{}, err
		}
		*f.out = enc
	}
	return t, nil
}

// Sum adds up the tallies of a run's parts. The zero Sum is empty.
type Sum struct {
	rec     *recorder
	seconds map[int64]*secondSum
}

type secondSum struct {
	issued, ok, errors int64
	counts             [coarseBuckets]int64
}

// Add adds a tally; a malformed one, or one of the other kind of loop
// than the tallies before it, is an error and adds nothing.
func (s *Sum) Add(t Tally) error {
	if t.empty() {
		return nil // nothing recorded (a run that had not started): of no kind
	}
	if s.rec != nil && t.Open != (s.rec.lag != nil) {
		return errors.New("load: the tallies of an open and a closed loop do not add up")
	}
	if t.Requests < 0 || t.Unfinished < 0 || t.OK < 0 || t.Units < 0 || t.OK > t.Requests {
		return fmt.Errorf("load: a tally of %d requests, %d cut, %d ok, %d units: not counts", t.Requests, t.Unfinished, t.OK, t.Units)
	}
	for status, n := range t.Errors {
		if n < 0 {
			return fmt.Errorf("load: %d errors %q: not a count", n, status)
		}
	}
	part := newRecorder(t.Open, nil)
	for _, f := range []struct {
		enc string
		h   **hdrhistogram.Histogram
	}{{t.Service, &part.service}, {t.Latency, &part.latency}, {t.Lag, &part.lag}, {t.First, &part.first}, {t.Think, &part.think}} {
		if f.enc == "" || f.h == &part.latency && !t.Open {
			continue
		}
		h, err := hdr.Decode(f.enc)
		if err != nil {
			return err
		}
		*f.h = h
	}
	if !t.Open {
		part.latency = part.service // a closed loop's latency is its service time
	}
	for _, sec := range t.Seconds {
		if sec.T < 0 || sec.Issued < 0 || sec.OK < 0 || sec.Errors < 0 {
			return fmt.Errorf("load: second %d: not counts", sec.T)
		}
		for _, b := range sec.Buckets {
			if b[0] < 0 || b[0] >= coarseBuckets || b[1] < 0 {
				return fmt.Errorf("load: second %d: bucket %d: out of range", sec.T, b[0])
			}
		}
	}
	part.requests, part.cut, part.ok, part.units = t.Requests, t.Unfinished, t.OK, t.Units
	maps.Copy(part.errors, t.Errors)
	if s.rec == nil {
		s.rec = newRecorder(t.Open, nil)
		s.seconds = map[int64]*secondSum{}
	}
	s.rec.merge(part)
	for _, sec := range t.Seconds {
		ss := s.seconds[sec.T]
		if ss == nil {
			ss = &secondSum{}
			s.seconds[sec.T] = ss
		}
		ss.issued += sec.Issued
		ss.ok += sec.OK
		ss.errors += sec.Errors
		for _, b := range sec.Buckets {
			ss.counts[b[0]] += b[1]
		}
	}
	return nil
}

// empty says the tally holds nothing.
func (t Tally) empty() bool {
	return t.Requests == 0 && t.Unfinished == 0 && t.OK == 0 && t.Units == 0 && len(t.Errors) == 0 && len(t.Seconds) == 0 &&
		t.Latency == "" && t.Service == "" && t.Lag == "" && t.First == "" && t.Think == ""
}

// Requests is how many requests the tallies added so far recorded.
func (s *Sum) Requests() int64 {
	if s.rec == nil {
		return 0
	}
	return s.rec.requests
}

// Sample is the sum in the results form, as one machine's run of the
// whole would have written it: elapsed is the run's length, unit its unit
// of work. The rates (offered, achieved), drops and throughput over
// elapsed are the caller's to set where the parts say more.
func (s *Sum) Sample(elapsed time.Duration, unit string) results.Sample {
	if s.rec == nil {
		s.rec = newRecorder(false, nil)
	}
	out := s.rec.sample(elapsed, elapsed, unit, 0, 0)
	keys := make([]int64, 0, len(s.seconds))
	for k := range s.seconds {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		ss := s.seconds[k]
		row := results.Second{T: k, Issued: ss.issued, OK: ss.ok, Errors: ss.errors}
		var n int64
		for _, c := range ss.counts {
			n += c
		}
		if n > 0 {
			row.P50Ns = quantile(&ss.counts, n, 0.50)
			row.P99Ns = quantile(&ss.counts, n, 0.99)
		}
		out.Series = append(out.Series, row)
	}
	return out
}
