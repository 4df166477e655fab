package load

import (
	"sync/atomic"
	"time"
)

// Timeline counts a run's answers by when they ended, successes and
// failures apart, in steps of Step from the run's start: finer than the
// per-second series, for telling when a fault began to show in the load
// and when the load recovered from it. It also counts the successful
// answers by when their request was sent, for telling when a target
// answered again: a request sent after a restart and answered was
// answered by the new process, where an answer read after it may be the
// old one's. Make one with NewTimeline, set it on the run's Live, and
// read it while the run goes or after it.
type Timeline struct {
	step    time.Duration
	start   atomic.Int64 // unix ns of the run's start; 0 before
	started chan struct{}
	ok      []atomic.Int64
	errs    []atomic.Int64
	okSent  []atomic.Int64 // successes by the step their request was sent in
}

// NewTimeline returns a timeline of steps of step covering span from the
// run's start; answers after span count in its last step.
func NewTimeline(step, span time.Duration) *Timeline {
	n := max(int(span/step)+1, 1)
	return &Timeline{step: step, started: make(chan struct{}), ok: make([]atomic.Int64, n), errs: make([]atomic.Int64, n),
		okSent: make([]atomic.Int64, n)}
}

// begin marks the run's start (t may be nil).
func (t *Timeline) begin(start time.Time) {
	if t == nil || !t.start.CompareAndSwap(0, start.UnixNano()) {
		return
	}
	close(t.started)
}

// Started is closed once the run has started.
func (t *Timeline) Started() <-chan struct{} { return t.started }

// Start is the run's start, zero before it.
func (t *Timeline) Start() time.Time {
	ns := t.start.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// Step is the timeline's resolution.
func (t *Timeline) Step() time.Duration { return t.step }

// Len is the number of steps.
func (t *Timeline) Len() int { return len(t.ok) }

// At returns the successful and failed answers that ended in step i.
func (t *Timeline) At(i int) (ok, failed int64) { return t.ok[i].Load(), t.errs[i].Load() }

// OKSentIn returns the successful answers to the requests sent in step i
// (whenever they ended).
func (t *Timeline) OKSentIn(i int) int64 { return t.okSent[i].Load() }

// index is the step of t.
func (t *Timeline) index(at time.Time) int {
	i := int((at.UnixNano() - t.start.Load()) / int64(t.step))
	return min(max(i, 0), len(t.ok)-1)
}

// done counts an answer to a request sent at sent that ended at end.
func (t *Timeline) done(sent, end time.Time, ok bool) {
	i := t.index(end)
	if ok {
		t.ok[i].Add(1)
		t.okSent[t.index(sent)].Add(1)
	} else {
		t.errs[i].Add(1)
	}
}
