// Package changepoint finds the runs where a benchmark series shifted for
// good: binary segmentation on the runs' values (each the median of its
// rounds, on a log scale so that a shift is a ratio), the split that best
// separates a segment's means, kept when Student's t test says so (its
// p-value multiplied by the number of splits tried) and the shift is past
// a noise floor, then the same within each side. Each run's rounds inform
// the test too: the variance a split is judged against is never below
// what the rounds' own spread says one run's median varies by.
//
// docs/history.md gives the method, its settings and its measured
// false-alarm rate and power.
package changepoint

import (
	"errors"
	"fmt"
	"math"
	"slices"

	moremath "github.com/aclements/go-moremath/stats"
)

// Run is one run of a series: its rounds (or its one value).
type Run struct {
	Values []float64
}

// Options are the detector's settings; the zero value takes the defaults.
type Options struct {
	// Alpha is the test's level for one segment (default 0.01), after
	// the correction for the splits it tries.
	Alpha float64
	// Floor is the least shift reported, as a fraction (default 0.02: the
	// verdicts' noise floor).
	Floor float64
	// MinRuns is the fewest runs on either side of a change (default 2;
	// 1 lets the newest run start a change, as a gate asks).
	MinRuns int
}

func (o Options) norm() Options {
	if o.Alpha <= 0 {
		o.Alpha = 0.01
	}
	if o.Floor <= 0 {
		o.Floor = 0.02
	}
	if o.MinRuns <= 0 {
		o.MinRuns = 2
	}
	return o
}

// Change is a change point: the series' level shifted from Index on.
type Change struct {
	// Index is the first run after the change.
	Index int `json:"index"`
	// Ratio is the level after over the level before (geometric means of
	// the runs' values in the segments either side); Lo and Hi bound it
	// at 95 %.
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	// P is the split's p-value (corrected for the splits tried).
	P float64 `json:"p"`
	// Before and After are the levels either side, and the runs of the
	// segments they are taken over.
	Before    float64 `json:"before"`
	After     float64 `json:"after"`
	RunsLeft  int     `json:"runs_before"`
	RunsRight int     `json:"runs_after"`
}

// ErrValue is a run without a positive value.
var ErrValue = errors.New("changepoint: every run needs a positive value")

// Detect finds the change points of runs, oldest run first, in order.
func Detect(runs []Run, o Options) ([]Change, error) {
	o = o.norm()
	x := make([]float64, len(runs))    // log of each run's median
	vmin := make([]float64, len(runs)) // the variance of that median its rounds say
	for i, r := range runs {
		m, v, err := level(r.Values)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", i, err)
		}
		x[i], vmin[i] = m, v
	}
	d := detector{o: o, x: x}
	if len(vmin) > 0 {
		d.floor = mean(vmin)
	}
	d.segment(0, len(x))
	slices.SortFunc(d.out, func(a, b Change) int { return a.Index - b.Index })
	// each change measured between its neighbours: the level of the runs
	// since the change before it against the runs until the next
	for i := range d.out {
		a, b := 0, len(x)
		if i > 0 {
			a = d.out[i-1].Index
		}
		if i+1 < len(d.out) {
			b = d.out[i+1].Index
		}
		d.out[i] = d.change(a, d.out[i].Index, b, d.out[i].P)
	}
	return d.out, nil
}

// level is a run's log median and the variance of that log median that
// its rounds' spread implies (0 with fewer than two rounds).
func level(vs []float64) (float64, float64, error) {
	if len(vs) == 0 {
		return 0, 0, ErrValue
	}
	logs := make([]float64, len(vs))
	for i, v := range vs {
		if !(v > 0) || math.IsInf(v, 0) {
			return 0, 0, ErrValue
		}
		logs[i] = math.Log(v)
	}
	slices.Sort(logs)
	n := len(logs)
	med := logs[n/2]
	if n%2 == 0 {
		med = (logs[n/2-1] + logs[n/2]) / 2
	}
	if n < 2 {
		return med, 0, nil
	}
	// the variance of a median: (π/2)·σ²/n for a normal sample
	return med, math.Pi / 2 * variance(logs) / float64(n), nil
}

func variance(xs []float64) float64 {
	var m float64
	for _, v := range xs {
		m += v
	}
	m /= float64(len(xs))
	var s float64
	for _, v := range xs {
		s += (v - m) * (v - m)
	}
	return s / float64(len(xs)-1)
}

type detector struct {
	o Options
	x []float64
	// floor is the least variance of one run's value: the mean of what
	// the runs' rounds say their medians vary by
	floor float64
	out   []Change
}

// segment looks for a change in x[a:b] and, finding one, in each side.
func (d *detector) segment(a, b int) {
	n := b - a
	if n < 2*d.o.MinRuns {
		return
	}
	k, t := d.best(d.x[a:b])
	if k < 0 {
		return
	}
	// Student's t for the best split, its p-value multiplied by the number
	// of splits tried (Bonferroni), so that looking at every split does
	// not make one look significant
	splits := n - 2*d.o.MinRuns + 1
	p := min(1, float64(splits)*2*(1-moremath.TDist{V: float64(max(n-2, 1))}.CDF(t)))
	c := d.change(a, a+k, b, p)
	if p > d.o.Alpha || math.Abs(math.Log(c.Ratio)) < math.Log1p(d.o.Floor) {
		return
	}
	d.out = append(d.out, c)
	d.segment(a, a+k)
	d.segment(a+k, b)
}

// best is the split of seg whose sides' means differ most in units of
// their standard error, and that many units (-1, 0 if none). Sums kept as
// it goes make it linear in the segment's length.
func (d *detector) best(seg []float64) (int, float64) {
	n := len(seg)
	var total, totalSq float64
	for _, v := range seg {
		total += v
		totalSq += v * v
	}
	bestK, bestT := -1, 0.0
	var left, leftSq float64
	for k := 1; k < n; k++ {
		v := seg[k-1]
		left += v
		leftSq += v * v
		if k < d.o.MinRuns || n-k < d.o.MinRuns {
			continue
		}
		nl, nr := float64(k), float64(n-k)
		diff := (total-left)/nr - left/nl
		se := math.Sqrt(d.pooled(left, leftSq, nl, total-left, totalSq-leftSq, nr) * (1/nl + 1/nr))
		if se == 0 {
			continue
		}
		if t := math.Abs(diff) / se; t > bestT {
			bestK, bestT = k, t
		}
	}
	return bestK, bestT
}

// pooled is the variance of one run's value within two sides, from their
// sums, sums of squares and counts, never below the smallest the runs'
// rounds allow (the mean of the variances of their medians), so that a
// few identical values do not make a tiny difference look large.
func (d *detector) pooled(s1, q1, n1, s2, q2, n2 float64) float64 {
	ss := max(q1-s1*s1/n1, 0) + max(q2-s2*s2/n2, 0)
	v := 0.0
	if f := n1 + n2 - 2; f > 0 {
		v = ss / f
	}
	return max(v, d.floor)
}

// change describes the split of x[a:b] at k.
func (d *detector) change(a, k, b int, p float64) Change {
	l, r := d.x[a:k], d.x[k:b]
	ml, mr := mean(l), mean(r)
	nl, nr := float64(len(l)), float64(len(r))
	se := math.Sqrt(d.pooled(sum(l), sumSq(l), nl, sum(r), sumSq(r), nr) * (1/nl + 1/nr))
	df := max(nl+nr-2, 1)
	q := tQuantile(0.975, df)
	diff := mr - ml
	return Change{Index: k, Ratio: math.Exp(diff), Lo: math.Exp(diff - q*se), Hi: math.Exp(diff + q*se), P: p,
		Before: math.Exp(ml), After: math.Exp(mr), RunsLeft: len(l), RunsRight: len(r)}
}

func mean(xs []float64) float64 { return sum(xs) / float64(len(xs)) }

func sum(xs []float64) float64 {
	var s float64
	for _, v := range xs {
		s += v
	}
	return s
}

func sumSq(xs []float64) float64 {
	var s float64
	for _, v := range xs {
		s += v * v
	}
	return s
}

// tQuantile is Student's t quantile p at df degrees of freedom (bisection
// on the distribution function).
func tQuantile(p, df float64) float64 {
	t := moremath.TDist{V: df}
	lo, hi := 0.0, 1000.0
	for range 100 {
		mid := (lo + hi) / 2
		if t.CDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
