package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tandem-bench/tandem/changepoint"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/verdict"
)

// GateOptions say what a gate holds a run against and how strictly.
type GateOptions struct {
	// BaseBranch is the branch whose history is the baseline.
	BaseBranch string
	// Baseline is last (the branch's newest run), pinned (its newest
	// pinned run) or median:N (the newest N runs' rounds pooled).
	Baseline string
	// MaxRegression is the tolerated worsening, in percent of the base.
	MaxRegression float64
	// Alpha, if set, is the false-alarm rate of the gate's rows taken
	// together, when it is stricter (higher) than the runs recorded.
	Alpha float64
	// OnInconclusive says whether an undecided row fails; AllowChanged
	// passes a row whose definition changed.
	OnInconclusive verdict.OnInconclusive
	AllowChanged   bool
	// FailOnMissingBaseline fails a gate that finds no baseline; else it
	// passes with a warning.
	FailOnMissingBaseline bool
	// OnChangePoint fails a run that starts a change point of the base
	// branch's history that is a regression nobody acknowledged.
	OnChangePoint bool
	// ChangePoints are the detector's settings for it.
	ChangePoints changepoint.Options
}

// Gate is a run held against its branch's history: the comparison of
// tandem compare against the baseline run (or the newest runs pooled),
// and what only history knows: verdicts newly failing and compat
// differences not seen before.
type Gate struct {
	// Baseline says what the run was held against, in words.
	Baseline string `json:"baseline"`
	// BaseRuns are the stored runs the baseline came from.
	BaseRuns []string `json:"base_runs"`
	// Changes are the rows of the comparison (tandem compare's).
	Changes []verdict.Change `json:"changes"`
	// NewFailing are the head's failing verdicts the baseline did not
	// have; NewDifferences its compat differences the baseline did not.
	NewFailing     []Verdict    `json:"new_failing"`
	NewDifferences []Difference `json:"new_differences"`
	Warnings       []string     `json:"warnings"`
	// ChangePoints are the change points the run starts on the base
	// branch's history (with OnChangePoint).
	ChangePoints []ChangePoint `json:"change_points,omitempty"`
	// Failed says whether the gate fails, and Reasons why.
	Failed  bool     `json:"failed"`
	Reasons []string `json:"reasons"`
	// Comparison is the comparison itself, for a report to render.
	Comparison verdict.Comparison `json:"-"`
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
	kind, n, err := checkGateOptions(o)
	if err != nil {
		return Gate{}, err
	}
	headID := contentID(data)
	base, err := s.baseRuns(ctx, head, headID, kind, n, o.BaseBranch)
	if err != nil {
		return Gate{}, err
	}
	g := Gate{Baseline: fmt.Sprintf("%s of %s on %s", o.Baseline, head.Study.Name, o.BaseBranch)}
	if len(base) == 0 {
		s.noBaseline(&g, head, kind, o)
		return g, nil
	}
	b, err := s.readBase(ctx, &g, base, head)
	if err != nil {
		return Gate{}, err
	}
	cmp, err := verdict.CompareRuns(verdict.Pool(b.runs), head, verdict.Options{MaxRegression: o.MaxRegression, Alpha: o.Alpha,
		OnInconclusive: o.OnInconclusive, AllowChanged: o.AllowChanged})
	if err != nil {
		return Gate{}, err
	}
	g.Comparison, g.Changes = cmp, cmp.Changes
	g.Warnings = append(g.Warnings, cmp.Warnings...)
	x := indexOf(head)
	g.newSince(x, b)
	g.addReasons(cmp)
	if o.OnChangePoint {
		cps, err := s.headChanges(ctx, head.Study.Name, o.BaseBranch, headID, "", head.CreatedAt, x, o.ChangePoints)
		if err != nil {
			return Gate{}, err
		}
		g.ChangePoints = cps
		for _, c := range cps {
			if c.Open() {
				g.Reasons = append(g.Reasons, "a change point starts here: "+c.Text())
			}
		}
	}
	g.Failed = len(g.Reasons) > 0
	return g, nil
}

// checkGateOptions checks a gate's baseline, alpha and tolerated
// regression, and says the baseline's kind and how many runs it pools.
func checkGateOptions(o GateOptions) (kind string, n int, err error) {
	kind, n, err = ParseBaseline(o.Baseline)
	if err != nil {
		return "", 0, err
	}
	if o.Alpha < 0 || o.Alpha >= 0.5 || math.IsNaN(o.Alpha) {
		return "", 0, fmt.Errorf("--alpha %v: want a probability above 0 and below 0.5", o.Alpha)
	}
	if o.MaxRegression < 0 || math.IsNaN(o.MaxRegression) || math.IsInf(o.MaxRegression, 0) {
		return "", 0, fmt.Errorf("--max-regression %v: want a percentage of 0 or more", o.MaxRegression)
	}
	return kind, n, nil
}

// baseRuns are the stored runs of head's study on branch a baseline of
// kind pools (at most n), newest first, the run itself (headID) not among
// them.
func (s *Store) baseRuns(ctx context.Context, head *results.Results, headID, kind string, n int, branch string) ([]Run, error) {
	// an interrupted run is no baseline
	f := Filter{Study: head.Study.Name, Branch: branch, ExactBranch: true, Pinned: kind == "pinned", Complete: true, Limit: n + 1}
	candidates, err := s.Runs(ctx, f)
	if err != nil {
		return nil, err
	}
	var base []Run
	for _, r := range candidates {
		if r.ID != headID && len(base) < n { // the run itself is no baseline
			base = append(base, r)
		}
	}
	return base, nil
}

// noBaseline warns that the gate found no baseline, and fails it if the
// options say so.
func (s *Store) noBaseline(g *Gate, head *results.Results, kind string, o GateOptions) {
	msg := fmt.Sprintf("no baseline: %s has no %s run of %q", s.Where, map[bool]string{true: "pinned", false: "stored"}[kind == "pinned"], head.Study.Name)
	if o.BaseBranch != "" {
		msg += " on branch " + o.BaseBranch
	}
	g.Warnings = append(g.Warnings, msg)
	if o.FailOnMissingBaseline {
		g.Failed, g.Reasons = true, []string{msg}
	}
}

// gateBase is what a gate reads of its base runs: their results, the
// compat differences they knew and the verdicts failing in the newest.
type gateBase struct {
	runs          []*results.Results
	knownDiffs    map[string]bool
	failingBefore map[string]bool
}

// readBase reads the base runs into g (their ids, a warning for a newest
// made on another machine) and a gateBase.
func (s *Store) readBase(ctx context.Context, g *Gate, base []Run, head *results.Results) (gateBase, error) {
	b := gateBase{knownDiffs: map[string]bool{}, failingBefore: map[string]bool{}}
	for i, r := range base {
		g.BaseRuns = append(g.BaseRuns, r.ID)
		res, err := s.Results(ctx, r.ID)
		if err != nil {
			return gateBase{}, err
		}
		b.runs = append(b.runs, res)
		ds, err := s.Differences(ctx, r.ID)
		if err != nil {
			return gateBase{}, err
		}
		for _, d := range ds {
			b.knownDiffs[d.Fingerprint] = true
		}
		if i == 0 { // the newest base run says what failed before
			vs, err := s.Verdicts(ctx, r.ID)
			if err != nil {
				return gateBase{}, err
			}
			for _, v := range vs {
				if v.Verdict == string(stats.Failing) {
					b.failingBefore[verdictKey(v)] = true
				}
			}
		}
		if r.EnvFP != EnvFingerprint(head.Machine) && i == 0 {
			g.Warnings = append(g.Warnings, fmt.Sprintf("the baseline run %s was made on another machine (environment %s, this run %s): its figures may differ for that alone",
				r.Short(), r.EnvFP, EnvFingerprint(head.Machine)))
		}
	}
	return b, nil
}

// newSince sets the head's (x's) failing verdicts and compat differences
// the base did not have.
func (g *Gate) newSince(x index, b gateBase) {
	for _, v := range x.verdicts {
		if v.Verdict == string(stats.Failing) && !b.failingBefore[verdictKey(v)] {
			g.NewFailing = append(g.NewFailing, v)
		}
	}
	for _, d := range x.diffs {
		if !b.knownDiffs[d.Fingerprint] {
			g.NewDifferences = append(g.NewDifferences, d)
		}
	}
}

// addReasons adds the reasons to fail of the comparison, its regressions
// and what newSince found.
func (g *Gate) addReasons(cmp verdict.Comparison) {
	g.Reasons = append(g.Reasons, cmp.Failures...)
	for _, ch := range cmp.Changes {
		if ch.Regression {
			g.Reasons = append(g.Reasons, fmt.Sprintf("%s: %s: %s", ch.Label(), ch.Verdict, ch.Reason))
		}
	}
	for _, v := range g.NewFailing {
		g.Reasons = append(g.Reasons, fmt.Sprintf("%s %s c=%d is failing, not before: %s", v.Scenario, v.Target, v.Level, v.Reason))
	}
	for _, d := range g.NewDifferences {
		g.Reasons = append(g.Reasons, fmt.Sprintf("a new compat difference: %s on %s at %s (%s, %d cases)", d.Call, d.Target, d.Path, d.Kind, d.Cases))
	}
}

func verdictKey(v Verdict) string { return fmt.Sprintf("%q/%q/%d", v.Scenario, v.Target, v.Level) }

// contentID is the id a run's results.json has in the store.
func contentID(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
