package load

import (
	"fmt"
	"math"
	"time"
)

// Arrivals are the times a recording's requests arrived, in order: At(k)
// never decreases (record.Index is one).
type Arrivals interface {
	Len() int
	At(k int) time.Duration
}

// Recorded is a recording's timetable: arrival k is due when the k-th
// recorded request arrived, counted from the first, divided by Speed (2:
// twice as fast), rounded up to the nanosecond so that no arrival is early.
// Without Loop it ends after the last; with Loop the timetable starts again
// every Period ÷ Speed, arrival k being the recording's k mod Len, until
// the run's bound. It keeps nothing of its own: Arrivals holds the times.
type Recorded struct {
	Arrivals Arrivals
	// Speed divides every offset; 0 is 1.
	Speed float64
	Loop  bool
}

func (r Recorded) speed() float64 {
	if r.Speed <= 0 {
		return 1
	}
	return r.Speed
}

// span is the recording's length from its first arrival to its last.
func (r Recorded) span() time.Duration {
	n := r.Arrivals.Len()
	if n == 0 {
		return 0
	}
	return r.Arrivals.At(n-1) - r.Arrivals.At(0)
}

// Period is how far apart the passes of a looped recording start, before
// Speed: its span and one mean gap between its arrivals, so that a looped
// timetable keeps the recording's mean rate. 0 when the recording cannot
// loop: fewer than two arrivals, or all at one time.
func (r Recorded) Period() time.Duration {
	n, s := r.Arrivals.Len(), r.span()
	if n < 2 || s <= 0 {
		return 0
	}
	return s + s/time.Duration(n-1)
}

// Offset implements Schedule.
func (r Recorded) Offset(k int64) (time.Duration, bool) {
	n := int64(r.Arrivals.Len())
	if k < 0 || n == 0 {
		return 0, false
	}
	pass, j := k/n, int(k%n)
	at := r.Arrivals.At(j) - r.Arrivals.At(0)
	if pass > 0 {
		p := r.Period()
		if !r.Loop || p <= 0 || pass > (math.MaxInt64-int64(r.span()))/int64(p) {
			return 0, false
		}
		at += time.Duration(pass) * p
	}
	return time.Duration(math.Ceil(float64(at) / r.speed())), true
}

// RateAt implements Schedule: the recording's mean rate, times Speed.
func (r Recorded) RateAt(time.Duration) float64 {
	n, s := r.Arrivals.Len(), r.span()
	if r.Loop && r.Period() > 0 {
		return float64(n) / r.Period().Seconds() * r.speed()
	}
	if n < 2 || s <= 0 {
		return 0
	}
	return float64(n-1) / s.Seconds() * r.speed()
}

// Len implements Schedule: just past the last arrival, or 0 (until
// stopped) for a loop.
func (r Recorded) Len() time.Duration {
	if r.Loop || r.Arrivals.Len() == 0 {
		return 0
	}
	last, _ := r.Offset(int64(r.Arrivals.Len() - 1))
	return last + 1
}

func (r Recorded) String() string {
	s := fmt.Sprintf("recorded timetable of %d arrivals over %v", r.Arrivals.Len(), r.span().Round(time.Microsecond))
	if r.speed() != 1 {
		s += fmt.Sprintf(" ×%g", r.speed())
	}
	if r.Loop && r.Period() > 0 {
		s += fmt.Sprintf(", looped every %v", time.Duration(math.Ceil(float64(r.Period())/r.speed())).Round(time.Microsecond))
	}
	return s
}
