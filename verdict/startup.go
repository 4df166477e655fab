package verdict

import (
	"fmt"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// StartupSide is a target's starts from empty as the verdict policy sees
// them: each start a round whose headline is its ready time.
func StartupSide(t *results.Target) stats.Side {
	rs := make([]stats.Round, len(t.StartupRuns))
	for i, s := range t.StartupRuns {
		rs[i] = stats.Round{Headline: float64(s.ReadyNs)}
	}
	return stats.NewSide(t.Name, rs, false)
}

// Startup holds each target's ready times against the baseline's by p
// at false-alarm rate alpha (starts interleaved, A B, A B, …, so paired),
// setting StartupVerdict on every target but the baseline. A target that
// failed to start where the baseline did not is failing.
func Startup(p stats.Policy, targets []results.Target, baseline string, alpha float64) {
	var base *results.Target
	for i := range targets {
		if targets[i].Name == baseline {
			base = &targets[i]
		}
	}
	if base == nil || len(base.StartupRuns) == 0 && base.Error == "" {
		return // no baseline, or one tandem does not start
	}
	bs := StartupSide(base)
	for i := range targets {
		t := &targets[i]
		if t == base || len(t.StartupRuns) == 0 && t.Error == "" {
			continue
		}
		c := &results.Comparison{Base: baseline, Candidate: t.Name, NoiseFloor: p.Floor(0)}
		switch {
		case t.Error != "" && base.Error == "":
			c.Verdict = stats.Failing
			c.Reason = fmt.Sprintf("failing: started %d times, then failed: %s", len(t.StartupRuns), firstLine(t.Error))
		case base.Error != "":
			c.Verdict, c.Reason = stats.Withheld, fmt.Sprintf("the baseline %s failed to start: %s", baseline, firstLine(base.Error))
		default:
			setJudgement(c, judgeStartup(p, bs, StartupSide(t), alpha))
		}
		t.StartupVerdict = c
	}
}

// judgeStartup holds one target's starts against the baseline's.
func judgeStartup(p stats.Policy, base, cand stats.Side, alpha float64) stats.Judgement {
	return p.Judge(base, cand, stats.Metric{Format: CellMetric.Format}, p.Floor(0), stats.Design{Paired: true, Alpha: alpha})
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
