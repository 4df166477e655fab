package stats

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Verdict is the outcome of holding a candidate against a base: one
// vocabulary for every judgement tandem makes (scenario rows, startup,
// sweep cells, search knees, compare, history gate).
type Verdict string

// The verdicts.
const (
	// Faster and Slower: the interval excludes no change and the
	// estimate passes the noise floor.
	Faster Verdict = "faster"
	Slower Verdict = "slower"
	// Indistinguishable: the whole interval lies within ±floor.
	Indistinguishable Verdict = "indistinguishable"
	// Inconclusive: neither; the interval says how far it got.
	Inconclusive Verdict = "inconclusive"
	// Failing is a candidate whose error share is worse than the base's
	// (or that has no successful round where the base has): no speed
	// verdict, since failing fast is not serving fast.
	Failing Verdict = "failing"
	// Withheld is no speed verdict from a run that cannot give one (the
	// reason says why: could not keep up, client-bound, too few rounds).
	Withheld Verdict = "withheld"
	// NoiseReference is the second target of an A/A pair: it runs the
	// base's build, so its distance is the noise floor, not a verdict.
	NoiseReference Verdict = "noise-reference"
	// NotComparable is a row of two runs that measured different things
	// (another call, load or engine).
	NotComparable Verdict = "not comparable"
	// Missing is a row the base run has and the head lacks; New one only
	// the head has.
	Missing Verdict = "missing"
	New     Verdict = "new"
)

// Speed reports a verdict that says which is faster.
func (v Verdict) Speed() bool { return v == Faster || v == Slower }

// Decided reports a verdict more rounds would not change: a speed
// verdict, indistinguishable, or a health verdict.
func (v Verdict) Decided() bool { return v != Inconclusive }

// Rule names a speed rule.
type Rule string

// The speed rules.
const (
	// RuleShift is the default: the shift of the candidate's rounds from
	// the base's on a log scale, with a distribution-free interval, three
	// outcomes and sequential looks (docs/methods.md).
	RuleShift Rule = "shift"
	// RuleSpread is the layered broker study's: the bests compared with
	// the larger best–worst spread; kept to reproduce that table.
	RuleSpread Rule = "spread"
)

// Defaults of the policy.
const (
	DefaultAlpha    = 0.05
	DefaultUnstable = 0.10
)

// Estimate is what the shift rule says of a pair at the look it stopped
// at: the ratio candidate ÷ base of the headline (the Hodges–Lehmann
// estimate on log values, exponentiated), its interval, and the tests.
type Estimate struct {
	// Paired says the rounds were paired (one run's interleaved rounds);
	// else the two sides were independent (two runs).
	Paired bool `json:"paired"`
	// N is the pairs (paired) or the smaller side's rounds; Rounds the
	// look's round count.
	N      int `json:"n"`
	Rounds int `json:"rounds"`
	// Ratio is the estimate; Lo and Hi its interval at Confidence
	// (0 and +Inf, written as 0, when too few rounds bound it).
	Ratio      float64 `json:"ratio"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	// P is the two-sided p-value of "no change" at this look (signed-rank
	// or Mann–Whitney); PSeq the sequential p-value over every look
	// taken, min P ÷ share, which is what study-wide error control
	// (Holm) adjusts.
	P    float64 `json:"p"`
	PSeq float64 `json:"p_seq"`
	// Adjusted is PSeq adjusted for the study's family of comparisons
	// (Holm); a speed verdict has it at most the policy's α.
	Adjusted float64 `json:"p_adjusted,omitempty"`
	// Alpha is the comparison's false-alarm rate; the look spent Share of
	// it, so Confidence ≥ 1 − Alpha·Share.
	Alpha float64 `json:"alpha"`
	Share float64 `json:"share"`
	// Looks are the looks taken, the last the one stopped at.
	Looks []Look `json:"looks"`
	// Floor is the noise floor applied, a fraction.
	Floor float64 `json:"floor"`
}

// Bounded reports an interval with both ends finite (an open end is
// written as 0).
func (e Estimate) Bounded() bool { return e.Lo > 0 && e.Hi > 0 && !math.IsInf(e.Hi, 0) }

// finiteOr0 is v, or 0 for NaN and infinities (which JSON cannot hold).
func finiteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// Judgement is the policy's answer for one candidate against a base.
type Judgement struct {
	Verdict Verdict
	// Reason says how the verdict was reached, in words and units.
	Reason string
	// Ratio is the candidate over the base (the shift rule's estimate, or
	// best over best for the spread rule); NaN without a speed verdict.
	Ratio float64
	// ClientBound is set when the generator may have set the pace.
	ClientBound bool
	// Unhealthy names the side whose run withheld the verdict (dropped
	// arrivals, a short rate, more errors than the other), if one did.
	Unhealthy string
	// TooFewRounds says the verdict was withheld because a side had
	// fewer successful rounds than the policy needs: more rounds would
	// judge it (a gate treats it as undecided).
	TooFewRounds bool
	// Estimate is the shift rule's, when it ran.
	Estimate *Estimate
	// Unstable names the sides whose rounds scatter beyond the policy's
	// Unstable (interquartile range over median).
	Unstable []string
	// Paired is the paired-ratio range and sign test, when there are at
	// least MinPaired pairs; nil otherwise.
	Paired *Paired
}

// Floor is the noise floor at one scenario and level: the policy's,
// raised to aa, the relative distance of an A/A pair measured there.
func (p Policy) Floor(aa float64) float64 {
	if math.IsNaN(aa) {
		return p.NoiseFloor
	}
	return max(p.NoiseFloor, aa)
}

// Judge holds a candidate against a base. First the gate: a candidate
// with a worse error share, or no successful round where the base has
// one, is Failing; a base that fails more (beyond MaxErrorShareDiff),
// dropped arrivals or an achieved rate short of the offered one, a
// client-bound round, or fewer than MinRounds successful rounds on either
// side withhold the verdict. Only a healthy pair gets the speed rule, at
// the noise floor floor, by the design d (ignored by the spread rule).
func (p Policy) Judge(base, cand Side, m Metric, floor float64, d Design) Judgement {
	j := Judgement{Ratio: math.NaN()}
	if pr, ok := Pair(base.Headlines, cand.Headlines); ok && d.Paired {
		j.Paired = &pr
	}
	if g, stop := p.Gate(base, cand); stop {
		g.Paired = j.Paired
		return g
	}
	for _, s := range []Side{base, cand} {
		if scatter(s.Headlines) > p.unstable() {
			j.Unstable = append(j.Unstable, s.Name)
		}
	}
	if p.Rule == RuleSpread {
		return p.spread(j, base, cand, m, floor)
	}
	return p.shift(j, base, cand, m, floor, d)
}

func (p Policy) unstable() float64 {
	if p.Unstable == 0 {
		return DefaultUnstable
	}
	return p.Unstable
}

// Gate is the health gate before any speed rule; stop says it decided
// (Failing or Withheld, whatever the speed rule would say).
func (p Policy) Gate(base, cand Side) (Judgement, bool) {
	j := Judgement{Ratio: math.NaN()}
	withheld := func(format string, args ...any) (Judgement, bool) {
		j.Verdict, j.Reason = Withheld, fmt.Sprintf(format, args...)
		return j, true
	}
	bs, cs := base.ErrorShare(), cand.ErrorShare()
	switch {
	case cand.Rounds == 0:
		return withheld("%s has no rounds", cand.Name)
	case cs > 0 && bs == 0, cs-bs > p.MaxErrorShareDiff:
		j.Verdict, j.Reason = Failing, fmt.Sprintf("failing: %s of requests failed (%s); %s: %s", Percent(cs), cand.ErrorKinds(), base.Name, Percent(bs))
		return j, true
	case cand.Summary.N == 0 && base.Summary.N > 0:
		j.Verdict, j.Reason = Failing, fmt.Sprintf("failing: no successful round of %d (%s)", cand.Rounds, orNone(cand.FirstError))
		return j, true
	case bs-cs > p.MaxErrorShareDiff:
		j.Unhealthy = base.Name
		return withheld("the baseline %s failed %s of requests (%s), %s %s: no speed verdict", base.Name, Percent(bs), base.ErrorKinds(), cand.Name, Percent(cs))
	case base.Summary.N == 0:
		return withheld("the baseline %s has no successful round (%s)", base.Name, orNone(base.FirstError))
	}
	for _, s := range []Side{base, cand} {
		if s.Dropped > 0 {
			j.Unhealthy = s.Name
			return withheld("could not keep up: %s dropped %s of %s arrivals", s.Name, count(s.Dropped), count(s.Arrivals))
		}
		if s.Shortfall > p.MaxShortfall {
			j.Unhealthy = s.Name
			return withheld("could not keep up: %s achieved %s/s of %s/s offered (%s short)", s.Name, Sig(s.Achieved), Sig(s.Offered), Percent(s.Shortfall))
		}
	}
	for _, s := range []Side{base, cand} {
		if s.GeneratorUse >= p.ClientBoundUse {
			j.ClientBound = true
			return withheld("client-bound: the generator used %s of its capacity in the median round of %s: it, not the targets, may have set the pace", Percent(s.GeneratorUse), s.Name)
		}
	}
	for _, s := range []Side{base, cand} {
		if s.Summary.N < p.MinRounds {
			j.TooFewRounds = true
			if s.Summary.N == 1 {
				return withheld("one round: no spread to judge by (%s has 1 successful round; %d needed)", s.Name, p.MinRounds)
			}
			return withheld("%s has %d successful rounds; %d needed", s.Name, s.Summary.N, p.MinRounds)
		}
	}
	if base.Summary.Best <= 0 {
		return withheld("the baseline's best is %s: no ratio", Sig(base.Summary.Best))
	}
	return j, false
}

// spread is the layered broker study's rule: indistinguishable when the
// bests differ by less than the larger spread or by at most floor
// relative to the base, else faster or slower.
func (p Policy) spread(j Judgement, base, cand Side, m Metric, floor float64) Judgement {
	b, c := base.Summary, cand.Summary
	j.Ratio = c.Best / b.Best
	diff := math.Abs(c.Best - b.Best)
	spread := math.Max(b.Spread, c.Spread)
	rel := diff / math.Abs(b.Best)
	note := failedNote(base, cand)
	switch {
	case diff < spread:
		j.Verdict, j.Ratio = Indistinguishable, math.NaN()
		j.Reason = fmt.Sprintf("the bests differ by %s, within the run-to-run spread %s", m.format(diff), m.format(spread)) + note
		return j
	case rel <= floor:
		j.Verdict, j.Ratio = Indistinguishable, math.NaN()
		j.Reason = fmt.Sprintf("the bests differ by %s, within the %s noise floor", Percent(rel), Percent(floor)) + note
		return j
	}
	j.Verdict = direction(j.Ratio, m.HigherBetter)
	j.Reason = fmt.Sprintf("the bests differ by %s (%s), beyond the run-to-run spread %s and the %s noise floor",
		m.format(diff), Percent(rel), m.format(spread), Percent(floor)) + note
	return j
}

// direction is Faster or Slower for a ratio candidate ÷ base ≠ 1.
func direction(ratio float64, higherBetter bool) Verdict {
	if (ratio > 1) == higherBetter {
		return Faster
	}
	return Slower
}

// Verdict is the shift rule's word for a shift of log values (the
// candidate's over the base's): Faster or Slower when its interval
// excludes no change and its estimate passes ±floor (a fraction: 0.02 is
// 2 %), Indistinguishable when the whole interval lies within ±floor,
// Inconclusive otherwise (and for a shift of nothing). The verdict engine
// and history's top movers decide by it.
func (s Shift) Verdict(floor float64, higherBetter bool) Verdict {
	lf := math.Log1p(floor)
	switch {
	case math.IsNaN(s.Est):
		return Inconclusive
	case (s.Lo > 0 || s.Hi < 0) && math.Abs(s.Est) > lf:
		return direction(math.Exp(s.Est), higherBetter)
	case s.Lo >= -lf && s.Hi <= lf:
		return Indistinguishable
	}
	return Inconclusive
}

// shift is the default rule. At each look of d, in order, it estimates
// the log ratio of the candidate's rounds to the base's (paired rounds:
// the signed-rank interval; independent: the Mann–Whitney one) at level
// 1 − Alpha·share, and stops at the first look that decides: Faster or
// Slower when the interval excludes no change and the estimate passes
// ±floor, Indistinguishable when the interval lies within ±floor. A
// pair no look decides is Inconclusive, with its last interval.
func (p Policy) shift(j Judgement, base, cand Side, m Metric, floor float64, d Design) Judgement {
	alpha := d.Alpha
	if !(alpha > 0) {
		alpha = p.Alpha
	}
	if !(alpha > 0) {
		alpha = DefaultAlpha
	}
	looks := d.Looks
	rounds := max(len(base.Headlines), len(cand.Headlines))
	if len(looks) == 0 {
		looks = []Look{{Rounds: rounds, Share: 1}}
	}
	e := Estimate{Paired: d.Paired, Alpha: alpha, Floor: floor, PSeq: 1}
	var sh Shift
	j.Verdict = Inconclusive
	for _, l := range looks {
		if l.Rounds > rounds || l.Share <= 0 {
			break
		}
		sh = shiftAt(base.Headlines, cand.Headlines, l.Rounds, alpha*l.Share, d.Paired)
		e.Looks = append(e.Looks, l)
		e.Rounds, e.Share = l.Rounds, l.Share
		e.PSeq = math.Min(e.PSeq, math.Min(1, sh.P/l.Share))
		if j.Verdict = sh.Verdict(floor, m.HigherBetter); j.Verdict != Inconclusive {
			break
		}
	}
	if len(e.Looks) == 0 {
		j.Verdict, j.Reason = Withheld, fmt.Sprintf("%d rounds: the first look is at %d", rounds, looks[0].Rounds)
		return j
	}
	e.N, e.Ratio, e.Confidence, e.P = sh.N, finiteOr0(math.Exp(sh.Est)), sh.Confidence, sh.P
	e.Lo, e.Hi = finiteOr0(math.Exp(sh.Lo)), finiteOr0(math.Exp(sh.Hi)) // an open end is 0: JSON has no infinity
	j.Estimate = &e
	j.Reason = e.describe(j.Verdict, m) + failedNote(base, cand)
	if j.Verdict.Speed() {
		j.Ratio = e.Ratio
	}
	if len(j.Unstable) > 0 {
		j.Reason += fmt.Sprintf("; unstable: %s (rounds scatter by more than %s of their median)", strings.Join(j.Unstable, ", "), Percent(p.unstable()))
	}
	return j
}

// shiftAt is the shift of the first rounds rounds of both sides' log
// headlines at level 1 − alpha.
func shiftAt(base, cand []float64, rounds int, alpha float64, paired bool) Shift {
	logs := func(vs []float64) []float64 {
		out := make([]float64, 0, len(vs))
		for _, v := range vs[:min(rounds, len(vs))] {
			if v > 0 {
				out = append(out, math.Log(v))
			} else {
				out = append(out, math.NaN())
			}
		}
		return out
	}
	b, c := logs(base), logs(cand)
	if !paired {
		return TwoSampleShift(b, c, alpha)
	}
	var d []float64
	for i := range min(len(b), len(c)) {
		if !math.IsNaN(b[i]) && !math.IsNaN(c[i]) {
			d = append(d, c[i]-b[i])
		}
	}
	return PairedShift(d, alpha)
}

// describe is the reason of a shift verdict: the estimate and its
// interval, and for an undecided pair what it would take.
func (e Estimate) describe(v Verdict, m Metric) string {
	kind := "paired rounds"
	if !e.Paired {
		kind = "rounds a side"
	}
	conf := Percent(e.Confidence)
	if e.Confidence <= 0 {
		conf = "no"
	}
	interval := fmt.Sprintf("%s [%s … %s]", Ratio(e.Ratio), Ratio(e.Lo), Ratio(e.Hi))
	if !e.Bounded() {
		interval = fmt.Sprintf("%s, unbounded", Ratio(e.Ratio))
	}
	what := "latency"
	if m.HigherBetter {
		what = "throughput"
	}
	switch v {
	case Faster, Slower:
		return fmt.Sprintf("%s %s: ratio %s at %s confidence over %d %s (p = %s)", what, times(e.Ratio, v), interval, conf, e.N, kind, Sig(e.P))
	case Indistinguishable:
		return fmt.Sprintf("within ±%s: ratio %s at %s confidence over %d %s", Percent(e.Floor), interval, conf, e.N, kind)
	}
	if !e.Bounded() {
		return fmt.Sprintf("inconclusive: %d %s cannot bound the ratio at the %s confidence this comparison needs; more rounds would", e.N, kind, Percent(1-e.Alpha*e.Share))
	}
	return fmt.Sprintf("inconclusive: ratio %s at %s confidence over %d %s: neither clear of no change by more than ±%s nor within it",
		interval, conf, e.N, kind, Percent(e.Floor))
}

// times says how much faster or slower a ratio is: "1.21× slower" for a
// latency ratio of 1.21 or a throughput ratio of 1/1.21.
func times(ratio float64, v Verdict) string {
	return Ratio(max(ratio, 1/ratio)) + " " + string(v)
}

// scatter is the interquartile range of the finite positive values over
// their median (quartiles by linear interpolation); 0 with fewer than
// three. Unlike the spread it does not grow with the number of rounds,
// and unlike the median absolute deviation it sees a third of the rounds
// stalling.
func scatter(vs []float64) float64 {
	var xs []float64
	for _, v := range vs {
		if v > 0 && !math.IsInf(v, 0) {
			xs = append(xs, v)
		}
	}
	if len(xs) < 3 {
		return 0
	}
	slices.Sort(xs)
	q := func(f float64) float64 {
		pos := f * float64(len(xs)-1)
		i := int(pos)
		if i+1 >= len(xs) {
			return xs[len(xs)-1]
		}
		return xs[i] + (pos-float64(i))*(xs[i+1]-xs[i])
	}
	return (q(0.75) - q(0.25)) / median(xs)
}

func failedNote(base, cand Side) string {
	if n := base.Failed + cand.Failed; n > 0 {
		return fmt.Sprintf(" (%d failed rounds left out)", n)
	}
	return ""
}
