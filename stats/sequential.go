package stats

import (
	"math"
	"slices"
)

// Look is one point at which a sequential comparison may decide: after
// Rounds rounds, spending Share of the comparison's false-alarm rate.
type Look struct {
	Rounds int     `json:"rounds"`
	Share  float64 `json:"share"`
}

// Design says how a comparison's rounds were gathered and how much of the
// false-alarm rate it may spend, and where.
type Design struct {
	// Paired is a comparison whose rounds ran side by side, round i of
	// the base beside round i of the candidate (one run's interleaved
	// rounds); else the two sets are independent (two runs).
	Paired bool
	// Alpha is the comparison's false-alarm rate: the family's α divided
	// by the family's size during a run (Bonferroni), Holm's step after.
	Alpha float64
	// Looks are the points, in order, at which it may decide; their
	// shares add up to at most 1. Empty: one look at every round there
	// is, with the whole Alpha.
	Looks []Look
}

// Schedule plans the looks of a sequential comparison at false-alarm
// rate alpha with at most maxRounds rounds: the first where the exact
// signed-rank test can reject at its share at all (2^(1−n) ≤ its α,
// so no look is spent where no decision is possible), then every 25 %
// more rounds, the last at maxRounds. Each look's share of alpha is in
// proportion to its rounds, so later looks, which see more, spend more.
// This is Bonferroni over the looks (an alpha-spending plan): whatever the
// data and whenever the comparison stops, the chance of any false alarm
// is at most alpha. A maxRounds too small for any decision gives one
// look at maxRounds.
func Schedule(alpha float64, maxRounds int) []Look {
	if maxRounds < 1 || !(alpha > 0) {
		return nil
	}
	first := 6
	var looks []Look
	for range 20 {
		looks = looks[:0]
		for n := first; n <= maxRounds; {
			looks = append(looks, Look{Rounds: n})
			next := max(n+1, int(math.Ceil(float64(n)*1.25)))
			if n < maxRounds && next > maxRounds {
				next = maxRounds
			}
			n = next
		}
		if len(looks) == 0 {
			return []Look{{Rounds: maxRounds, Share: 1}}
		}
		total := 0
		for _, l := range looks {
			total += l.Rounds
		}
		for i := range looks {
			looks[i].Share = float64(looks[i].Rounds) / float64(total)
		}
		if math.Pow(2, float64(1-first)) <= alpha*looks[0].Share {
			return looks
		}
		first++
	}
	return looks
}

// Final is the looks of a comparison whose rounds ended after rounds
// rounds: the planned looks up to rounds, the last of them (or one more
// at rounds, when the budget ended between looks) spending what the
// looks not taken would have.
func Final(plan []Look, rounds int) []Look {
	var out []Look
	spent := 0.0
	for _, l := range plan {
		if l.Rounds > rounds {
			break
		}
		out = append(out, l)
		spent += l.Share
	}
	switch {
	case spent >= 1-1e-12:
	case len(out) > 0 && out[len(out)-1].Rounds == rounds:
		out[len(out)-1].Share += 1 - spent
	default:
		out = append(out, Look{Rounds: rounds, Share: 1 - spent})
	}
	return out
}

// Holm adjusts the p-values of a family of comparisons (Holm 1979): a
// comparison whose adjusted p is at most α is a discovery with the
// family's chance of any false one at most α, whatever the dependence
// between them. NaNs stay NaN and do not count.
func Holm(ps []float64) []float64 {
	idx := make([]int, 0, len(ps))
	for i, p := range ps {
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case ps[a] < ps[b]:
			return -1
		case ps[a] > ps[b]:
			return 1
		}
		return 0
	})
	out := make([]float64, len(ps))
	for i := range out {
		out[i] = math.NaN()
	}
	m, run := len(idx), 0.0
	for rank, i := range idx {
		run = max(run, math.Min(1, float64(m-rank)*ps[i]))
		out[i] = run
	}
	return out
}

// HolmLevel is the false-alarm rate Holm's step-down gives the comparison
// whose p-value is p in a family with the given p-values at rate alpha:
// alpha/(m − rank), where rank counts the p-values below p. Only a
// comparison whose every predecessor was rejected reaches its level;
// callers check Holm's adjusted p first.
func HolmLevel(ps []float64, p, alpha float64) float64 {
	m, below := 0, 0
	for _, q := range ps {
		if math.IsNaN(q) {
			continue
		}
		m++
		if q < p {
			below++
		}
	}
	if m == 0 {
		return alpha
	}
	return alpha / float64(m-below)
}
