package stats

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Verdicts that say why no speed verdict was given.
const (
	// Failing is a candidate whose error share is worse than the base's
	// (or that has no successful round where the base has): it gets no
	// speed verdict, since failing fast is not serving fast.
	Failing = "failing"
	// NoiseReference is the second target of an A/A pair: it runs the
	// base's build, so its distance is the noise floor, not a verdict.
	NoiseReference = "noise-reference"
)

// Policy is the verdict policy: the gate a comparison passes before any
// speed rule, and the rule itself. tandem run and tandem compare judge by
// the same Policy, and results.json records the one a run used.
type Policy struct {
	// NoiseFloor is δ as a fraction: a relative difference of bests at or
	// below it is indistinguishable. Default 0.02.
	NoiseFloor float64 `json:"noise_floor"`
	// MaxErrorShareDiff is how far (a fraction: 0.01 is one percentage
	// point) a candidate's share of failed requests may exceed the base's
	// before it is failing. Any errors where the base has none are failing
	// too. Default 0.01.
	MaxErrorShareDiff float64 `json:"max_error_share_diff"`
	// MaxShortfall is how far (a fraction of the offered rate) the achieved
	// rate of an open or batched loop may fall short before the verdict is
	// withheld; any dropped arrival withholds it as well. Default 0.01.
	MaxShortfall float64 `json:"max_shortfall"`
	// ClientBoundUse is the share of the engine's capacity the generator
	// may use in a round before the verdict is withheld as client-bound.
	// Default 0.90.
	ClientBoundUse float64 `json:"client_bound_use"`
	// MinRounds is the fewest successful rounds a side needs for a speed
	// verdict: one round has no spread to judge by. Default 2.
	MinRounds int `json:"min_rounds"`
}

// DefaultPolicy is the policy of a study that sets none of its thresholds.
func DefaultPolicy() Policy {
	return Policy{NoiseFloor: DefaultNoiseFloor, MaxErrorShareDiff: 0.01, MaxShortfall: 0.01, ClientBoundUse: 0.90, MinRounds: 2}
}

// Validate reports a threshold out of its range.
func (p Policy) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"noise_floor", p.NoiseFloor}, {"max_error_share_diff", p.MaxErrorShareDiff}, {"max_shortfall", p.MaxShortfall}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v >= 1 {
			return fmt.Errorf("policy: %s %v: want a fraction from 0 to below 1", f.name, f.v)
		}
	}
	if math.IsNaN(p.ClientBoundUse) || p.ClientBoundUse <= 0 || p.ClientBoundUse > 1 {
		return fmt.Errorf("policy: client_bound_use %v: want a fraction above 0, at most 1", p.ClientBoundUse)
	}
	if p.MinRounds < 2 {
		return fmt.Errorf("policy: min_rounds %d: want at least 2 (one round has no spread)", p.MinRounds)
	}
	return nil
}

// Round is what the policy needs to know of one measured round.
type Round struct {
	// Headline is the round's value of the scenario's metric, from its
	// successful answers only.
	Headline float64
	// Failed is a round that did not complete or had no successful unit;
	// Error says why.
	Failed bool
	Error  string
	// Requests were sent, OK of them succeeded; Errors counts the rest by
	// status.
	Requests, OK int64
	Errors       map[string]int64
	// Dropped arrivals of an open loop were never sent; Offered and
	// Achieved are the scheduled and the reached send rates (0 for a
	// closed loop).
	Dropped           int64
	Offered, Achieved float64
	// GeneratorUse is the generator's CPU use in the round as a share of
	// the engine's capacity.
	GeneratorUse float64
}

// Side is one target's rounds at one level, as the policy sees them.
type Side struct {
	Name string
	// Summary is best, median and worst of the successful rounds.
	Summary Summary
	// Headlines are the rounds' headlines by round, NaN where a round
	// failed: the pairs of the paired-ratio test.
	Headlines []float64
	// Rounds counts every round, Failed the failed ones; FirstError is
	// the first failed round's error.
	Rounds, Failed int
	FirstError     string
	// Requests and Errors add up every round's.
	Requests, OK int64
	Errors       map[string]int64
	// Dropped adds up the dropped arrivals; Shortfall is the largest
	// shortfall of a round's achieved rate below its offered rate (a
	// fraction), at Offered and Achieved.
	Dropped, Arrivals int64
	Shortfall         float64
	Offered, Achieved float64
	// GeneratorUse is the busiest round's.
	GeneratorUse float64
}

// NewSide summarises one target's rounds, in round order; higherBetter says
// which end of the headline is best.
func NewSide(name string, rounds []Round, higherBetter bool) Side {
	s := Side{Name: name, Rounds: len(rounds), Errors: map[string]int64{}}
	var vals []float64
	for _, rd := range rounds {
		s.Requests += rd.Requests
		s.OK += rd.OK
		for k, v := range rd.Errors {
			s.Errors[k] += v
		}
		s.Dropped += rd.Dropped
		s.Arrivals += rd.Requests + rd.Dropped
		if rd.Offered > 0 {
			if short := 1 - rd.Achieved/rd.Offered; short > s.Shortfall {
				s.Shortfall, s.Offered, s.Achieved = short, rd.Offered, rd.Achieved
			}
		}
		s.GeneratorUse = max(s.GeneratorUse, rd.GeneratorUse)
		if rd.Failed || math.IsNaN(rd.Headline) {
			s.Failed++
			if s.FirstError == "" {
				s.FirstError = rd.Error
			}
			s.Headlines = append(s.Headlines, math.NaN())
			continue
		}
		vals = append(vals, rd.Headline)
		s.Headlines = append(s.Headlines, rd.Headline)
	}
	s.Summary = Summarize(vals, higherBetter)
	return s
}

// ErrorShare is the share of the side's requests that failed.
func (s Side) ErrorShare() float64 {
	if s.Requests == 0 {
		return 0
	}
	return float64(s.Requests-s.OK) / float64(s.Requests)
}

// ErrorKinds lists the side's failed requests by status, most frequent
// first: "http:503 ×990, timeout ×2".
func (s Side) ErrorKinds() string {
	keys := make([]string, 0, len(s.Errors))
	for k, v := range s.Errors {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		if d := s.Errors[b] - s.Errors[a]; d != 0 {
			return int(min(max(d, -1), 1))
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " ×" + strconv.FormatInt(s.Errors[k], 10)
	}
	return strings.Join(parts, ", ")
}

// Metric says how to read a headline: which end is best and how to print
// a value of it (a duration, a rate).
type Metric struct {
	HigherBetter bool
	Format       func(float64) string
}

func (m Metric) format(v float64) string {
	if m.Format == nil {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	return m.Format(v)
}

// Judgement is the policy's answer for one candidate against a base.
type Judgement struct {
	Verdict string
	// Reason says how the verdict was reached, in words and units.
	Reason string
	// Ratio is candidate best / base best; NaN without a speed verdict.
	Ratio float64
	// ClientBound is set when the generator may have set the pace.
	ClientBound bool
	// Unhealthy names the side whose run withheld the verdict (dropped
	// arrivals, a short rate, more errors than the other), if one did.
	Unhealthy string
	// Paired is the paired-ratio interval and sign test, when there are
	// at least MinPaired pairs; nil otherwise.
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
// dropped arrivals or an achieved
// rate short of the offered one, a client-bound round, or fewer than
// MinRounds successful rounds on either side withhold the verdict. Only a
// healthy pair gets the speed rule: Indistinguishable when the bests
// differ by less than the larger spread or by at most floor relative to
// the base, else Faster or Slower.
func (p Policy) Judge(base, cand Side, m Metric, floor float64) Judgement {
	j := Judgement{Ratio: math.NaN()}
	withheld := func(format string, args ...any) Judgement {
		j.Verdict, j.Reason = Withheld, fmt.Sprintf(format, args...)
		return j
	}
	if pr, ok := Pair(base.Headlines, cand.Headlines); ok {
		j.Paired = &pr
	}
	bs, cs := base.ErrorShare(), cand.ErrorShare()
	switch {
	case cand.Rounds == 0:
		return withheld("%s has no rounds", cand.Name)
	case cs > 0 && bs == 0, cs-bs > p.MaxErrorShareDiff:
		j.Verdict, j.Reason = Failing, fmt.Sprintf("failing: %s of requests failed (%s); %s: %s", Percent(cs), cand.ErrorKinds(), base.Name, Percent(bs))
		return j
	case cand.Summary.N == 0 && base.Summary.N > 0:
		j.Verdict, j.Reason = Failing, fmt.Sprintf("failing: no successful round of %d (%s)", cand.Rounds, orNone(cand.FirstError))
		return j
	case bs-cs > p.MaxErrorShareDiff:
		j.Unhealthy = base.Name
		return withheld("the baseline %s failed %s of requests (%s), %s %s: no speed verdict", base.Name, Percent(bs), base.ErrorKinds(), cand.Name, Percent(cs))
	case base.Summary.N == 0:
		return withheld("the baseline %s has no successful round (%s)", base.Name, orNone(base.FirstError))
	}
	for _, s := range []Side{base, cand} {
		if s.Dropped > 0 {
			j.Unhealthy = s.Name
			return withheld("could not keep up: %s dropped %d of %d arrivals", s.Name, s.Dropped, s.Arrivals)
		}
		if s.Shortfall > p.MaxShortfall {
			j.Unhealthy = s.Name
			return withheld("could not keep up: %s achieved %.4g/s of %.4g/s offered (%s short)", s.Name, s.Achieved, s.Offered, Percent(s.Shortfall))
		}
	}
	for _, s := range []Side{base, cand} {
		if s.GeneratorUse >= p.ClientBoundUse {
			j.ClientBound = true
			return withheld("client-bound: the generator used %s of its capacity in a round of %s: it, not the targets, may have set the pace", Percent(s.GeneratorUse), s.Name)
		}
	}
	for _, s := range []Side{base, cand} {
		if s.Summary.N < p.MinRounds {
			if s.Summary.N == 1 {
				return withheld("one round: no spread to judge by (%s has 1 successful round; %d needed)", s.Name, p.MinRounds)
			}
			return withheld("%s has %d successful rounds; %d needed", s.Name, s.Summary.N, p.MinRounds)
		}
	}
	b, c := base.Summary, cand.Summary
	if b.Best == 0 {
		return withheld("the baseline's best is 0: no ratio")
	}
	j.Ratio = c.Best / b.Best
	diff := math.Abs(c.Best - b.Best)
	spread := math.Max(b.Spread, c.Spread)
	rel := diff / math.Abs(b.Best)
	note := ""
	if n := base.Failed + cand.Failed; n > 0 {
		note = fmt.Sprintf(" (%d failed rounds left out)", n)
	}
	switch {
	case diff < spread:
		j.Verdict = Indistinguishable
		j.Reason = fmt.Sprintf("the bests differ by %s, within the run-to-run spread %s", m.format(diff), m.format(spread)) + note
		return j
	case rel <= floor:
		j.Verdict = Indistinguishable
		j.Reason = fmt.Sprintf("the bests differ by %s, within the %s noise floor", Percent(rel), Percent(floor)) + note
		return j
	}
	better := c.Best < b.Best
	if m.HigherBetter {
		better = !better
	}
	j.Verdict = Slower
	if better {
		j.Verdict = Faster
	}
	j.Reason = fmt.Sprintf("the bests differ by %s (%s), beyond the run-to-run spread %s and the %s noise floor",
		m.format(diff), Percent(rel), m.format(spread), Percent(floor)) + note
	return j
}

// Percent prints a fraction as a percentage with one decimal: "99.0 %".
func Percent(f float64) string {
	return strconv.FormatFloat(100*f, 'f', 1, 64) + " %"
}

func orNone(s string) string {
	if s == "" {
		return "no error recorded"
	}
	return s
}
