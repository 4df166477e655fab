package load

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Fraction is the share of a histogram's values in [lo, hi].
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
