package hdr_test

import (
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tandem-bench/tandem/hdr"
)

// within says whether got is v to within 0.1 %.
func within(got, v int64) bool {
	d := got - v
	return d*1000 <= v && -d*1000 <= v
}

// encode is hdr.Encode for tests, which have no use for its error.
func encode(t testing.TB, h *hdrhistogram.Histogram) string {
	t.Helper()
	enc, err := hdr.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// Latency histograms keep 3 significant figures where loopback round trips
// live (tens of µs): every value reads back within 0.1 %, and 20.00 µs and
// 20.45 µs stay apart, through the results' encoding and a merge too.
func TestHistogramResolution(t *testing.T) {
	values := []int64{10_000, 20_000, 20_450}
	for _, v := range values {
		h := hdr.New()
		h.RecordValue(v)
		d := hdr.Distribution(h)
		if !within(d.P50, v) || !within(d.Min, v) || !within(d.Max, v) || !within(h.ValueAtQuantile(99.9), v) {
			t.Errorf("%d ns reads back as min %d, p50 %d, max %d; want within 0.1 %%", v, d.Min, d.P50, d.Max)
		}
	}
	h := hdr.New()
	for _, v := range values {
		h.RecordValue(v)
	}
	if h.ValuesAreEquivalent(20_000, 20_450) {
		t.Error("20,000 and 20,450 ns fall into one bucket")
	}
	enc := encode(t, h)
	merged, err := hdr.Merge(enc, enc)
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
	if both, err := hdr.Merge(enc, encode(t, old)); err != nil || both.TotalCount() != 4 || both.Max() < 20_000 {
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

// Merge refuses what is not a histogram, and histograms with values beyond
// tandem's bounds, naming the histogram at fault.
func TestMergeErrors(t *testing.T) {
	wide := hdrhistogram.New(1, 2*int64(time.Hour), 3)
	wide.RecordValue(int64(90 * time.Minute))
	good := hdr.New()
	good.RecordValue(1000)
	for _, c := range []struct {
		name    string
		encoded []string
		want    string // in the error; "" for none
	}{
		{"none", nil, ""},
		{"one", []string{encode(t, good)}, ""},
		{"garbage", []string{encode(t, good), "not base64!"}, "histogram 2: malformed histogram"},
		{"empty string", []string{""}, "histogram 1: malformed histogram"},
		{"beyond the bounds", []string{encode(t, wide)}, "histogram 1: 1 values beyond tandem's bounds"},
	} {
		_, err := hdr.Merge(c.encoded...)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
}

func TestClamp(t *testing.T) {
	for _, c := range []struct{ in, want int64 }{
		{-5, 1}, {0, 1}, {1, 1}, {12345, 12345}, {int64(time.Hour), int64(time.Hour)}, {int64(time.Hour) + 1, int64(time.Hour)},
	} {
		if got := hdr.Clamp(c.in); got != c.want {
			t.Errorf("Clamp(%d) = %d; want %d", c.in, got, c.want)
		}
	}
}

func TestFractionAndDistribution(t *testing.T) {
	h := hdr.New()
	for _, v := range []time.Duration{time.Millisecond, 40 * time.Millisecond, 41 * time.Millisecond, 100 * time.Millisecond} {
		h.RecordValue(int64(v))
	}
	for _, c := range []struct {
		lo, hi time.Duration
		want   float64
	}{
		{36 * time.Millisecond, 48 * time.Millisecond, 0.5},
		{0, time.Hour, 1},
		{2 * time.Millisecond, 3 * time.Millisecond, 0},
	} {
		if got := hdr.Fraction(h, c.lo, c.hi); got != c.want {
			t.Errorf("Fraction(%v, %v) = %v; want %v", c.lo, c.hi, got, c.want)
		}
	}
	if got := hdr.Fraction(hdr.New(), 0, time.Hour); got != 0 {
		t.Errorf("Fraction of an empty histogram = %v; want 0", got)
	}
	if d := hdr.Distribution(nil); d.Max != 0 || d.P50 != 0 {
		t.Errorf("Distribution(nil) = %+v; want zero", d)
	}
}

// Histograms come from results files: decoding never panics, and what
// decodes re-encodes to a histogram with the same count.
func FuzzDecodeHDR(f *testing.F) {
	h := hdr.New()
	h.RecordValue(12345)
	h.RecordValue(987654)
	f.Add(encode(f, h))
	f.Add("HISTFAAAAB")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := hdr.Decode(s)
		if err != nil {
			return
		}
		enc, err := hdr.Encode(h)
		if err != nil {
			return
		}
		again, err := hdr.Decode(enc)
		if err != nil || again.TotalCount() != h.TotalCount() {
			t.Fatalf("re-encoded histogram: %v, %d vs %d", err, again.TotalCount(), h.TotalCount())
		}
	})
}
