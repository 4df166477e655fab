package load

import (
	"sync/atomic"
	"time"
)

// Window follows the answers to the arrivals a run intended within its
// first span: the successful ones counted by when they ended, in steps
// from the run's start, and all of them by the part of the span (of a few
// equal parts) their arrival was intended in, with the median latency of
// the successful ones. Answers to arrivals intended outside the span are
// not its. A sweep's cell judges with one what its target processed (its
// own arrivals' answers, by when they came) and whether a queue grew
// through it (a latency that rises from part to part). Make one with
// NewWindow, set it on the run's Live, and read it after the run.
type Window struct {
	span  time.Duration
	step  time.Duration
	ended []atomic.Int64 // successes by the step they ended in; the last holds those at or after the horizon
	parts []windowPart
}

// windowPart is what one part of a window's span saw.
type windowPart struct {
	ok, failed atomic.Int64
	counts     [coarseBuckets]atomic.Int64 // latencies of the successes
}

// WindowPart is what a window saw of the arrivals intended in one of its
// parts.
type WindowPart struct {
	// OK and Failed count the answers to the part's arrivals.
	OK, Failed int64
	// P50 and P90 are the median and the 90th percentile of the
	// latencies of the successful ones, from the arrival's intended time
	// (1.6 % resolution); 0 without one.
	P50, P90 time.Duration
}

// NewWindow returns a window over the arrivals intended in the first span
// of a run, in parts equal parts (at least 1), counting their successful
// answers by when they ended in steps of step up to horizon from the run's
// start.
func NewWindow(span time.Duration, parts int, step, horizon time.Duration) *Window {
	step = max(step, time.Nanosecond)
	n := max(int((horizon+step-1)/step), 0) + 1
	return &Window{span: span, step: step, ended: make([]atomic.Int64, n), parts: make([]windowPart, max(parts, 1))}
}

// Parts is the number of parts of the window's span.
func (w *Window) Parts() int { return len(w.parts) }

// Part returns what the window saw of the arrivals of part i.
func (w *Window) Part(i int) WindowPart {
	p := &w.parts[i]
	out := WindowPart{OK: p.ok.Load(), Failed: p.failed.Load()}
	var counts [coarseBuckets]int64
	var total int64
	for k := range p.counts {
		counts[k] = p.counts[k].Load()
		total += counts[k]
	}
	if total > 0 {
		out.P50 = time.Duration(quantile(&counts, total, 0.50))
		out.P90 = time.Duration(quantile(&counts, total, 0.90))
	}
	return out
}

// OKBefore returns the successful answers to the window's arrivals that
// ended before d from the run's start, to the step: those of the steps
// that ended by d (an answer is never counted later than it came, but may
// be left out up to a step early).
func (w *Window) OKBefore(d time.Duration) int64 {
	whole := min(int(d/w.step), len(w.ended)-1) // the last step holds the answers after the horizon
	var n int64
	for i := range max(whole, 0) {
		n += w.ended[i].Load()
	}
	return n
}

// done notes an answer that ended at end, latency after its arrival's
// intended time, in a run that started at start.
func (w *Window) done(start, end time.Time, latency time.Duration, ok bool) {
	off := end.Add(-latency).Sub(start)
	if off < 0 || off >= w.span {
		return
	}
	p := &w.parts[int(int64(off)*int64(len(w.parts))/int64(w.span))]
	if !ok {
		p.failed.Add(1)
		return
	}
	p.ok.Add(1)
	p.counts[coarseIndex(int64(latency))].Add(1)
	i := int(end.Sub(start) / w.step)
	w.ended[min(max(i, 0), len(w.ended)-1)].Add(1)
}
