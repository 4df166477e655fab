package load

import (
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tandem-bench/tandem/results"
)

// Histogram bounds, in nanoseconds: 1 ns to 1 h at 3 significant figures.
// A value reads back exactly below 2,048 ns and within 0.1 % above (buckets
// are at most 1/1024 of their value wide). A lowest discernible value of
// 1 µs would make every bucket below 1 ms 512 ns wide: 10 µs would read
// back 2.4 % high, and loopback round trips live there.
const (
	histLowest  = 1
	histHighest = int64(time.Hour)
	histSigFigs = 3
)

// NewHistogram returns an empty latency histogram with tandem's bounds.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histSigFigs)
}

func clamp(ns int64) int64 {
	switch {
	case ns < 1:
		return 1
	case ns > histHighest:
		return histHighest
	}
	return ns
}

// recorder is one worker's private record of its requests; recorders are
// merged when the run ends, so recording takes no lock. Histograms are
// created lazily, so a recorder costs little until it records.
type recorder struct {
	latency, service, lag, first *hdrhistogram.Histogram
	think                        *hdrhistogram.Histogram // closed loops on the event loop
	requests, ok, units          int64
	lastSent                     time.Time
	errors                       map[string]int64
	series                       *series
}

// newRecorder returns a recorder. In a closed loop latency and service time
// are the same measurement, so only open loops keep a second histogram.
func newRecorder(open bool, s *series) *recorder {
	r := &recorder{service: NewHistogram(), errors: map[string]int64{}, series: s}
	r.latency = r.service
	if open {
		r.latency, r.lag = NewHistogram(), NewHistogram()
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
		r.service.RecordValue(clamp(int64(end.Sub(sent))))
	}
	if r.lag != nil {
		if ok {
			r.latency.RecordValue(clamp(int64(lat)))
		}
		r.lag.RecordValue(clamp(int64(sent.Sub(intended))))
	}
	if res.First > 0 {
		if r.first == nil {
			r.first = NewHistogram()
		}
		r.first.RecordValue(clamp(int64(res.First)))
	}
	if ok {
		r.ok++
		r.units += res.Units
	} else {
		r.errors[res.Status]++
	}
	if r.series != nil {
		r.series.issue(sent)
		r.series.done(end, lat, ok)
	}
}

// recordThink notes the time from an answer to the next request on its
// connection.
func (r *recorder) recordThink(d time.Duration) {
	if r.think != nil {
		r.think.RecordValue(clamp(int64(d)))
	}
}

func (r *recorder) merge(o *recorder) {
	r.service.Merge(o.service)
	if o.think != nil {
		if r.think == nil {
			r.think = NewHistogram()
		}
		r.think.Merge(o.think)
	}
	if r.lag != nil && o.lag != nil {
		r.latency.Merge(o.latency)
		r.lag.Merge(o.lag)
	}
	if o.first != nil {
		if r.first == nil {
			r.first = NewHistogram()
		}
		r.first.Merge(o.first)
	}
	r.requests += o.requests
	if o.lastSent.After(r.lastSent) {
		r.lastSent = o.lastSent
	}
	r.ok += o.ok
	r.units += o.units
	for k, v := range o.errors {
		r.errors[k] += v
	}
}

// Distribution summarises a histogram.
func Distribution(h *hdrhistogram.Histogram) results.Distribution {
	if h == nil || h.TotalCount() == 0 {
		return results.Distribution{}
	}
	return results.Distribution{
		Min: h.Min(), Mean: h.Mean(), P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90),
		P99: h.ValueAtQuantile(99), P999: h.ValueAtQuantile(99.9), Max: h.Max(),
	}
}

// sample turns a merged record into the results form. sendWindow is the
// time over which requests were sent, for the achieved rate.
func (r *recorder) sample(elapsed, sendWindow time.Duration, unit string, dropped int64, offered float64) results.Sample {
	s := results.Sample{
		Requests: r.requests, OK: r.ok, Errors: r.errors, DurationNs: int64(elapsed), Unit: unit,
		LatencyNs: Distribution(r.latency), ServiceTimeNs: Distribution(r.service), Dropped: dropped,
		OfferedRate: offered,
	}
	if r.lag != nil {
		d := Distribution(r.lag)
		s.ScheduleLagNs = &d
	}
	if r.first != nil {
		d := Distribution(r.first)
		s.FirstMessageNs = &d
	}
	if r.think != nil && r.think.TotalCount() > 0 {
		d := Distribution(r.think)
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
	if enc, err := r.latency.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		s.HDR = string(enc)
	}
	return s
}

// DecodeHDR decodes a histogram in HdrHistogram's V2 compressed encoding,
// base64. Malformed input is an error (the library panics on some).
func DecodeHDR(encoded string) (h *hdrhistogram.Histogram, err error) {
	defer func() {
		if p := recover(); p != nil {
			h, err = nil, fmt.Errorf("malformed histogram: %v", p)
		}
	}()
	h, err = hdrhistogram.Decode([]byte(encoded))
	if err != nil {
		return nil, fmt.Errorf("malformed histogram: %w", err)
	}
	return h, nil
}

// MergeHDR decodes latency histograms as stored in results (V2 compressed,
// base64) and merges them losslessly: the histograms of shards run on
// several workers or machines add up to the histogram of the whole.
func MergeHDR(encoded ...string) (*hdrhistogram.Histogram, error) {
	total := NewHistogram()
	for i, e := range encoded {
		h, err := DecodeHDR(e)
		if err != nil {
			return nil, fmt.Errorf("histogram %d: %w", i+1, err)
		}
		if dropped := total.Merge(h); dropped > 0 {
			return nil, fmt.Errorf("histogram %d: %d values beyond tandem's bounds", i+1, dropped)
		}
	}
	return total, nil
}
