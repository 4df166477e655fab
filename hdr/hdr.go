// Package hdr holds tandem's latency histograms: HdrHistogram with
// tandem's bounds, the codec results files store them in (the V2
// compressed encoding, base64), their lossless merge, and the summaries
// read from them. It depends on no part of tandem but the results types,
// so the packages that measure (load, the drivers) and the ones that read
// results (report, runner) share it without depending on each other.
package hdr

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
	lowest  = 1
	highest = int64(time.Hour)
	sigFigs = 3
)

// New returns an empty latency histogram with tandem's bounds.
func New() *hdrhistogram.Histogram {
	return hdrhistogram.New(lowest, highest, sigFigs)
}

// Clamp bounds a value in nanoseconds to the histogram's range (1 ns to
// 1 h), so that recording it never fails.
func Clamp(ns int64) int64 {
	switch {
	case ns < lowest:
		return lowest
	case ns > highest:
		return highest
	}
	return ns
}

// Encode encodes h as results store it: HdrHistogram's V2 compressed
// encoding, base64.
func Encode(h *hdrhistogram.Histogram) (string, error) {
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(enc), nil
}

// Decode decodes a histogram in HdrHistogram's V2 compressed encoding,
// base64. Malformed input is an error (the library panics on some).
func Decode(encoded string) (h *hdrhistogram.Histogram, err error) {
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

// Merge decodes latency histograms as stored in results (V2 compressed,
// base64) and merges them losslessly: the histograms of shards run on
// several workers or machines add up to the histogram of the whole.
func Merge(encoded ...string) (*hdrhistogram.Histogram, error) {
	total := New()
	for i, e := range encoded {
		h, err := Decode(e)
		if err != nil {
			return nil, fmt.Errorf("histogram %d: %w", i+1, err)
		}
		if dropped := total.Merge(h); dropped > 0 {
			return nil, fmt.Errorf("histogram %d: %d values beyond tandem's bounds", i+1, dropped)
		}
	}
	return total, nil
}

// Distribution summarises a histogram; an empty one (or nil) is the zero
// Distribution.
func Distribution(h *hdrhistogram.Histogram) results.Distribution {
	if h == nil || h.TotalCount() == 0 {
		return results.Distribution{}
	}
	return results.Distribution{
		Min: h.Min(), Mean: h.Mean(), P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90),
		P99: h.ValueAtQuantile(99), P999: h.ValueAtQuantile(99.9), Max: h.Max(),
	}
}

// Fraction is the share of a histogram's values in [lo, hi]; 0 for an
// empty histogram.
func Fraction(h *hdrhistogram.Histogram, lo, hi time.Duration) float64 {
	total := h.TotalCount()
	if total == 0 {
		return 0
	}
	var in int64
	for _, b := range h.Distribution() {
		if b.Count > 0 && b.From >= int64(lo) && b.To <= int64(hi) {
			in += b.Count
		}
	}
	return float64(in) / float64(total)
}
