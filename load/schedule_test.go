package load

import (
	"math"
	"testing"
	"time"
)

// count returns the arrivals of s and checks they never go back in time.
func count(t *testing.T, s Schedule, limit int64) int64 {
	t.Helper()
	var prev time.Duration
	for k := int64(0); k < limit; k++ {
		off, ok := s.Offset(k)
		if !ok {
			return k
		}
		if off < prev {
			t.Fatalf("%v: arrival %d at %v before arrival %d at %v", s, k, off, k-1, prev)
		}
		prev = off
	}
	return limit
}

func TestSchedules(t *testing.T) {
	cases := []struct {
		s    Schedule
		want int64
	}{
		{Constant{Rate: 1000, Duration: time.Second}, 1000},
		{Constant{Rate: 3, Duration: 2 * time.Second}, 6},
		{Ramp{From: 0, To: 1000, Duration: 2 * time.Second}, 1000},   // mean 500/s for 2 s
		{Ramp{From: 100, To: 300, Duration: 10 * time.Second}, 2000}, // mean 200/s
		{Ramp{From: 300, To: 100, Duration: 10 * time.Second}, 2000}, // ramp down
		{Steps{{100, time.Second}, {0, time.Second}, {1000, 500 * time.Millisecond}}, 600},
	}
	for _, c := range cases {
		got := count(t, c.s, 1<<20)
		if math.Abs(float64(got-c.want)) > 1 {
			t.Errorf("%v: %d arrivals; want %d", c.s, got, c.want)
		}
	}
	// the ramp's k-th arrival is where its integral reaches k
	r := Ramp{From: 0, To: 1000, Duration: 2 * time.Second}
	if off, _ := r.Offset(250); math.Abs(off.Seconds()-1.0) > 1e-6 {
		t.Errorf("ramp 0→1000/2s: arrival 250 at %v; want 1s", off)
	}
	if got := r.RateAt(time.Second); got != 500 {
		t.Errorf("ramp rate at 1s = %v; want 500", got)
	}
	st := Steps{{100, time.Second}, {0, time.Second}, {1000, time.Second}}
	if off, _ := st.Offset(100); off != 2*time.Second {
		t.Errorf("steps: arrival 100 at %v; want 2s (after the silent step)", off)
	}
	if _, ok := (Constant{Rate: 0}).Offset(0); ok {
		t.Error("a zero rate schedules an arrival")
	}
}

func TestShardsSumToWhole(t *testing.T) {
	for _, whole := range []Schedule{Constant{Rate: 997, Duration: time.Second}, Ramp{From: 10, To: 2000, Duration: time.Second}} {
		want := map[time.Duration]int{}
		for k := int64(0); ; k++ {
			off, ok := whole.Offset(k)
			if !ok {
				break
			}
			want[off]++
		}
		for _, n := range []int{1, 2, 3, 7} {
			got := map[time.Duration]int{}
			for i := 0; i < n; i++ {
				s := Shard{Schedule: whole, Index: i, Count: n}
				for k := int64(0); ; k++ {
					off, ok := s.Offset(k)
					if !ok {
						break
					}
					got[off]++
				}
			}
			if len(got) != len(want) {
				t.Errorf("%v in %d shards: %d distinct arrivals; want %d", whole, n, len(got), len(want))
			}
			for off, c := range want {
				if got[off] != c {
					t.Errorf("%v in %d shards: arrival at %v ×%d; want ×%d", whole, n, off, got[off], c)
					break
				}
			}
		}
	}
}

func TestParseRate(t *testing.T) {
	cases := []struct {
		in       string
		duration time.Duration
		step     time.Duration
		want     string
		err      bool
	}{
		{"1000", 10 * time.Second, 0, "1000/s", false},
		{"100-1000", 10 * time.Second, 0, "ramp 100→1000/s over 10s", false},
		{"100,200", 10 * time.Second, 0, "steps 100/s for 5s, 200/s for 5s", false},
		{"100,200", 0, 2 * time.Second, "steps 100/s for 2s, 200/s for 2s", false},
		{"100-1000", 0, 0, "", true},
		{"fast", 0, 0, "", true},
		{"0", time.Second, 0, "", true},
		{"-5", time.Second, 0, "", true},
		{"1,x", time.Second, 0, "", true},
		// nothing at all to send: refused
		{"0-0", time.Second, 0, "", true},
		{"0,0", time.Second, 0, "", true},
		{"0,0,0", 0, time.Second, "", true},
		// a ramp from or to 0, and a pause among steps, send
		{"0-100", time.Second, 0, "ramp 0→100/s over 1s", false},
		{"100-0", time.Second, 0, "ramp 100→0/s over 1s", false},
		{"100,0,100", 3 * time.Second, 0, "steps 100/s for 1s, 0/s for 1s, 100/s for 1s", false},
	}
	for _, c := range cases {
		s, err := ParseRate(c.in, c.duration, c.step)
		if (err != nil) != c.err || (err == nil && s.String() != c.want) {
			t.Errorf("ParseRate(%q) = %v, %v; want %q (error %v)", c.in, s, err, c.want, c.err)
		}
	}
}

func TestCoarseHistogram(t *testing.T) {
	for _, v := range []int64{0, 1, 127, 128, 129, 1000, 999_999, 40_000_000, 3_600_000_000_000} {
		i := coarseIndex(v)
		if i < 0 || i >= coarseBuckets {
			t.Fatalf("coarseIndex(%d) = %d out of range", v, i)
		}
		got := coarseValue(i)
		if math.Abs(float64(got-v)) > float64(v)/64+1 {
			t.Errorf("coarse %d → bucket %d → %d: error beyond 1/64", v, i, got)
		}
	}
	for v := int64(1); v < 1<<40; v = v*3 + 1 {
		if coarseIndex(v) > coarseIndex(v*3+1) {
			t.Fatalf("coarseIndex not monotonic at %d", v)
		}
	}
}

// Arrivals counts what Offset schedules, also where Rate × Duration is not
// a whole number (141.42/s for 1 s is 142 arrivals, not 141).
func TestConstantArrivals(t *testing.T) {
	for _, c := range []Constant{
		{Rate: 100, Duration: time.Second},
		{Rate: math.Sqrt(2) * 100, Duration: time.Second},
		{Rate: 3, Duration: 2500 * time.Millisecond},
		{Rate: 1e6, Duration: 333 * time.Millisecond},
		{Rate: 0.5, Duration: time.Second},
		{Rate: 7, Duration: 0},
		{Rate: 0, Duration: time.Second},
	} {
		want := int64(0)
		if c.Duration > 0 {
			want = count(t, c, 1<<40)
		}
		if got := c.Arrivals(); got != want {
			t.Errorf("%v for %v: %d arrivals; Offset schedules %d", c, c.Duration, got, want)
		}
	}
}
