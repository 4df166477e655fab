package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// GateOptions say what a gate holds a run against and how strictly.
type GateOptions struct {
	// BaseBranch is the branch whose history is the baseline.
	BaseBranch string
	// Baseline is last (the branch's newest run), pinned (its newest
	// pinned run) or median:N (per series the median of its newest N).
	Baseline string
	// MaxRegression is the tolerated worsening, in percent of the base.
	MaxRegression float64
	// Alpha is the significance a regression needs on the rounds.
	Alpha float64
	// FailOnMissingBaseline fails a gate that finds no baseline; else it
	// passes with a warning.
	FailOnMissingBaseline bool
}

// MinRounds is the fewest rounds a side needs for a change to be judged
// significant; with fewer, a change past the limit is low confidence.
const MinRounds = 4

// Row states of a gate.
const (
	Regressed     = "regressed"
	Improved      = "improved"
	Unchanged     = "unchanged"
	LowConfidence = "low confidence"
	NotComparable = "not comparable"
	New           = "new"
	Missing       = "missing"
)

// GateRow is one series held against its baseline.
type GateRow struct {
	Series     Series  `json:"series"`
	Base       float64 `json:"base"`
	Head       float64 `json:"head"`
	Unit       string  `json:"unit"`
	Change     float64 `json:"change"` // how much worse the head is, a fraction of the base (negative: better)
	P          float64 `json:"p"`      // two-sided Mann–Whitney p on the rounds; 1 without rounds
	BaseRounds int     `json:"base_rounds"`
	HeadRounds int     `json:"head_rounds"`
	State      string  `json:"state"`
	Note       string  `json:"note,omitempty"`
}

// Gate is a run held against its branch's history.
type Gate struct {
	// Baseline says what the run was held against, in words.
	Baseline string `json:"baseline"`
	// BaseRuns are the stored runs the baseline came from.
	BaseRuns []string  `json:"base_runs"`
	Rows     []GateRow `json:"rows"`
	// NewFailing are the head's failing verdicts the baseline did not
	// have; NewDifferences its compat differences the baseline did not.
	NewFailing     []Verdict    `json:"new_failing"`
	NewDifferences []Difference `json:"new_differences"`
	Warnings       []string     `json:"warnings"`
	// Failed says whether the gate fails, and Reasons why.
	Failed  bool     `json:"failed"`
	Reasons []string `json:"reasons"`
}

// ParseBaseline checks a --baseline value.
func ParseBaseline(s string) (kind string, n int, err error) {
	switch {
	case s == "last" || s == "pinned":
		return s, 1, nil
	case strings.HasPrefix(s, "median:"):
		n, err := strconv.Atoi(strings.TrimPrefix(s, "median:"))
		if err != nil || n < 1 || n > 100 {
			return "", 0, fmt.Errorf("--baseline %q: want median:N with N from 1 to 100", s)
		}
		return "median", n, nil
	}
	return "", 0, fmt.Errorf("--baseline %q: want last, pinned or median:N", s)
}

// GateRun holds a run (its results.json, stored or not) against the
// baseline its options pick from the store.
func (s *Store) GateRun(ctx context.Context, data []byte, o GateOptions) (Gate, error) {
	head, err := results.Parse(data)
	if err != nil {
		return Gate{}, err
	}
	kind, n, err := ParseBaseline(o.Baseline)
	if err != nil {
		return Gate{}, err
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		return Gate{}, fmt.Errorf("--alpha %v: want a probability between 0 and 1", o.Alpha)
	}
	if o.MaxRegression < 0 || math.IsNaN(o.MaxRegression) || math.IsInf(o.MaxRegression, 0) {
		return Gate{}, fmt.Errorf("--max-regression %v: want a percentage of 0 or more", o.MaxRegression)
	}
	// an interrupted run is no baseline
	f := Filter{Study: head.Study.Name, Branch: o.BaseBranch, ExactBranch: true, Pinned: kind == "pinned", Complete: true, Limit: n + 1}
	candidates, err := s.Runs(ctx, f)
	if err != nil {
		return Gate{}, err
	}
	headID := contentID(data)
	var base []Run
	for _, r := range candidates {
		if r.ID != headID && len(base) < n { // the run itself is no baseline
			base = append(base, r)
		}
	}
	g := Gate{Baseline: fmt.Sprintf("%s of %s on %s", o.Baseline, head.Study.Name, o.BaseBranch)}
	if len(base) == 0 {
		msg := fmt.Sprintf("no baseline: %s has no %s run of %q", s.Where, map[bool]string{true: "pinned", false: "stored"}[kind == "pinned"], head.Study.Name)
		if o.BaseBranch != "" {
			msg += " on branch " + o.BaseBranch
		}
		g.Warnings = append(g.Warnings, msg)
		if o.FailOnMissingBaseline {
			g.Failed, g.Reasons = true, []string{msg}
		}
		return g, nil
	}
	var basePoints [][]Point
	knownDiffs := map[string]bool{}
	failingBefore := map[string]bool{}
	for i, r := range base {
		g.BaseRuns = append(g.BaseRuns, r.ID)
		pts, err := s.Points(ctx, r.ID)
		if err != nil {
			return Gate{}, err
		}
		basePoints = append(basePoints, pts)
		ds, err := s.Differences(ctx, r.ID)
		if err != nil {
			return Gate{}, err
		}
		for _, d := range ds {
			knownDiffs[d.Fingerprint] = true
		}
		if i == 0 { // the newest base run says what failed before
			vs, err := s.Verdicts(ctx, r.ID)
			if err != nil {
				return Gate{}, err
			}
			for _, v := range vs {
				if v.Verdict == stats.Failing {
					failingBefore[verdictKey(v)] = true
				}
			}
		}
		if r.EnvFP != EnvFingerprint(head.Machine) && i == 0 {
			g.Warnings = append(g.Warnings, fmt.Sprintf("the baseline run %s was made on another machine (environment %s, this run %s): its figures may differ for that alone",
				r.Short(), r.EnvFP, EnvFingerprint(head.Machine)))
		}
	}
	x := indexOf(head)
	g.Rows = compareSeries(merge(basePoints), x.points, o)
	for _, v := range x.verdicts {
		if v.Verdict == stats.Failing && !failingBefore[verdictKey(v)] {
			g.NewFailing = append(g.NewFailing, v)
		}
	}
	for _, d := range x.diffs {
		if !knownDiffs[d.Fingerprint] {
			g.NewDifferences = append(g.NewDifferences, d)
		}
	}
	for _, r := range g.Rows {
		if r.State == Regressed {
			g.Reasons = append(g.Reasons, fmt.Sprintf("%s regressed: %s worse (p = %.2g)", r.Series, stats.Percent(r.Change), r.P))
		}
	}
	for _, v := range g.NewFailing {
		g.Reasons = append(g.Reasons, fmt.Sprintf("%s %s c=%d is failing, not before: %s", v.Scenario, v.Target, v.Level, v.Reason))
	}
	for _, d := range g.NewDifferences {
		g.Reasons = append(g.Reasons, fmt.Sprintf("a new compat difference: %s on %s at %s (%s, %d cases)", d.Call, d.Target, d.Path, d.Kind, d.Cases))
	}
	g.Failed = len(g.Reasons) > 0
	return g, nil
}

func verdictKey(v Verdict) string { return fmt.Sprintf("%q/%q/%d", v.Scenario, v.Target, v.Level) }

// contentID is the id a run's results.json has in the store.
func contentID(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// merge makes one baseline point per series from several runs: the median
// value, with every run's rounds pooled; a series whose configuration
// changed within the runs keeps the newest run's.
func merge(runs [][]Point) map[string]Point {
	by := map[string][]Point{}
	var order []string
	for _, pts := range runs {
		for _, p := range pts {
			k := p.Series.Key()
			if _, ok := by[k]; !ok {
				order = append(order, k)
			}
			by[k] = append(by[k], p)
		}
	}
	out := map[string]Point{}
	for _, k := range order {
		ps := by[k]
		newest := ps[0]
		var vals, rounds []float64
		for _, p := range ps {
			if p.ConfigFP != newest.ConfigFP {
				continue
			}
			vals = append(vals, p.Value)
			rounds = append(rounds, p.Rounds...)
		}
		sort.Float64s(vals)
		m := vals[len(vals)/2]
		if len(vals)%2 == 0 {
			m = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
		}
		newest.Value, newest.Rounds = m, rounds
		out[k] = newest
	}
	return out
}

// compareSeries holds each head point against its baseline. A
// regression needs both the direction-aware change past the limit and
// significance on the rounds (at least MinRounds a side); counted
// figures (instructions, allocations) are exact and need no rounds.
func compareSeries(base map[string]Point, head []Point, o GateOptions) []GateRow {
	var rows []GateRow
	seen := map[string]bool{}
	limit := o.MaxRegression / 100
	for _, h := range head {
		k := h.Series.Key()
		seen[k] = true
		b, ok := base[k]
		row := GateRow{Series: h.Series, Head: h.Value, Unit: h.Unit, P: 1, HeadRounds: len(h.Rounds)}
		if !ok {
			row.State = New
			rows = append(rows, row)
			continue
		}
		row.Base, row.BaseRounds = b.Value, len(b.Rounds)
		if b.ConfigFP != h.ConfigFP {
			row.State, row.Note = NotComparable, "the series measured something else (call, load or metric changed)"
			rows = append(rows, row)
			continue
		}
		switch {
		case b.Value != 0:
			row.Change = (h.Value - b.Value) / math.Abs(b.Value)
		case h.Value != 0:
			row.Change = math.Inf(1)
		}
		if h.Direction == "higher" {
			row.Change = -row.Change
		}
		exact := h.Unit == "instructions" || h.Unit == "allocations"
		significant := exact
		if len(h.Rounds) >= MinRounds && len(b.Rounds) >= MinRounds {
			_, row.P = stats.MannWhitney(b.Rounds, h.Rounds)
			significant = row.P < o.Alpha
		}
		lowConfidence := !exact && (len(h.Rounds) < MinRounds || len(b.Rounds) < MinRounds)
		switch {
		case math.Abs(row.Change) <= limit:
			row.State = Unchanged
		case lowConfidence:
			row.State = LowConfidence
			row.Note = fmt.Sprintf("%d and %d rounds: a change needs %d a side to be judged", row.BaseRounds, row.HeadRounds, MinRounds)
		case !significant:
			row.State = Unchanged
			row.Note = fmt.Sprintf("past the limit but not significant (p = %.2g ≥ %.2g)", row.P, o.Alpha)
		case row.Change > 0:
			row.State = Regressed
		default:
			row.State = Improved
		}
		rows = append(rows, row)
	}
	var missing []string
	for k := range base {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	slices.Sort(missing)
	for _, k := range missing {
		b := base[k]
		rows = append(rows, GateRow{Series: b.Series, Base: b.Value, Unit: b.Unit, P: 1, BaseRounds: len(b.Rounds), State: Missing})
	}
	return rows
}
