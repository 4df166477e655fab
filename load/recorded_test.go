package load

import (
	"math"
	"strings"
	"testing"
	"time"
)

// times are Arrivals held in a slice.
type times []time.Duration

func (t times) Len() int               { return len(t) }
func (t times) At(k int) time.Duration { return t[k] }

func TestRecorded(t *testing.T) {
	ms := time.Millisecond
	rec := times{5 * time.Second, 5*time.Second + 100*ms, 5*time.Second + 300*ms, 6 * time.Second}
	cases := []struct {
		name string
		s    Recorded
		want []time.Duration // arrivals 0, 1, …; then none
		len  time.Duration
	}{
		{"as recorded, from the first", Recorded{Arrivals: rec}, []time.Duration{0, 100 * ms, 300 * ms, time.Second}, time.Second + 1},
		{"twice as fast", Recorded{Arrivals: rec, Speed: 2}, []time.Duration{0, 50 * ms, 150 * ms, 500 * ms}, 500*ms + 1},
		{"a third as fast, rounded up", Recorded{Arrivals: times{0, 1, 2}, Speed: 3}, []time.Duration{0, 1, 1}, 2},
		// a pass is the span (1 s) and one mean gap (1/3 s)
		{"looped", Recorded{Arrivals: rec, Loop: true}, []time.Duration{0, 100 * ms, 300 * ms, time.Second,
			time.Second + 333333333, time.Second + 433333333, time.Second + 633333333, 2*time.Second + 333333333, 2*time.Second + 666666666}, 0},
		{"looped at half speed", Recorded{Arrivals: rec, Loop: true, Speed: 0.5}, []time.Duration{0, 200 * ms, 600 * ms, 2 * time.Second,
			2*time.Second + 666666666}, 0},
		{"one arrival", Recorded{Arrivals: times{7 * ms}}, []time.Duration{0}, 1},
		{"one arrival cannot loop", Recorded{Arrivals: times{7 * ms}, Loop: true}, []time.Duration{0}, 0},
		{"all at once cannot loop", Recorded{Arrivals: times{ms, ms}, Loop: true}, []time.Duration{0, 0}, 0},
		{"none", Recorded{Arrivals: times{}}, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, want := range c.want {
				got, ok := c.s.Offset(int64(k))
				if !ok || got != want {
					t.Errorf("arrival %d at %v, %v; want %v", k, got, ok, want)
				}
			}
			if !c.s.Loop || c.s.Period() == 0 {
				if off, ok := c.s.Offset(int64(len(c.want))); ok {
					t.Errorf("arrival %d at %v after the last", len(c.want), off)
				}
			}
			if got := c.s.Len(); got != c.len {
				t.Errorf("Len %v; want %v", got, c.len)
			}
		})
	}
	// a long loop never goes back in time, and ends rather than overflow
	loop := Recorded{Arrivals: rec, Loop: true, Speed: 1000}
	if n := count(t, loop, 100_000); n != 100_000 {
		t.Errorf("looped: %d arrivals; want every one asked", n)
	}
	if _, ok := loop.Offset(math.MaxInt64); ok {
		t.Error("arrival MaxInt64 is in the timetable")
	}
	if _, ok := loop.Offset(-1); ok {
		t.Error("arrival -1 is in the timetable")
	}
	// an open loop bounded by Len sends every arrival: the last is before it
	tt := timetable{Schedule: cases[1].s, start: time.Unix(0, 0), duration: cases[1].s.Len()}
	if _, ok := tt.due(3); !ok {
		t.Error("the last arrival is outside a run of the schedule's length")
	}
	if got := (Recorded{Arrivals: rec, Speed: 2}).RateAt(0); math.Abs(got-6) > 1e-9 {
		t.Errorf("rate %v; want 3 gaps over 0.5 s", got)
	}
	if got := (Recorded{Arrivals: rec, Loop: true}).RateAt(0); math.Abs(got-3) > 1e-9 {
		t.Errorf("looped rate %v; want 4 arrivals per 4/3 s", got)
	}
	if s := (Recorded{Arrivals: rec, Speed: 2, Loop: true}).String(); !strings.Contains(s, "4 arrivals over 1s ×2, looped every 666.667ms") {
		t.Errorf("String %q", s)
	}
}
