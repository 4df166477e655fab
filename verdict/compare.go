package verdict

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// Verdicts of a change that only tandem compare gives.
const (
	// Missing is a scenario, target or level the base has and the head
	// lacks: a regression, since what was measured before no longer is.
	Missing = stats.Missing
	// New is one only the head has: listed, never a regression.
	New = stats.New
)

// Kinds of row a comparison of runs holds.
const (
	KindScenario = "scenario"
	KindStartup  = "startup"
	KindCell     = "cell"
	KindKnee     = "knee"
	KindCost     = "cost"
)

// OnInconclusive says what a gate does with a pair it could not decide.
type OnInconclusive string

// What a gate may do with an inconclusive pair.
const (
	// InconclusiveFails (the default): a gate that cannot tell does not
	// say "no regression".
	InconclusiveFails OnInconclusive = "fail"
	// InconclusivePasses lists it and passes.
	InconclusivePasses OnInconclusive = "pass"
)

// ParseOnInconclusive checks an --on-inconclusive value.
func ParseOnInconclusive(s string) (OnInconclusive, error) {
	switch o := OnInconclusive(s); o {
	case InconclusiveFails, InconclusivePasses:
		return o, nil
	case "":
		return InconclusiveFails, nil
	}
	return "", fmt.Errorf("--on-inconclusive %q: want fail or pass", s)
}

// String is the value as a flag shows it.
func (o *OnInconclusive) String() string { return string(*o) }

// Set sets the value from a flag's (pflag.Value).
func (o *OnInconclusive) Set(s string) error {
	v, err := ParseOnInconclusive(s)
	if err != nil {
		return errors.New("want fail or pass")
	}
	*o = v
	return nil
}

// Type names the flag's kind of value.
func (o *OnInconclusive) Type() string { return "string" }

// Options say how two runs are held against each other.
type Options struct {
	// MaxRegression is the tolerated worsening in percent of the base.
	MaxRegression float64
	// OnInconclusive says whether an undecided pair fails the gate.
	OnInconclusive OnInconclusive
	// AllowChanged passes a row whose definition changed (another call,
	// load or engine): it is listed as not comparable either way.
	AllowChanged bool
	// Alpha, if above the recorded policies' α, is the false-alarm rate
	// of the rows taken together (a stricter gate).
	Alpha float64
}

// Change is one row held between two runs: a scenario's target at a
// level, a target's startup, a sweep's cell or a search's knee; the base
// run's rounds as the base, the head run's as the candidate.
type Change struct {
	// Kind is KindScenario, KindStartup, KindCell or KindKnee.
	Kind        string `json:"kind"`
	Scenario    string `json:"scenario,omitempty"`
	Target      string `json:"target"`
	Concurrency int    `json:"concurrency,omitempty"`
	// Connections and Rate name a sweep's cell (Rate > 0), whose
	// headline is its mean latency; Connections alone a search's knee.
	Connections int     `json:"connections,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	// Base and Head are the medians of the successful rounds (a knee:
	// the highest rate sustained).
	Base float64 `json:"base"`
	Head float64 `json:"head"`
	// Ratio is head ÷ base, the shift rule's estimate; 0 without a speed
	// verdict.
	Ratio float64 `json:"ratio"`
	// Change is how much worse the head is, as a fraction of the base:
	// for latency ratio − 1, for throughput 1 − ratio; negative when the
	// head is better. 0 without a speed verdict.
	Change float64 `json:"change"`
	// BaseRange and HeadRange are each side's rounds, best and worst;
	// P is the two-sided Mann–Whitney p-value of the two sides' rounds
	// (1 without rounds).
	BaseRange [2]float64 `json:"base_range"`
	HeadRange [2]float64 `json:"head_range"`
	P         float64    `json:"p"`
	// Estimate is the shift rule's estimate and interval, when it ran.
	Estimate *stats.Estimate `json:"estimate,omitempty"`
	// BaseErrorShare and HeadErrorShare are the shares of failed requests.
	BaseErrorShare float64       `json:"base_error_share"`
	HeadErrorShare float64       `json:"head_error_share"`
	Verdict        stats.Verdict `json:"verdict"`
	Reason         string        `json:"reason"`
	ClientBound    bool          `json:"client_bound,omitempty"`
	// Regression is a row that fails the gate: a slower head beyond the
	// allowance; a failing, dropping or empty side; a row the head lost;
	// a changed definition (without AllowChanged); an undecided pair
	// (with InconclusiveFails).
	Regression bool `json:"regression"`
	// judge judges the row again at a level (study-wide error control);
	// unhealthy marks a withheld row whose side the health gate found
	// wanting, tooFew one withheld for too few rounds (undecided: more
	// rounds would judge it); direction is the headline's.
	judge     func(alpha float64) stats.Judgement
	unhealthy bool
	tooFew    bool
	direction results.Direction
}

// Where is the row a change is about: a level (c=N), a sweep's cell, a
// knee's connections or a startup.
func (ch Change) Where() string {
	switch {
	case ch.Kind == KindStartup:
		return "startup"
	case ch.Kind == KindKnee:
		return fmt.Sprintf("knee at %d conns", ch.Connections)
	case ch.Kind == KindCost:
		return "counted"
	case ch.Rate > 0:
		return CellKey{ch.Connections, ch.Rate}.String()
	}
	return fmt.Sprintf("c=%d", ch.Concurrency)
}

// Label names a change's row in words: scenario, target and where
// ("lat a c=1", "qa-grid node 1 conn × 100/s"); a startup has no scenario
// ("a startup").
func (ch Change) Label() string {
	if ch.Scenario == "" {
		return ch.Target + " " + ch.Where()
	}
	return ch.Scenario + " " + ch.Target + " " + ch.Where()
}

// Comparison is what tandem compare reports and gates on: every change
// between two runs, what a reader should know, and the tally.
type Comparison struct {
	// Changes are the rows of either run, the head's order first.
	Changes []Change
	// Warnings say what a reader should know (different machines or
	// policies, withheld pairs).
	Warnings []string
	// Failures are what fails the gate beyond its rows (an interrupted or
	// empty head run).
	Failures []string
	// Regressions counts the changes that are regressions; Withheld the
	// pairs the policy could not judge; Inconclusive those it could not
	// decide.
	Regressions, Withheld, Inconclusive int
	// MaxRegression is the tolerated worsening, in percent of the base.
	MaxRegression float64
	// Options are the gate's options.
	Options Options
	// Policy is the policy the changes were judged by (ComparePolicy).
	Policy stats.Policy
	// Family is the study-wide error control over the rows.
	Family results.Family
	// Base and Head are the runs compared, for a report that draws them.
	Base, Head *results.Results `json:"-"`
}

// Regressed reports whether the gate fails.
func (c Comparison) Regressed() bool { return c.Regressions > 0 || len(c.Failures) > 0 }

// Undecided counts the rows that fail the gate only because they are
// inconclusive, or withheld for too few rounds (OnInconclusive fail): no
// regression was found in them, nor the lack of one.
func (c Comparison) Undecided() int {
	n := 0
	for _, ch := range c.Changes {
		if ch.Regression && (ch.Verdict == stats.Inconclusive || ch.tooFew && !ch.unhealthy) {
			n++
		}
	}
	return n
}

// OnlyUndecided reports a gate that fails only on undecided rows.
func (c Comparison) OnlyUndecided() bool {
	return c.Regressed() && len(c.Failures) == 0 && c.Regressions == c.Undecided()
}

// Gate is the comparison as a gate: an error that says why it fails, nil
// when it passes. Undecided rows are counted apart from regressions.
func (c Comparison) Gate() error {
	if !c.Regressed() {
		return nil
	}
	parts := slices.Clone(c.Failures)
	undecided := c.Undecided()
	if n := c.Regressions - undecided; n > 0 {
		parts = append(parts, fmt.Sprintf("%d regressions (beyond %g %%, failing, dropping, missing or changed)", n, c.MaxRegression))
	}
	if undecided > 0 {
		parts = append(parts, fmt.Sprintf("%d undecided (inconclusive pairs fail the gate unless on-inconclusive is pass)", undecided))
	}
	return fmt.Errorf("%s", strings.Join(parts, "; "))
}

// CompareRuns holds every row of head against base with the shift rule
// on independent rounds (two runs are not paired: the machine may have
// changed between them), under the stricter of the two recorded policies,
// with the false-alarm rate held at the policy's α over all rows (Holm).
func CompareRuns(base, head *results.Results, o Options) (Comparison, error) {
	if math.IsNaN(o.MaxRegression) || math.IsInf(o.MaxRegression, 0) || o.MaxRegression < 0 {
		return Comparison{}, fmt.Errorf("max regression %v: want a percentage of 0 or more", o.MaxRegression)
	}
	if o.OnInconclusive == "" {
		o.OnInconclusive = InconclusiveFails
	}
	p := ComparePolicy(base, head)
	p.Alpha = max(p.Alpha, o.Alpha)
	if err := p.Validate(); err != nil {
		return Comparison{}, fmt.Errorf("the recorded policy: %w", err)
	}
	c := Comparison{MaxRegression: o.MaxRegression, Options: o, Policy: p, Base: base, Head: head}
	bm, hm := base.Machine, head.Machine
	if bm.CPUModel != hm.CPUModel || bm.Cores != hm.Cores || bm.Kernel != hm.Kernel {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the machines differ (%s, %d cores vs %s, %d cores): differences may be the machine's", bm.CPUModel, bm.Cores, hm.CPUModel, hm.Cores))
	}
	if base.Policy != nil && head.Policy != nil && base.Policy.Normalized() != head.Policy.Normalized() {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the runs recorded different policies; the stricter of each setting governs (rule %s, noise floor %s, α %s)",
			p.Rule, stats.Percent(p.NoiseFloor), stats.Sig(p.Alpha)))
	}
	switch {
	case head.Interrupted:
		c.Failures = append(c.Failures, "the head run was interrupted: what it lacks is not measured")
	case len(head.Scenarios) == 0 && len(head.Sweeps) == 0 && len(base.Scenarios)+len(base.Sweeps) > 0:
		c.Failures = append(c.Failures, "the head run measured nothing")
	}
	if base.Interrupted {
		c.Warnings = append(c.Warnings, "the base run was interrupted: rows it lacks are new")
	}
	// every row the shift rule judges is held at α ÷ m, m the rows of all
	// kinds together (Bonferroni over the whole comparison), before Holm's
	// step-down over them
	m := max(scenarioRows(base, head)+startupRows(base, head)+sweepRows(base, head), 1)
	alpha := p.Alpha / float64(m)
	c.Changes = append(c.Changes, scenarioChanges(p, alpha, base, head)...)
	c.Changes = append(c.Changes, startupChanges(p, alpha, base, head)...)
	c.Changes = append(c.Changes, sweepChanges(p, alpha, base, head)...)
	c.Changes = append(c.Changes, kneeChanges(base, head)...)
	c.Changes = append(c.Changes, costChanges(p, base, head)...)
	c.Family = judgeFamily(p, c.Changes)
	c.Family.Planned = m
	c.tally()
	return c, nil
}

// Within gates one run on its own comparisons: every candidate against
// the baseline, as the run judged them (paired rounds, side by side on one
// machine: the sound gate for two builds). A row fails as a row of
// CompareRuns does: slower beyond the allowance, failing, unhealthy,
// inconclusive (unless passed). An interrupted run fails.
func Within(r *results.Results, o Options) (Comparison, error) {
	if math.IsNaN(o.MaxRegression) || math.IsInf(o.MaxRegression, 0) || o.MaxRegression < 0 {
		return Comparison{}, fmt.Errorf("max regression %v: want a percentage of 0 or more", o.MaxRegression)
	}
	if o.OnInconclusive == "" {
		o.OnInconclusive = InconclusiveFails
	}
	c := Comparison{MaxRegression: o.MaxRegression, Options: o, Policy: PolicyOf(r), Head: r}
	if r.Family != nil {
		c.Family = *r.Family
	}
	if r.Interrupted {
		c.Failures = append(c.Failures, "the run was interrupted: what it lacks is not measured")
	}
	row := func(kind, scenario string, level int, cmp results.Comparison, direction results.Direction) Change {
		ch := Change{Kind: kind, Scenario: scenario, Target: cmp.Candidate + " vs " + cmp.Base, Concurrency: level, P: 1,
			Verdict: cmp.Verdict, Reason: cmp.Reason, ClientBound: cmp.ClientBound, Estimate: cmp.Estimate,
			unhealthy: cmp.Verdict == stats.Withheld && cmp.Unhealthy != "", tooFew: cmp.Verdict == stats.Withheld && cmp.TooFewRounds}
		if cmp.Estimate != nil {
			ch.P = cmp.Estimate.P
		}
		if cmp.Verdict.Speed() {
			ch.Ratio, ch.Change = cmp.Ratio, cmp.Ratio-1
			if direction == "higher" {
				ch.Change = 1 - cmp.Ratio
			}
		}
		return ch
	}
	for _, t := range r.Targets {
		if v := t.StartupVerdict; v != nil {
			c.Changes = append(c.Changes, row(KindStartup, "", 0, *v, "lower"))
		}
	}
	for _, sc := range r.Scenarios {
		for _, cmp := range sc.Comparisons {
			if cmp.Verdict == stats.NoiseReference {
				continue
			}
			c.Changes = append(c.Changes, row(KindScenario, sc.Name, cmp.Concurrency, cmp, sc.Direction))
		}
	}
	for _, sw := range r.Sweeps {
		for _, v := range sw.Verdicts {
			ch := row(KindCell, sw.Scenario, 0, results.Comparison{Base: v.Base, Candidate: sw.Target, Verdict: v.Verdict, Reason: v.Reason,
				Ratio: v.Ratio, Estimate: v.Estimate}, "lower")
			ch.Connections, ch.Rate = v.Connections, v.Rate
			ch.unhealthy = v.Verdict == stats.Withheld && strings.HasPrefix(v.Reason, "saturated: "+sw.Target)
			c.Changes = append(c.Changes, ch)
		}
	}
	if len(c.Changes) == 0 && !r.Interrupted {
		c.Failures = append(c.Failures, "the run compared nothing: a gate within one run needs two targets, the baseline and a candidate")
	}
	c.tally()
	return c, nil
}

// tally counts the rows that fail the gate, the withheld and the
// inconclusive ones, and says so in warnings.
func (c *Comparison) tally() {
	for i := range c.Changes {
		ch := &c.Changes[i]
		ch.Regression = regression(ch, c.Options)
		if ch.Regression {
			c.Regressions++
		}
		switch ch.Verdict {
		case stats.Withheld:
			c.Withheld++
		case stats.Inconclusive:
			c.Inconclusive++
		}
	}
	if c.Withheld > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d of %d pairs could not be judged (withheld): see their reasons", c.Withheld, len(c.Changes)))
	}
	if c.Inconclusive > 0 {
		what := "they fail the gate (--on-inconclusive fail)"
		if c.Options.OnInconclusive == InconclusivePasses {
			what = "they pass (--on-inconclusive pass)"
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d of %d pairs are inconclusive: more rounds would decide them; %s", c.Inconclusive, len(c.Changes), what))
	}
}

// regression says whether a judged row fails the gate.
func regression(ch *Change, o Options) bool {
	limit := o.MaxRegression / 100
	switch ch.Verdict {
	case stats.Slower:
		return ch.Change > limit
	case stats.Failing, stats.Missing:
		return true
	case stats.NotComparable:
		return !o.AllowChanged
	case stats.Inconclusive:
		return o.OnInconclusive == InconclusiveFails
	case stats.Withheld:
		// a side wanting fails; too few rounds to judge is undecided,
		// but for a grid cell, whose one run is its design (its count
		// decides whether it kept up)
		return ch.unhealthy || ch.tooFew && ch.Kind != KindCell && o.OnInconclusive == InconclusiveFails
	}
	return false
}

// judgeFamily judges every row that reached the shift rule at the
// family's Bonferroni level α/m first (done by the row builders), then
// lets Holm's step-down decide the rows that stayed inconclusive: a row
// whose Holm-adjusted sequential p is at most α is judged again at its
// Holm level and keeps a speed verdict if it gets one.
func judgeFamily(p stats.Policy, changes []Change) results.Family {
	var ps []float64
	var idx []int
	for i, ch := range changes {
		if ch.Estimate != nil {
			ps = append(ps, ch.Estimate.PSeq)
			idx = append(idx, i)
		}
	}
	fam := results.Family{Method: results.FamilyHolm, Alpha: p.Alpha, Size: len(ps)}
	adjusted := stats.Holm(ps)
	for k, i := range idx {
		ch := &changes[i]
		ch.Estimate.Adjusted = adjusted[k]
		if ch.Verdict != stats.Inconclusive || adjusted[k] > p.Alpha || ch.judge == nil {
			continue
		}
		if j := ch.judge(stats.HolmLevel(ps, ps[k], p.Alpha)); j.Verdict.Speed() {
			j.Reason += fmt.Sprintf("; decided by Holm's step-down over the %d rows (adjusted p = %s)", len(ps), stats.Sig(adjusted[k]))
			ch.setJudgement(j, ch.direction)
			ch.Estimate.Adjusted = adjusted[k]
			fam.Upgraded++
		}
	}
	return fam
}

// scenarioRows counts the scenario rows both runs have: those the shift
// rule may judge.
func scenarioRows(base, head *results.Results) int {
	m := 0
	for _, k := range rowKeys(base, head) {
		if hasRow(scenario(base, k.scenario), k.target, k.level) && hasRow(scenario(head, k.scenario), k.target, k.level) {
			m++
		}
	}
	return m
}

// scenarioChanges holds every scenario, target and level of head against
// base, each judged at false-alarm rate alpha.
func scenarioChanges(p stats.Policy, alpha float64, base, head *results.Results) []Change {
	var out []Change
	keys := rowKeys(base, head)
	for _, k := range keys {
		bs, hs := scenario(base, k.scenario), scenario(head, k.scenario)
		ch := Change{Kind: KindScenario, Scenario: k.scenario, Target: k.target, Concurrency: k.level, P: 1}
		switch {
		case !hasRow(hs, k.target, k.level):
			ch.Verdict, ch.Reason = Missing, "measured in the base, not in the head"
			out = append(out, ch)
			continue
		case !hasRow(bs, k.target, k.level):
			ch.Verdict, ch.Reason = New, "measured in the head only"
			out = append(out, ch)
			continue
		}
		b, h := bs.Side(k.target, k.level), hs.Side(k.target, k.level)
		b.Name, h.Name = "base", "head" // one target in two runs
		ch.fill(b, h)
		if fb, fh := bs.Fingerprint(), hs.Fingerprint(); fb != fh {
			ch.Verdict = stats.NotComparable
			ch.Reason = "the scenario changed between the runs: " + strings.Join(scenarioDiff(bs, hs), "; ")
			out = append(out, ch)
			continue
		}
		floor := p.Floor(max(aaFloorAt(base, bs, k.level), aaFloorAt(head, hs, k.level)))
		metric := Metric(hs)
		ch.direction = hs.Direction
		ch.judge = func(alpha float64) stats.Judgement {
			return p.Judge(b, h, metric, floor, stats.Design{Alpha: alpha})
		}
		ch.setJudgement(ch.judge(alpha), hs.Direction)
		out = append(out, ch)
	}
	return out
}

// fill sets a change's figures from its sides.
func (ch *Change) fill(b, h stats.Side) {
	ch.Base, ch.Head = b.Summary.Median, h.Summary.Median
	ch.BaseRange, ch.HeadRange = [2]float64{b.Summary.Best, b.Summary.Worst}, [2]float64{h.Summary.Best, h.Summary.Worst}
	_, ch.P = stats.MannWhitney(finiteOnly(b.Headlines), finiteOnly(h.Headlines))
	ch.BaseErrorShare, ch.HeadErrorShare = b.ErrorShare(), h.ErrorShare()
}

// setJudgement copies a judgement of head against base into a change.
func (ch *Change) setJudgement(j stats.Judgement, direction results.Direction) {
	ch.Verdict, ch.Reason, ch.ClientBound, ch.Estimate = j.Verdict, j.Reason, j.ClientBound, j.Estimate
	ch.Ratio, ch.Change = 0, 0
	if j.Verdict.Speed() {
		ch.Ratio = j.Ratio
		ch.Change = j.Ratio - 1 // latency grew
		if direction == "higher" {
			ch.Change = 1 - j.Ratio // throughput fell
		}
	}
	// a side the health gate found wanting fails the gate: the head
	// failing or dropping where the base did not, and a base that cannot
	// vouch for anything (failing, dropping, empty)
	ch.unhealthy = j.Verdict == stats.Withheld && (j.Unhealthy != "" || strings.Contains(j.Reason, "no successful round"))
	ch.tooFew = j.Verdict == stats.Withheld && j.TooFewRounds
	if ch.unhealthy && j.Unhealthy == "base" {
		ch.Reason += "; the base run cannot vouch for the head"
	}
}

// started reports a target that was started from empty (or failed to).
func started(t *results.Target) bool { return len(t.StartupRuns) > 0 || t.Error != "" }

// startupRows counts the targets whose ready times the shift rule may
// judge: started more than once in both runs.
func startupRows(base, head *results.Results) int {
	m := 0
	for i := range base.Targets {
		if bt := &base.Targets[i]; started(bt) {
			if ht := targetOf(head, bt.Name); ht != nil && len(ht.StartupRuns) > 1 && len(bt.StartupRuns) > 1 {
				m++
			}
		}
	}
	return m
}

// startupChanges holds each target's starts from empty: a target that
// fails to start in the head where it started in the base fails, and
// ready times are judged by the shift rule at false-alarm rate alpha.
func startupChanges(p stats.Policy, alpha float64, base, head *results.Results) []Change {
	var out []Change
	for i := range base.Targets {
		bt := &base.Targets[i]
		if !started(bt) {
			continue
		}
		ch := Change{Kind: KindStartup, Target: bt.Name, P: 1}
		ht := targetOf(head, bt.Name)
		switch {
		case ht == nil || !started(ht):
			ch.Verdict, ch.Reason = Missing, "started in the base, not in the head"
			out = append(out, ch)
			continue
		case ht.Error != "" && bt.Error == "":
			ch.Verdict = stats.Failing
			ch.Reason = "failing: the head did not start or died: " + firstLine(ht.Error)
			out = append(out, ch)
			continue
		}
		if bt.Error != "" {
			ch.Verdict, ch.unhealthy = stats.Withheld, true
			ch.Reason = "the base did not start or died: " + firstLine(bt.Error) + "; the base run cannot vouch for the head"
			out = append(out, ch)
			continue
		}
		if len(bt.StartupRuns) < 2 || len(ht.StartupRuns) < 2 {
			continue // one start: nothing to judge its time by, and it started
		}
		b, h := StartupSide(bt), StartupSide(ht)
		b.Name, h.Name = "base", "head"
		ch.fill(b, h)
		metric := stats.Metric{Format: CellMetric.Format}
		ch.direction = "lower"
		ch.judge = func(alpha float64) stats.Judgement {
			return p.Judge(b, h, metric, p.Floor(0), stats.Design{Alpha: alpha})
		}
		ch.setJudgement(ch.judge(alpha), "lower")
		out = append(out, ch)
	}
	return out
}

func targetOf(r *results.Results, name string) *results.Target {
	for i := range r.Targets {
		if r.Targets[i].Name == name {
			return &r.Targets[i]
		}
	}
	return nil
}

// sweepKey is one cell of one target's sweep.
type sweepKey struct {
	scenario, target string
	cell             CellKey
}

// sweepCells lists every cell of each run's grids with its runs.
func sweepCells(r *results.Results) ([]sweepKey, map[sweepKey][]results.Cell) {
	var keys []sweepKey
	runs := map[sweepKey][]results.Cell{}
	for i := range r.Sweeps {
		sw := &r.Sweeps[i]
		if len(sw.Search) > 0 {
			continue // a search's probes are where its bisection went: compared by its knee
		}
		cks, cruns := Cells(sw)
		for _, ck := range cks {
			k := sweepKey{sw.Scenario, sw.Target, ck}
			if _, ok := runs[k]; !ok {
				keys = append(keys, k)
			}
			runs[k] = append(runs[k], cruns[ck]...)
		}
	}
	return keys, runs
}

// sweepRows counts the grid cells both runs measured: those the shift
// rule may judge.
func sweepRows(base, head *results.Results) int {
	hk, _ := sweepCells(head)
	_, bruns := sweepCells(base)
	m := 0
	for _, k := range hk {
		if len(bruns[k]) > 0 {
			m++
		}
	}
	return m
}

// sweepChanges holds every grid cell of head against base: the mean
// latency by the shift rule at false-alarm rate alpha, and a cell that
// saturates in the head where it kept up in the base fails whatever its
// latency.
func sweepChanges(p stats.Policy, alpha float64, base, head *results.Results) []Change {
	hk, hruns := sweepCells(head)
	bk, bruns := sweepCells(base)
	var out []Change
	seen := map[sweepKey]bool{}
	for _, k := range append(hk, bk...) {
		if seen[k] {
			continue
		}
		seen[k] = true
		ch := Change{Kind: KindCell, Scenario: k.scenario, Target: k.target, Connections: k.cell.Connections, Rate: k.cell.Rate, P: 1}
		br, hr := bruns[k], hruns[k]
		switch {
		case len(hr) == 0:
			ch.Verdict, ch.Reason = Missing, "measured in the base, not in the head"
			out = append(out, ch)
			continue
		case len(br) == 0:
			ch.Verdict, ch.Reason = New, "measured in the head only"
			out = append(out, ch)
			continue
		}
		b, h := CellSide("base", br), CellSide("head", hr)
		ch.fill(b, h)
		ch.direction = "lower"
		ch.judge = func(alpha float64) stats.Judgement {
			return JudgeCell(p, b, h, br, hr, stats.Design{Alpha: alpha})
		}
		ch.setJudgement(ch.judge(alpha), "lower")
		out = append(out, ch)
	}
	return out
}

// kneeChanges holds each search's knee (the highest rate per connection
// it sustained) of head against base: slower when the head saturated at
// or below the rate the base sustained, faster the other way round, and
// indistinguishable when the two brackets overlap (within the search's
// resolution).
func kneeChanges(base, head *results.Results) []Change {
	type key struct {
		scenario, target string
		conns            int
	}
	knees := func(r *results.Results) ([]key, map[key]results.SearchResult) {
		var keys []key
		m := map[key]results.SearchResult{}
		for _, sw := range r.Sweeps {
			for _, s := range sw.Search {
				k := key{sw.Scenario, sw.Target, s.Connections}
				if _, ok := m[k]; !ok {
					keys = append(keys, k)
				}
				m[k] = s
			}
		}
		return keys, m
	}
	hk, hm := knees(head)
	bk, bm := knees(base)
	var out []Change
	seen := map[key]bool{}
	for _, k := range append(hk, bk...) {
		if seen[k] {
			continue
		}
		seen[k] = true
		ch := Change{Kind: KindKnee, Scenario: k.scenario, Target: k.target, Connections: k.conns, P: 1}
		b, inBase := bm[k]
		h, inHead := hm[k]
		switch {
		case !inHead:
			ch.Verdict, ch.Reason = Missing, "searched in the base, not in the head"
		case !inBase:
			ch.Verdict, ch.Reason = New, "searched in the head only"
		default:
			ch.Base, ch.Head = b.Sustained, h.Sustained
			bracket := func(s results.SearchResult) string {
				return fmt.Sprintf("sustained %s/s, saturated %s/s", stats.Sig(s.Sustained), stats.Sig(s.Saturated))
			}
			ch.Reason = fmt.Sprintf("the knee: base %s; head %s", bracket(b), bracket(h))
			switch {
			case b.Sustained > 0 && h.Saturated > 0 && h.Saturated <= b.Sustained:
				ch.Verdict = stats.Slower
			case h.Sustained > 0 && b.Saturated > 0 && h.Sustained >= b.Saturated:
				ch.Verdict = stats.Faster
			default:
				ch.Verdict = stats.Indistinguishable
				ch.Reason += ": the brackets overlap (within the search's resolution)"
			}
			if ch.Verdict.Speed() && b.Sustained > 0 {
				ch.Ratio = h.Sustained / b.Sustained
				ch.Change = 1 - ch.Ratio
			}
		}
		out = append(out, ch)
	}
	return out
}

// costChanges holds each counted cost of head against base: instructions
// and allocations per operation are counts, not timings, so a change
// beyond the noise floor is a speed verdict without rounds.
func costChanges(p stats.Policy, base, head *results.Results) []Change {
	var out []Change
	bc := map[string]results.Cost{}
	for _, c := range base.Costs {
		bc[c.Name] = c
	}
	seen := map[string]bool{}
	for _, h := range head.Costs {
		seen[h.Name] = true
		b, ok := bc[h.Name]
		for _, fig := range []struct {
			what       string
			base, head float64
		}{{"instructions per op", b.InstructionsPerOp, h.InstructionsPerOp}, {"allocations per op", b.AllocationsPerOp, h.AllocationsPerOp}} {
			ch := Change{Kind: KindCost, Scenario: h.Name, Target: fig.what, Base: fig.base, Head: fig.head, P: 1}
			switch {
			case !ok:
				ch.Verdict, ch.Reason = New, "counted in the head only"
			case h.Error != "":
				ch.Verdict, ch.Reason = stats.Failing, "failing: the count failed: "+firstLine(h.Error)
			case b.Error != "" || fig.base <= 0 && fig.head > 0:
				ch.Verdict, ch.Reason = stats.Withheld, "no count in the base to hold it against"
			case fig.base <= 0 && fig.head <= 0:
				ch.Verdict, ch.Reason = stats.Indistinguishable, "none in either"
			default:
				ch.Ratio, ch.Change = fig.head/fig.base, fig.head/fig.base-1
				ch.Reason = fmt.Sprintf("%s → %s (counted)", stats.Sig(fig.base), stats.Sig(fig.head))
				switch {
				case math.Abs(math.Log(ch.Ratio)) <= math.Log1p(p.NoiseFloor):
					ch.Verdict, ch.Ratio, ch.Change = stats.Indistinguishable, 0, 0
				case ch.Ratio > 1:
					ch.Verdict = stats.Slower
				default:
					ch.Verdict = stats.Faster
				}
			}
			out = append(out, ch)
		}
	}
	for _, b := range base.Costs {
		if !seen[b.Name] {
			out = append(out, Change{Kind: KindCost, Scenario: b.Name, Target: "counted cost", Verdict: Missing, P: 1,
				Reason: "counted in the base, not in the head"})
		}
	}
	return out
}

// Pool makes one baseline of several runs of a study, the newest first:
// the newest's rows, each with the rounds of every run that measured the
// same thing (the same scenario fingerprint) pooled, renumbered after
// the newest's. Rounds of two runs are not paired, so pooling is sound
// for the independent comparison compare makes; it spreads the baseline
// over the machines' moods on the days it was made.
func Pool(runs []*results.Results) *results.Results {
	if len(runs) == 0 {
		return results.New()
	}
	if len(runs) == 1 {
		return runs[0]
	}
	b, _ := json.Marshal(runs[0])
	pooled := results.New()
	_ = json.Unmarshal(b, pooled) // a deep copy of a value that was just encoded
	for i := range pooled.Scenarios {
		sc := &pooled.Scenarios[i]
		offset := 0
		for _, rd := range sc.Rounds {
			offset = max(offset, rd.Round)
		}
		for _, older := range runs[1:] {
			o := scenario(older, sc.Name)
			if o == nil || o.Fingerprint() != sc.Fingerprint() {
				continue
			}
			last := 0
			for _, rd := range o.Rounds {
				rd.Round += offset
				last = max(last, rd.Round)
				sc.Rounds = append(sc.Rounds, rd)
			}
			offset = max(offset, last)
		}
	}
	for i := range pooled.Targets {
		t := &pooled.Targets[i]
		for _, older := range runs[1:] {
			if o := targetOf(older, t.Name); o != nil && o.Error == "" {
				t.StartupRuns = append(t.StartupRuns, o.StartupRuns...)
			}
		}
	}
	return pooled
}

// finiteOnly drops the NaNs of failed rounds.
func finiteOnly(vs []float64) []float64 {
	var out []float64
	for _, v := range vs {
		if !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// ComparePolicy is the policy two runs are compared by: of each setting
// the stricter of the two recorded (a lower noise floor and thresholds, a
// higher α, more rounds needed), so that neither run can loosen the gate;
// a run that recorded none contributes the default.
func ComparePolicy(base, head *results.Results) stats.Policy {
	b, h := PolicyOf(base).Normalized(), PolicyOf(head).Normalized()
	p := stats.DefaultPolicy()
	p.NoiseFloor = min(b.NoiseFloor, h.NoiseFloor)
	p.MaxErrorShareDiff = min(b.MaxErrorShareDiff, h.MaxErrorShareDiff)
	p.MaxShortfall = min(b.MaxShortfall, h.MaxShortfall)
	p.ClientBoundUse = min(b.ClientBoundUse, h.ClientBoundUse)
	p.MinRounds = max(b.MinRounds, h.MinRounds)
	p.Alpha = max(b.Alpha, h.Alpha)
	p.Unstable = min(b.Unstable, h.Unstable)
	// two runs are held by the shift rule unless both chose the spread
	// rule (a study C table against its own earlier run)
	if b.Rule == stats.RuleSpread && h.Rule == stats.RuleSpread {
		p.Rule = stats.RuleSpread
	}
	return p
}

type rowKey struct {
	scenario, target string
	level            int
}

// rowKeys lists every scenario, target and level of either run, the
// head's order first, then what only the base has.
func rowKeys(base, head *results.Results) []rowKey {
	var keys []rowKey
	for _, r := range []*results.Results{head, base} {
		for _, sc := range r.Scenarios {
			for _, s := range sc.Summary {
				k := rowKey{sc.Name, s.Target, s.Concurrency}
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	return keys
}

func scenario(r *results.Results, name string) *results.Scenario {
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i]
		}
	}
	return nil
}

// hasRow reports whether a scenario (nil: absent) has a summary row for
// the target at the level.
func hasRow(sc *results.Scenario, target string, level int) bool {
	return sc != nil && slices.ContainsFunc(sc.Summary, func(s results.Summary) bool {
		return s.Target == target && s.Concurrency == level
	})
}

// scenarioDiff says what differs between two definitions of a scenario.
func scenarioDiff(a, b *results.Scenario) []string {
	var out []string
	if a.Call != b.Call {
		out = append(out, fmt.Sprintf("call %s → %s", a.Call, b.Call))
	}
	if a.Metric != b.Metric {
		out = append(out, fmt.Sprintf("metric %s → %s", a.Metric, b.Metric))
	}
	la, _ := json.Marshal(a.Load)
	lb, _ := json.Marshal(b.Load)
	if string(la) != string(lb) {
		out = append(out, fmt.Sprintf("load %s → %s", la, lb))
	}
	if ea, eb := strings.Join(a.Engines(), ","), strings.Join(b.Engines(), ","); ea != eb {
		out = append(out, fmt.Sprintf("engine %s → %s", orDash(ea), orDash(eb)))
	}
	if len(out) == 0 {
		out = append(out, "its definition")
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// aaFloorAt is the noise floor an A/A pair raised a run's comparisons to
// at a level, 0 if none did: a floor the run's own policy set is not
// measured and cannot loosen a comparison of runs.
func aaFloorAt(r *results.Results, sc *results.Scenario, level int) float64 {
	own := PolicyOf(r).NoiseFloor
	f := 0.0
	for _, c := range sc.Comparisons {
		if c.Concurrency == level && c.NoiseFloor > own+1e-12 {
			f = max(f, c.NoiseFloor)
		}
	}
	return f
}
