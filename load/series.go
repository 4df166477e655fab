package load

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tandem-bench/tandem/results"
)

// coarse is a lock-free log-linear histogram: 64 sub-buckets per power of
// two (relative error under 1.6 %), values up to 2^42 ns (73 minutes). It
// serves the per-second series, where many workers record into one second.
const (
	coarseSub     = 64
	coarseMaxBits = 42
	coarseBuckets = 2*coarseSub + (coarseMaxBits-7)*coarseSub
)

func coarseIndex(v int64) int {
	if v < 2*coarseSub {
		return int(max(v, 0))
	}
	if v >= 1<<coarseMaxBits {
		v = 1<<coarseMaxBits - 1
	}
	shift := bits.Len64(uint64(v)) - 7
	return 2*coarseSub + (shift-1)*coarseSub + int(v>>shift) - coarseSub
}

// coarseValue is the middle of bucket i.
func coarseValue(i int) int64 {
	if i < 2*coarseSub {
		return int64(i)
	}
	shift := (i-2*coarseSub)/coarseSub + 1
	mant := int64((i-2*coarseSub)%coarseSub + coarseSub)
	return mant<<shift + (1<<shift)/2
}

// slot is one second of the series.
type slot struct {
	sec                 atomic.Int64
	issued, ok, errored atomic.Int64
	counts              [coarseBuckets]atomic.Int64
}

// series records per-second counts and latency percentiles for the whole
// run in constant memory: a ring of four slots, each finalised into one
// results.Second when its second is reused or the run ends.
type series struct {
	start time.Time
	mu    sync.Mutex
	ring  [4]slot
	out   []results.Second
	// tapped, once a Tap follows the series, holds the seconds finished
	// since it last took them, with their buckets.
	tapped []SecondTally
	tapOn  bool
	// fine, if set, counts the answers by when they ended, finer.
	fine *Timeline
	// win, if set, follows the answers to the arrivals of a window.
	win *Window
}

// tap makes the series keep each finished second for a Tap.
func (s *series) tap() {
	s.mu.Lock()
	s.tapOn = true
	s.mu.Unlock()
}

// takeTapped returns the seconds finished since the last call.
func (s *series) takeTapped() []SecondTally {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.tapped
	s.tapped = nil
	return out
}

func newSeries(start time.Time) *series {
	s := &series{start: start}
	for i := range s.ring {
		s.ring[i].sec.Store(-1)
	}
	return s
}

// at returns the slot for the second of t, rolling it over if it still
// holds an older second.
func (s *series) at(t time.Time) *slot {
	sec := int64(t.Sub(s.start) / time.Second)
	if sec < 0 {
		sec = 0
	}
	sl := &s.ring[sec%int64(len(s.ring))]
	if sl.sec.Load() == sec {
		return sl
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := sl.sec.Load(); old != sec {
		if old >= 0 {
			s.finalize(sl)
		}
		sl.sec.Store(sec)
	}
	return sl
}

func (s *series) issue(t time.Time) { s.at(t).issued.Add(1) }

// done notes an answer at t to a request sent at sent; the second's
// percentiles are of successful answers only.
func (s *series) done(sent, t time.Time, latency time.Duration, ok bool) {
	if s.fine != nil {
		s.fine.done(sent, t, ok)
	}
	if s.win != nil {
		s.win.done(s.start, t, latency, ok)
	}
	sl := s.at(t)
	if !ok {
		sl.errored.Add(1)
		return
	}
	sl.ok.Add(1)
	sl.counts[coarseIndex(int64(latency))].Add(1)
}

// finalize turns a slot into a row and empties it; s.mu is held.
func (s *series) finalize(sl *slot) {
	row := results.Second{T: sl.sec.Load(), Issued: sl.issued.Swap(0), OK: sl.ok.Swap(0), Errors: sl.errored.Swap(0)}
	var counts [coarseBuckets]int64
	var total int64
	for i := range sl.counts {
		counts[i] = sl.counts[i].Swap(0)
		total += counts[i]
	}
	if total > 0 {
		row.P50Ns = quantile(&counts, total, 0.50)
		row.P99Ns = quantile(&counts, total, 0.99)
	}
	s.out = append(s.out, row)
	if s.tapOn {
		st := SecondTally{T: row.T, Issued: row.Issued, OK: row.OK, Errors: row.Errors}
		for i, c := range counts {
			if c > 0 {
				st.Buckets = append(st.Buckets, [2]int64{int64(i), c})
			}
		}
		s.tapped = append(s.tapped, st)
	}
}

func quantile(counts *[coarseBuckets]int64, total int64, q float64) int64 {
	rank := int64(q*float64(total) + 0.5)
	rank = min(max(rank, 1), total)
	var seen int64
	for i, c := range counts {
		seen += c
		if seen >= rank {
			return coarseValue(i)
		}
	}
	return 0
}

// peek reads second sec while the run goes on, without finalising it:
// false when the ring no longer (or does not yet) hold it.
func (s *series) peek(sec int64) (results.Second, bool) {
	if sec < 0 {
		return results.Second{}, false
	}
	sl := &s.ring[sec%int64(len(s.ring))]
	if sl.sec.Load() != sec {
		return results.Second{}, false
	}
	row := results.Second{T: sec, Issued: sl.issued.Load(), OK: sl.ok.Load(), Errors: sl.errored.Load()}
	var counts [coarseBuckets]int64
	var total int64
	for i := range sl.counts {
		counts[i] = sl.counts[i].Load()
		total += counts[i]
	}
	if total > 0 {
		row.P50Ns = quantile(&counts, total, 0.50)
		row.P99Ns = quantile(&counts, total, 0.99)
	}
	return row, true
}

// rows finalises every slot and returns the series in time order.
func (s *series) rows() []results.Second {
	s.mu.Lock()
	defer s.mu.Unlock()
	order := make([]*slot, 0, len(s.ring))
	for i := range s.ring {
		if s.ring[i].sec.Load() >= 0 {
			order = append(order, &s.ring[i])
		}
	}
	for len(order) > 0 {
		first := 0
		for i, sl := range order {
			if sl.sec.Load() < order[first].sec.Load() {
				first = i
			}
		}
		s.finalize(order[first])
		order[first].sec.Store(-1)
		order = append(order[:first], order[first+1:]...)
	}
	out := s.out
	// a straggler may have reopened an older second: merge rows by second
	merged := out[:0]
	for _, r := range out {
		if n := len(merged); n > 0 && merged[n-1].T == r.T {
			m := &merged[n-1]
			m.Issued, m.OK, m.Errors = m.Issued+r.Issued, m.OK+r.OK, m.Errors+r.Errors
			m.P50Ns, m.P99Ns = max(m.P50Ns, r.P50Ns), max(m.P99Ns, r.P99Ns)
			continue
		}
		merged = append(merged, r)
	}
	return merged
}
