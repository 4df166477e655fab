package report

import (
	"fmt"
	"strings"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// verdictClass is a verdict's CSS class: a speed verdict by its word,
// failing, inconclusive and withheld as what they are.
func verdictClass(v stats.Verdict) string {
	switch v {
	case stats.Faster, stats.Slower, stats.Indistinguishable, stats.Failing, stats.Inconclusive:
		return string(v)
	case stats.NoiseReference:
		return "noise"
	}
	return "withheld"
}

// speedWords says a judged pair in words, the same everywhere a verdict
// is shown: a real difference as "N× faster/slower" (N ≥ 1) with its
// interval, an indistinguishable pair with the floor it lies within, an
// undecided pair with its interval and no percentage, and any other
// verdict with its reason. ratio is candidate ÷ base of a headline that
// is higher-better or not.
func speedWords(candidate, base string, v stats.Verdict, ratio float64, higher bool, reason string, e *stats.Estimate) string {
	switch v {
	case stats.Faster, stats.Slower:
		f := max(ratio, 1/ratio)
		s := fmt.Sprintf("%s is %s %s than %s", candidate, stats.Ratio(f), v, base)
		if e != nil && e.Bounded() {
			s += fmt.Sprintf(" (ratio %s [%s … %s], %s confidence)", stats.Ratio(e.Ratio), stats.Ratio(e.Lo), stats.Ratio(e.Hi), stats.Percent(e.Confidence))
		}
		return s
	case stats.Indistinguishable:
		if e != nil {
			return fmt.Sprintf("%s and %s are indistinguishable (within ±%s)", candidate, base, stats.Percent(e.Floor))
		}
		return fmt.Sprintf("%s and %s are indistinguishable", candidate, base)
	case stats.Inconclusive:
		if e != nil && e.Bounded() {
			return fmt.Sprintf("%s vs %s: inconclusive (ratio %s [%s … %s] after %d rounds)", candidate, base,
				stats.Ratio(e.Ratio), stats.Ratio(e.Lo), stats.Ratio(e.Hi), e.Rounds)
		}
		if e != nil {
			return fmt.Sprintf("%s vs %s: inconclusive (%d rounds cannot bound the ratio at the confidence it needs; more rounds would)", candidate, base, e.Rounds)
		}
		return fmt.Sprintf("%s vs %s: inconclusive (%s)", candidate, base, strings.TrimPrefix(reason, "inconclusive: "))
	case stats.Failing:
		return fmt.Sprintf("%s is %s", candidate, reason) // the reason starts "failing: "
	case stats.NoiseReference:
		return "noise reference: " + reason
	}
	return fmt.Sprintf("%s vs %s: verdict withheld (%s)", candidate, base, reason)
}

// familyLine says how a set of verdicts was held together: how many
// comparisons, the chance of any false alarm among them, each one's share
// of it first (α ÷ the comparisons planned) and Holm's step-down at the
// end, and how many that decided; "" without a family (the spread rule, a
// file written before families were recorded, no comparison).
func familyLine(f *results.Family) string {
	if f == nil || f.Method != results.FamilyHolm || f.Size == 0 {
		return ""
	}
	how := "Holm's step-down at the end"
	if f.Planned > 0 {
		how = fmt.Sprintf("each at %s first; %s", stats.Sig(f.Alpha/float64(f.Planned)), how)
	}
	if f.Upgraded > 0 {
		how += fmt.Sprintf(" decided %d more", f.Upgraded)
	}
	what := human.Plural(f.Size, "comparison")
	if f.Planned > f.Size {
		what += fmt.Sprintf(" (%d planned)", f.Planned)
	}
	return fmt.Sprintf("verdicts: %s, the chance of any false alarm held at %s (%s)", what, stats.Sig(f.Alpha), how)
}
