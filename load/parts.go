package load

import (
	"context"
	"time"
)

// Parts divide a run's requests into parts that the run records apart as
// well, each into a Sample of its own (Sample.Parts, in order), beside the
// whole run's: the calls of a mix, where request i is one call and which
// one is a function of i alone (Of), or the steps of a flow, where every
// request is its steps in turn and the Conn records each (StepConn). A
// part's sample counts what its requests did exactly as the run's counts
// its own (a failure by its status, never timed; one the run's end cut off
// as unfinished), so a mix's parts add up to the run: requests, ok, errors
// by status, unfinished. Arrivals an open or batched loop dropped belong to
// the run alone.
type Parts struct {
	// N is the number of parts.
	N int
	// Of, for a mix, is request i's part, from 0 to N − 1; nil for a flow.
	Of func(i uint64) int
}

// Parted is a Dialer, or a Wire, whose requests fall into parts.
type Parted interface {
	Parts() Parts
}

// StepConn is a Conn whose every request is several steps (a flow's
// iteration): before its first request the run gives it the StepRecorder
// its steps are recorded by.
type StepConn interface {
	Conn
	RecordSteps(StepRecorder)
}

// StepRecorder records the steps of a StepConn's requests, each into its part's
// sample like a request of its own: sent and end bound it; ctx and
// deadline are those Do was given, so that a step the run's end cut off is
// unfinished, not a failure. A step that was not sent (an earlier step
// failed) is recorded with sent and end zero: a failure by its status,
// unless the run had ended (ctx done), when it is not counted at all. It
// is used by the Conn's worker alone.
type StepRecorder interface {
	Step(ctx context.Context, part int, deadline, sent, end time.Time, res Result)
}

// partsOf is what d says of its parts, if anything.
func partsOf(d any) (Parts, bool) {
	if p, ok := d.(Parted); ok {
		if ps := p.Parts(); ps.N > 0 {
			return ps, true
		}
	}
	return Parts{}, false
}

// split makes r record each part apart too.
func (r *recorder) split(ps Parts, open bool) {
	r.parts = &partRecs{of: ps.Of, recs: make([]*recorder, ps.N)}
	for k := range r.parts.recs {
		r.parts.recs[k] = newRecorder(open, nil)
	}
}

// partRecs are a recorder's records of its parts.
type partRecs struct {
	of   func(uint64) int
	recs []*recorder
}

// partOf is the record of request seq's part, or nil (no mix, or a part
// out of range).
func (r *recorder) partOf(seq uint64) *recorder {
	if r.parts == nil || r.parts.of == nil {
		return nil
	}
	if k := r.parts.of(seq); k >= 0 && k < len(r.parts.recs) {
		return r.parts.recs[k]
	}
	return nil
}

// recordReq records request seq, and into its part's record too.
func (r *recorder) recordReq(seq uint64, intended, sent, end time.Time, res Result) {
	r.record(intended, sent, end, res)
	if p := r.partOf(seq); p != nil {
		p.record(intended, sent, end, res)
	}
}

// cutReq counts request seq as cut off, and in its part's record too.
func (r *recorder) cutReq(seq uint64) {
	r.recordCut()
	if p := r.partOf(seq); p != nil {
		p.recordCut()
	}
}

// Step records one step of a flow's request into its part (StepRecorder).
func (r *recorder) Step(ctx context.Context, part int, deadline, sent, end time.Time, res Result) {
	if r.parts == nil || part < 0 || part >= len(r.parts.recs) {
		return
	}
	p := r.parts.recs[part]
	switch {
	case sent.IsZero() && ctx.Err() != nil:
		// not sent because the run had ended (an earlier step was cut
		// off): neither the target's failure nor a request
	case sent.IsZero():
		p.requests++ // not sent: a failure by its status, counted, never timed
		p.errors[res.Status]++
	case cutOff(ctx, deadline, end, res):
		p.recordCut()
	default:
		p.record(sent, sent, end, res)
	}
}

// mergeParts adds o's part records to r's.
func (r *recorder) mergeParts(o *recorder) {
	if r.parts == nil || o.parts == nil {
		return
	}
	for k, p := range o.parts.recs {
		r.parts.recs[k].merge(p)
	}
}
