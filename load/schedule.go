package load

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Schedule is an arrival timetable, a pure function in the manner of
// vegeta's pacers: Offset returns when the k-th arrival (from 0) is due,
// measured from the start of the run, and false once the schedule has no
// more arrivals. Because it is a function of k alone, a schedule shards
// exactly (see Shard) and is tested without clocks.
type Schedule interface {
	Offset(k int64) (time.Duration, bool)
	// RateAt is the offered rate, arrivals per second, at offset t.
	RateAt(t time.Duration) float64
	// Len is the schedule's own length, or 0 if it runs until stopped.
	Len() time.Duration
	String() string
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// Constant is Rate arrivals per second, for Duration (0: until stopped).
type Constant struct {
	Rate     float64
	Duration time.Duration
}

// Offset implements Schedule.
func (c Constant) Offset(k int64) (time.Duration, bool) {
	if c.Rate <= 0 {
		return 0, false
	}
	t := seconds(float64(k) / c.Rate)
	return t, c.Duration <= 0 || t < c.Duration
}

// RateAt implements Schedule.
func (c Constant) RateAt(time.Duration) float64 { return c.Rate }

// Arrivals is how many arrivals the schedule has: Rate × Duration rounded
// up (an arrival at every 1/Rate from 0 while before Duration); 0 when it
// runs until stopped.
func (c Constant) Arrivals() int64 {
	if c.Rate <= 0 || c.Duration <= 0 {
		return 0
	}
	n := int64(math.Ceil(c.Rate * c.Duration.Seconds()))
	for n > 0 {
		if _, ok := c.Offset(n - 1); ok {
			break
		}
		n--
	}
	for {
		if _, ok := c.Offset(n); !ok {
			return n
		}
		n++
	}
}

// Len implements Schedule.
func (c Constant) Len() time.Duration { return c.Duration }

func (c Constant) String() string { return fmt.Sprintf("%g/s", c.Rate) }

// Ramp goes linearly from From to To arrivals per second over Duration.
type Ramp struct {
	From, To float64
	Duration time.Duration
}

// Offset implements Schedule: the arrivals by time t are
// N(t) = From·t + (To−From)·t²/(2D); the k-th is due where N(t) = k.
func (r Ramp) Offset(k int64) (time.Duration, bool) {
	if k == 0 {
		return 0, r.Duration > 0 && (r.From > 0 || r.To > 0)
	}
	d := r.Duration.Seconds()
	a := (r.To - r.From) / (2 * d)
	b := r.From
	disc := b*b + 4*a*float64(k)
	if disc < 0 || d <= 0 {
		return 0, false
	}
	den := b + math.Sqrt(disc)
	if den <= 0 {
		return 0, false
	}
	t := seconds(2 * float64(k) / den) // the stable root of a·t² + b·t − k = 0
	return t, t < r.Duration
}

// RateAt implements Schedule.
func (r Ramp) RateAt(t time.Duration) float64 {
	if r.Duration <= 0 {
		return 0
	}
	f := min(max(t.Seconds()/r.Duration.Seconds(), 0), 1)
	return r.From + (r.To-r.From)*f
}

// Len implements Schedule.
func (r Ramp) Len() time.Duration { return r.Duration }

func (r Ramp) String() string { return fmt.Sprintf("ramp %g→%g/s over %v", r.From, r.To, r.Duration) }

// Step is one constant-rate stretch of Steps.
type Step struct {
	Rate     float64
	Duration time.Duration
}

// Steps holds each step's rate for its duration, one after another.
type Steps []Step

// Offset implements Schedule.
func (s Steps) Offset(k int64) (time.Duration, bool) {
	var start time.Duration
	var before float64 // arrivals in earlier steps
	for _, st := range s {
		n := st.Rate * st.Duration.Seconds()
		if st.Rate > 0 && float64(k) < before+n {
			return start + seconds((float64(k)-before)/st.Rate), true
		}
		before += math.Max(n, 0)
		start += st.Duration
	}
	return 0, false
}

// RateAt implements Schedule.
func (s Steps) RateAt(t time.Duration) float64 {
	var start time.Duration
	for _, st := range s {
		if t < start+st.Duration {
			return st.Rate
		}
		start += st.Duration
	}
	return 0
}

// Len implements Schedule.
func (s Steps) Len() time.Duration {
	var d time.Duration
	for _, st := range s {
		d += st.Duration
	}
	return d
}

func (s Steps) String() string {
	parts := make([]string, len(s))
	for i, st := range s {
		parts[i] = fmt.Sprintf("%g/s for %v", st.Rate, st.Duration)
	}
	return "steps " + strings.Join(parts, ", ")
}

// Shard is the Index-th of Count equal parts of a schedule: it takes every
// Count-th arrival, starting at Index. The shards of a schedule together
// hold exactly its arrivals, so a rate split across machines or workers
// adds up to the whole.
type Shard struct {
	Schedule
	Index, Count int
}

// Offset implements Schedule.
func (s Shard) Offset(k int64) (time.Duration, bool) {
	return s.Schedule.Offset(k*int64(s.Count) + int64(s.Index))
}

// RateAt implements Schedule.
func (s Shard) RateAt(t time.Duration) float64 { return s.Schedule.RateAt(t) / float64(s.Count) }

func (s Shard) String() string {
	return fmt.Sprintf("%s (shard %d of %d)", s.Schedule, s.Index+1, s.Count)
}

// ParseRate parses a rate schedule as the command line writes it:
//
//	1000                      constant, for the run's duration
//	100-1000                  a linear ramp over the run's duration
//	100,500,1000              steps, each lasting step
//
// A schedule that sends nothing is an error: a rate of 0, a ramp from 0 to
// 0, steps that are all 0 (a step of 0 among others is a pause).
func ParseRate(s string, duration, step time.Duration) (Schedule, error) {
	num := func(x string) (float64, error) {
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			if x != s {
				return 0, fmt.Errorf("rate %q in %q: want a non-negative number of arrivals per second (a ramp is FROM-TO, steps R1,R2,…)", x, s)
			}
			return 0, fmt.Errorf("rate %q: want a non-negative number of arrivals per second", x)
		}
		return f, nil
	}
	switch {
	case strings.Contains(s, ","):
		if step <= 0 {
			if duration <= 0 {
				return nil, fmt.Errorf("rate %q: steps need --step or --duration", s)
			}
			step = duration / time.Duration(strings.Count(s, ",")+1)
		}
		var st Steps
		for _, part := range strings.Split(s, ",") {
			r, err := num(part)
			if err != nil {
				return nil, err
			}
			st = append(st, Step{Rate: r, Duration: step})
		}
		if !slices.ContainsFunc(st, func(x Step) bool { return x.Rate > 0 }) {
			return nil, fmt.Errorf("rate %q: every step is 0, which sends nothing: want a positive rate in one step at least (a step of 0 among others is a pause)", s)
		}
		return st, nil
	case strings.Contains(s, "-"):
		from, to, _ := strings.Cut(s, "-")
		f, err := num(from)
		if err != nil {
			return nil, err
		}
		t, err := num(to)
		if err != nil {
			return nil, err
		}
		if f == 0 && t == 0 {
			return nil, fmt.Errorf("rate %q: a ramp from 0 to 0 sends nothing: want a positive rate at one end at least", s)
		}
		if duration <= 0 {
			return nil, fmt.Errorf("rate %q: a ramp needs a duration", s)
		}
		return Ramp{From: f, To: t, Duration: duration}, nil
	}
	r, err := num(s)
	if err != nil {
		return nil, err
	}
	if r == 0 {
		return nil, fmt.Errorf("rate %q: want a positive rate", s)
	}
	return Constant{Rate: r, Duration: duration}, nil
}
