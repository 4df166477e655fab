package load_test

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tandem-bench/tandem/load"
)

// within says whether got is v to within 0.1 %.
func within(got, v int64) bool {
	d := got - v
	return d*1000 <= v && -d*1000 <= v
}

// Latency histograms keep 3 significant figures where loopback round trips
// live (tens of µs): every value reads back within 0.1 %, and 20.00 µs and
// 20.45 µs stay apart, through the results' encoding and a merge too.
func TestHistogramResolution(t *testing.T) {
	values := []int64{10_000, 20_000, 20_450}
	for _, v := range values {
		h := load.NewHistogram()
		h.RecordValue(v)
		d := load.Distribution(h)
		if !within(d.P50, v) || !within(d.Min, v) || !within(d.Max, v) || !within(h.ValueAtQuantile(99.9), v) {
			t.Errorf("%d ns reads back as min %d, p50 %d, max %d; want within 0.1 %%", v, d.Min, d.P50, d.Max)
		}
	}
	h := load.NewHistogram()
	for _, v := range values {
		h.RecordValue(v)
	}
	if h.ValuesAreEquivalent(20_000, 20_450) {
		t.Error("20,000 and 20,450 ns fall into one bucket")
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := load.MergeHDR(string(enc), string(enc))
	if err != nil || merged.TotalCount() != 6 {
		t.Fatalf("merged: %v, %d values; want 6", err, merged.TotalCount())
	}
	for q, v := range map[float64]int64{30: 10_000, 50: 20_000, 100: 20_450} {
		if got := merged.ValueAtQuantile(q); !within(got, v) {
			t.Errorf("merged: p%v %d; want %d to within 0.1 %%", q, got, v)
		}
	}
	if got := merged.Min(); !within(got, 10_000) {
		t.Errorf("merged: min %d; want 10,000 to within 0.1 %%", got)
	}
	// Results written with the old bounds (1 µs lowest) still decode and
	// merge, at their own resolution.
	old := hdrhistogram.New(int64(time.Microsecond), int64(time.Hour), 3)
	old.RecordValue(20_000)
	oldEnc, err := old.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	if both, err := load.MergeHDR(string(enc), string(oldEnc)); err != nil || both.TotalCount() != 4 || both.Max() < 20_000 {
		t.Errorf("old and new merged: %v, %d values; want 4", err, both.TotalCount())
	}
	// what a histogram costs (per worker and distribution): about 270 KB
	// (197 KB with the old 1 µs lowest value)
	if size := h.ByteSize(); size > 512<<10 {
		t.Errorf("a histogram takes %d bytes; want well under 512 KiB", size)
	} else {
		t.Logf("a histogram takes %d bytes", size)
	}
}
