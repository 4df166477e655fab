package stats

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tandem-bench/tandem/internal/human"
)

// Policy is the verdict policy: the gate a comparison passes before any
// speed rule, and the rule itself. tandem run and tandem compare judge by
// the same Policy, and results.json records the one a run used.
type Policy struct {
	// Rule is the speed rule: RuleShift (the default) or RuleSpread. A
	// file written before rules were recorded has none: RuleSpread.
	Rule Rule `json:"rule,omitempty"`
	// Alpha is the false-alarm rate of a study's verdicts, taken
	// together: the chance that any of them calls a difference where
	// there is none. Default 0.05.
	Alpha float64 `json:"alpha,omitempty"`
	// NoiseFloor is δ as a fraction: a shift smaller than it is no speed
	// verdict, and a pair whose whole interval lies within ±δ is
	// indistinguishable (the spread rule: a relative difference of bests
	// at or below it is indistinguishable). Default 0.02.
	NoiseFloor float64 `json:"noise_floor"`
	// Unstable is the scatter (interquartile range over median) of a
	// target's rounds beyond which it is marked unstable. Default 0.10.
	Unstable float64 `json:"unstable,omitempty"`
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
	return Policy{Rule: RuleShift, Alpha: DefaultAlpha, NoiseFloor: DefaultNoiseFloor, Unstable: DefaultUnstable,
		MaxErrorShareDiff: 0.01, MaxShortfall: 0.01, ClientBoundUse: 0.90, MinRounds: 2}
}

// Normalized is the policy with what a file written before a setting
// existed leaves out filled in as it was then: no rule is the spread
// rule (the only one there was), no alpha the default.
func (p Policy) Normalized() Policy {
	if p.Rule == "" {
		p.Rule = RuleSpread
	}
	if p.Alpha == 0 {
		p.Alpha = DefaultAlpha
	}
	if p.Unstable == 0 {
		p.Unstable = DefaultUnstable
	}
	return p
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
	switch p.Rule {
	case RuleShift, RuleSpread:
	default:
		return fmt.Errorf("policy: rule %q: want %s or %s", p.Rule, RuleShift, RuleSpread)
	}
	if p.Rule == RuleShift && (math.IsNaN(p.Alpha) || p.Alpha <= 0 || p.Alpha >= 0.5) {
		return fmt.Errorf("policy: alpha %v: want a probability above 0, below 0.5", p.Alpha)
	}
	if math.IsNaN(p.Unstable) || p.Unstable < 0 {
		return fmt.Errorf("policy: unstable %v: want a fraction of 0 or more", p.Unstable)
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
	// Dropped arrivals of an open loop were never sent; Unfinished ones were
	// sent and cut off by the run's end (neither failed nor timed);
	// Offered and Achieved are the scheduled and the reached send rates
	// (0 for a closed loop).
	Dropped, Unfinished int64
	Offered, Achieved   float64
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
	// GeneratorUse is the median round's: with many short rounds one
	// round's garbage collection or scrape is not the generator setting
	// the pace, and a generator that sets it does so in most rounds.
	GeneratorUse float64
}

// NewSide summarises one target's rounds, in round order; higherBetter says
// which end of the headline is best.
func NewSide(name string, rounds []Round, higherBetter bool) Side {
	s := Side{Name: name, Rounds: len(rounds), Errors: map[string]int64{}}
	var vals, uses []float64
	for _, rd := range rounds {
		s.Requests += rd.Requests
		s.OK += rd.OK
		for k, v := range rd.Errors {
			s.Errors[k] += v
		}
		s.Dropped += rd.Dropped
		s.Arrivals += rd.Requests + rd.Unfinished + rd.Dropped
		if rd.Offered > 0 {
			if short := 1 - rd.Achieved/rd.Offered; short > s.Shortfall {
				s.Shortfall, s.Offered, s.Achieved = short, rd.Offered, rd.Achieved
			}
		}
		uses = append(uses, rd.GeneratorUse)
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
	s.GeneratorUse = Summarize(uses, true).Median
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
		parts[i] = k + " ×" + human.Count(s.Errors[k])
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

// Percent prints a fraction as a percentage with one decimal: "99.0 %"
// (human.Percent: never e-notation, never Inf).
func Percent(f float64) string { return human.Percent(f) }

// Ratio prints a ratio with three significant digits: "1.21×", "1,450×".
func Ratio(f float64) string { return human.Ratio(f) }

// Sig prints a figure with three significant digits, never in e-notation.
func Sig(f float64) string { return human.Sig(f) }

func count(n int64) string { return human.Count(n) }

func orNone(s string) string {
	if s == "" {
		return "no error recorded"
	}
	return s
}
