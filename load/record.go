package load

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/results"
)

// recorder is one worker's private record of its requests; recorders are
// merged when the run ends, so recording takes no lock. Histograms are
// created lazily, so a recorder costs little until it records.
type recorder struct {
	latency, service, lag, first *hdrhistogram.Histogram
	think                        *hdrhistogram.Histogram // closed loops on the event loop
	requests, ok, units          int64
	cut                          int64 // sent, and cut off by the run's end
	lastSent                     time.Time
	errors                       map[string]int64
	series                       *series
	// tap, in a tapped run, is the copy a Tap takes (see Tap).
	tap *tapped
	// parts, in a run whose requests fall into parts, records each apart
	// (see Parts).
	parts *partRecs
}

// newRecorder returns a recorder. In a closed loop latency and service time
// are the same measurement, so only open loops keep a second histogram.
func newRecorder(open bool, s *series) *recorder {
	r := &recorder{service: hdr.New(), errors: map[string]int64{}, series: s}
	r.latency = r.service
	if open {
		r.latency, r.lag = hdr.New(), hdr.New()
	}
	return r
}

// record notes one request: its intended and actual send times and its end.
// Only requests recorded count as issued in the series, as in the sample.
// Latency and service time are of successful answers only: a failure is
// counted by its status, never timed, so failing fast cannot look fast.
// Schedule lag, the generator's own lateness, counts every request sent.
func (r *recorder) record(intended, sent, end time.Time, res Result) {
	r.requests++
	if sent.After(r.lastSent) {
		r.lastSent = sent
	}
	ok := res.Status == ""
	lat := end.Sub(intended)
	if ok {
		r.service.RecordValue(hdr.Clamp(int64(end.Sub(sent))))
	}
	if r.lag != nil {
		if ok {
			r.latency.RecordValue(hdr.Clamp(int64(lat)))
		}
		r.lag.RecordValue(hdr.Clamp(int64(sent.Sub(intended))))
	}
	if res.First > 0 {
		if r.first == nil {
			r.first = hdr.New()
		}
		r.first.RecordValue(hdr.Clamp(int64(res.First)))
	}
	if ok {
		r.ok++
		r.units += res.Units
	} else {
		r.errors[res.Status]++
	}
	if r.series != nil {
		r.series.issue(sent)
		r.series.done(sent, end, lat, ok)
	}
	if r.tap != nil {
		r.tap.mu.Lock()
		r.tap.rec.record(intended, sent, end, res)
		r.tap.mu.Unlock()
	}
}

// recordCut notes a request that was sent and that the run's end cut off:
// neither a failure nor a latency, but not hidden either.
func (r *recorder) recordCut() {
	r.cut++
	if r.tap != nil {
		r.tap.mu.Lock()
		r.tap.rec.cut++
		r.tap.mu.Unlock()
	}
}

// recordThink notes the time from an answer to the next request on its
// connection.
func (r *recorder) recordThink(d time.Duration) {
	if r.think != nil {
		r.think.RecordValue(hdr.Clamp(int64(d)))
	}
	if r.tap != nil {
		r.tap.mu.Lock()
		r.tap.rec.recordThink(d)
		r.tap.mu.Unlock()
	}
}

func (r *recorder) merge(o *recorder) {
	r.service.Merge(o.service)
	if o.think != nil {
		if r.think == nil {
			r.think = hdr.New()
		}
		r.think.Merge(o.think)
	}
	if r.lag != nil && o.lag != nil {
		r.latency.Merge(o.latency)
		r.lag.Merge(o.lag)
	}
	if o.first != nil {
		if r.first == nil {
			r.first = hdr.New()
		}
		r.first.Merge(o.first)
	}
	r.requests += o.requests
	r.cut += o.cut
	if o.lastSent.After(r.lastSent) {
		r.lastSent = o.lastSent
	}
	r.ok += o.ok
	r.units += o.units
	for k, v := range o.errors {
		r.errors[k] += v
	}
	r.mergeParts(o)
}

// sample turns a merged record into the results form. sendWindow is the
// time over which requests were sent, for the achieved rate.
func (r *recorder) sample(elapsed, sendWindow time.Duration, unit string, dropped int64, offered float64) results.Sample {
	s := results.Sample{
		Requests: r.requests, OK: r.ok, Errors: r.errors, DurationNs: int64(elapsed), Unit: unit,
		LatencyNs: hdr.Distribution(r.latency), ServiceTimeNs: hdr.Distribution(r.service), Dropped: dropped, Unfinished: r.cut,
		OfferedRate: offered,
	}
	if r.lag != nil {
		d := hdr.Distribution(r.lag)
		s.ScheduleLagNs = &d
	}
	if r.first != nil {
		d := hdr.Distribution(r.first)
		s.FirstMessageNs = &d
	}
	if r.think != nil && r.think.TotalCount() > 0 {
		d := hdr.Distribution(r.think)
		s.ThinkTimeNs = &d
	}
	if secs := elapsed.Seconds(); secs > 0 {
		s.Throughput = float64(r.ok) / secs
		s.UnitsPerS = float64(r.units) / secs
	}
	if secs := sendWindow.Seconds(); secs > 0 {
		s.AchievedRate = float64(r.requests) / secs
	}
	if r.series != nil {
		s.Series = r.series.rows()
	}
	if enc, err := hdr.Encode(r.latency); err == nil {
		s.HDR = enc
	}
	if r.parts != nil {
		s.Parts = make([]results.Sample, len(r.parts.recs))
		for k, p := range r.parts.recs {
			s.Parts[k] = p.sample(elapsed, sendWindow, unit, 0, 0)
		}
	}
	return s
}
