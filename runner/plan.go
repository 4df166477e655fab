package runner

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/study"
)

// Plan is what a run of a study will do, step by step, with an estimate of
// each step's time. It is computed from the study and the options alone:
// nothing is started.
type Plan struct {
	Steps []PlanStep
	// Total is the sum of the steps' estimates; Budget the most the
	// steps may take (adaptive rounds that decide nothing).
	Total, Budget time.Duration
	// Comparisons is the family of comparisons the run will judge by the
	// speed rule: each is held at α ÷ Comparisons during the run.
	Comparisons int
	// Rule and Alpha are the study's speed rule and false-alarm rate.
	Rule  stats.Rule
	Alpha float64
}

// PlanStep is one phase of a plan, or one scenario or sweep.
type PlanStep struct {
	// Phase is startup, compat, probes, scenario, sweep or costs; Name
	// names the scenario or sweep.
	Phase, Name string
	// Detail says what the step does, e.g. "3 levels × 2 targets × 3
	// rounds of ~2s, calibrated".
	Detail string
	// Estimate is the step's expected length; Budget the most it may
	// take (adaptive rounds), else Estimate.
	Estimate, Budget time.Duration
	// Units counts the step's measured runs (rounds of a scenario, cells
	// of a sweep): once some are done, how long they took refines what is
	// left of the step. 0 when the step has none.
	Units int
}

// What a plan assumes where the study cannot say.
const (
	// planStart is a start from empty until ready.
	planStart = 2 * time.Second
	// planCase is one compat case on one target.
	planCase = 20 * time.Millisecond
	// planProbe is one target's round-trip probe.
	planProbe = 500 * time.Millisecond
	// planCost is one counted cost (three runs under valgrind).
	planCost = 15 * time.Second
	// planMempoolDrain is the wait after a sweep cell confirmed by
	// CometBFT blocks, for the mempool to empty, when the node keeps up
	// (measured: 4 cells of 6 s took 25 s in all).
	planMempoolDrain = 300 * time.Millisecond
	// planDrainWarmup is a drain's warm-up (drainWarmup messages).
	planDrainWarmup = time.Second
	// planCalibration is calibration's length in units of min_duration:
	// it doubles a run's count until a run lasts min_duration, so its runs
	// add up to two to four times that.
	planCalibration = 3
)

// NewPlan estimates a run of s under o (its Only and Rounds).
func NewPlan(s *study.Study, o Options) Plan {
	var p Plan
	add := func(st PlanStep) {
		if st.Budget < st.Estimate {
			st.Budget = st.Estimate
		}
		p.Steps = append(p.Steps, st)
		p.Total += st.Estimate
		p.Budget += st.Budget
	}
	p.Comparisons = Comparisons(s, o)
	p.Rule, p.Alpha = s.Defaults.Policy().Rule, s.Defaults.Policy().Alpha
	only := func(part string) bool { return len(o.Only) == 0 || slices.Contains(o.Only, part) }
	started := 0
	for _, t := range s.Targets {
		if t.Start != nil || t.Consumer != nil {
			started++
		}
	}
	runs := 1
	if s.Startup != nil && only("startup") {
		runs = s.Startup.Runs
	}
	if started > 0 {
		what := fmt.Sprintf("%d targets started from empty", started)
		if runs > 1 {
			what = fmt.Sprintf("%d targets × %d starts from empty", started, runs)
		}
		add(PlanStep{Phase: "startup", Detail: what, Estimate: time.Duration(started*runs) * planStart})
	}
	if c := s.Compat; c != nil && only("compat") {
		cases := 0
		for i := range c.Cases {
			vars, _ := c.Cases[i].Expand(s.Seed, i)
			cases += len(vars)
		}
		for _, rec := range c.Recordings {
			cases += rec.Exchanges
		}
		targets := len(c.Under(s))
		if !slices.Contains(c.Under(s), c.Reference) {
			targets++ // the reference is asked too
		}
		add(PlanStep{Phase: "compat", Detail: fmt.Sprintf("%d cases × %d targets", cases, targets),
			Estimate: time.Duration(cases*targets) * planCase})
	}
	var scenarios []*study.Scenario
	for i := range s.Scenarios {
		if only(s.Scenarios[i].Name) {
			scenarios = append(scenarios, &s.Scenarios[i])
		}
	}
	if len(scenarios) > 0 { // the round trips are probed for the scenarios
		add(PlanStep{Phase: "probes", Detail: fmt.Sprintf("round trips of %d targets", len(s.Targets)),
			Estimate: time.Duration(len(s.Targets)) * planProbe})
	}
	for _, sc := range scenarios {
		if sc.Sweep != nil {
			add(sweepStep(s, sc, o.Rounds))
		} else {
			add(scenarioStep(s, sc, o.Rounds, p.Comparisons))
		}
	}
	if len(s.Costs) > 0 && only("costs") {
		add(PlanStep{Phase: "costs", Detail: fmt.Sprintf("%d counted under valgrind", len(s.Costs)),
			Estimate: time.Duration(len(s.Costs)) * planCost})
	}
	return p
}

// Comparisons counts the comparisons a run of s under o judges by the
// speed rule: at every level of every scenario it runs (and of each call
// of a mix, each step of a flow), each target but the baseline and its
// A/A twin; and each target's startup against the
// baseline's, with three starts or more.
func Comparisons(s *study.Study, o Options) int {
	only := func(part string) bool { return len(o.Only) == 0 || slices.Contains(o.Only, part) }
	candidates := func(targets []string) int {
		if !slices.Contains(targets, s.Baseline) {
			return 0
		}
		n := len(targets) - 1
		if len(s.AA) == 2 && slices.Contains(s.AA, s.Baseline) {
			for _, t := range s.AA {
				if t != s.Baseline && slices.Contains(targets, t) {
					n--
				}
			}
		}
		return n
	}
	n := 0
	if s.Startup != nil && s.Startup.Runs >= 3 && only("startup") {
		var started []string
		for _, t := range s.Targets {
			if t.Start != nil {
				started = append(started, t.Name)
			}
		}
		n += candidates(started)
	}
	for i := range s.Scenarios {
		sc := &s.Scenarios[i]
		if !only(sc.Name) {
			continue
		}
		if sc.Sweep != nil {
			rounds := sc.Rounds
			if o.Rounds > 0 {
				rounds = o.Rounds
			}
			if rounds > 1 && sc.Sweep.Search == nil {
				n += len(sc.Sweep.Connections) * len(sc.Sweep.Rate) * candidates(sc.Targets)
			}
			continue
		}
		// a mix's calls and a flow's steps are judged too, each its own
		n += len(levels(s.Kind(sc), sc)) * candidates(sc.Targets) * (1 + len(sc.Calls) + len(sc.Flow))
	}
	return n
}

// scenarioStep estimates a scenario: per level, a warm-up (and a
// calibration) on each target, then its rounds: a fixed number, or
// adaptive rounds, estimated at the first look at which a comparison of
// the family can decide (and at most the budget).
func scenarioStep(s *study.Study, sc *study.Scenario, roundsOverride, family int) PlanStep {
	kind := s.Kind(sc)
	rounds := sc.Rounds
	adaptive := sc.Adaptive && roundsOverride == 0
	if roundsOverride > 0 {
		rounds = roundsOverride
	}
	maxRounds := rounds
	if adaptive {
		looks := stats.Schedule(s.Defaults.Policy().Alpha/float64(max(family, 1)), rounds)
		rounds = looks[0].Rounds
	}
	targets := len(sc.Targets)
	nlevels := len(levels(kind, sc))
	warm := s.Defaults.Warmup
	if kind == study.KindDrain {
		warm = planDrainWarmup
	}
	run := sc.Duration
	calibrated := false
	switch {
	case sc.Replay != nil && run == 0 && sc.Model() == study.KindOpen && sc.Replay.Speed > 0:
		run = time.Duration(float64(sc.Replay.Span) / sc.Replay.Speed) // one pass of the recording
	case len(sc.Load.Steps) > 0:
		for _, st := range sc.Load.Steps {
			run += st.Duration
		}
	case run > 0:
	default:
		// a count of requests: as long as a calibrated run, which lasts
		// min_duration on the slowest target
		run = s.Defaults.MinDuration
		calibrated = sc.Requests == 0 && counted(kind, sc) && sc.Replay == nil // a replay sends its recording once
	}
	fixed := time.Duration(targets) * warm
	if calibrated {
		fixed += time.Duration(targets*planCalibration) * s.Defaults.MinDuration
	}
	perLevel := fixed + time.Duration(rounds*targets)*run
	most := fixed + time.Duration(maxRounds*targets)*run
	roundsText := count(rounds, "round")
	if adaptive {
		most = min(most, max(s.Defaults.MaxTime, perLevel))
		roundsText = fmt.Sprintf("adaptive rounds (%d to %d, ≤ %s a level)", rounds, maxRounds, roundEstimate(s.Defaults.MaxTime))
	}
	detail := fmt.Sprintf("%s × %s × %s of ~%s", count(nlevels, "level"), count(targets, "target"), roundsText,
		run.Round(time.Millisecond))
	if calibrated {
		detail += ", calibrated"
	}
	detail += valuesPlan(s.Calls[sc.Call]) + replayPlan(sc)
	switch {
	case sc.IsMix():
		detail += fmt.Sprintf(", a mix of %d calls", len(sc.Calls))
	case sc.IsFlow():
		detail += fmt.Sprintf(", a flow of %d steps", len(sc.Flow))
	}
	return PlanStep{Phase: "scenario", Name: sc.Name, Detail: detail, Estimate: time.Duration(nlevels) * perLevel,
		Budget: time.Duration(nlevels) * most, Units: nlevels * targets * rounds}
}

// replayPlan says what a scenario replays: ", replays FILE (N requests
// ×SPEED)".
func replayPlan(sc *study.Scenario) string {
	rp := sc.Replay
	if rp == nil {
		return ""
	}
	s := fmt.Sprintf(", replays %s (%s", rp.Recording, count(rp.Exchanges, "request"))
	if sc.Model() == study.KindOpen && rp.Speed != 1 {
		s += fmt.Sprintf(" ×%g", rp.Speed)
	}
	if rp.Loop {
		s += ", looped"
	}
	return s + ")"
}

// valuesPlan says what a scenario's call's values do to its runs: ", per-request
// values", and where a feeder is read once, the requests a run ends at.
func valuesPlan(c *study.Call) string {
	if c == nil || !c.HasValues() {
		return ""
	}
	if n, ok := c.OnceRows(); ok {
		return fmt.Sprintf(", per-request values; every run ends after %d requests (the rows of %s, order once)", n, strings.Join(c.OnceFeeders(), ", "))
	}
	return ", per-request values"
}

// sweepStep estimates a sweep: its cells (or a search's probes) on each
// target, each a cell's duration, plus the wait for the mempool to drain
// where blocks confirm.
func sweepStep(s *study.Study, sc *study.Scenario, roundsOverride int) PlanStep {
	sw := sc.Sweep
	cells := len(sw.Connections) * len(sw.Rate)
	what := fmt.Sprintf("%d cells", cells)
	rounds := sc.Rounds
	if roundsOverride > 0 {
		rounds = roundsOverride
	}
	if rounds > 1 && sw.Search == nil {
		what += fmt.Sprintf(" × %d rounds", rounds)
		cells *= rounds
	}
	if q := sw.Search; q != nil && q.To > q.From && q.From > 0 {
		precision := q.Precision
		if precision <= 0 {
			precision = 0.1
		}
		probes := 2 + int(math.Ceil(math.Log2(math.Log(q.To/q.From)/math.Log1p(precision))))
		cells = len(sw.Connections) * probes * max(q.Repeats, 1)
		what = fmt.Sprintf("a search of ~%d probes", cells)
	}
	cell := sw.Duration
	if sw.Confirm == "cometbft" {
		cell += planMempoolDrain
	}
	targets := len(sc.Targets)
	return PlanStep{Phase: "sweep", Name: sc.Name, Detail: fmt.Sprintf("%s × %s of %s", what, count(targets, "target"), sw.Duration),
		Estimate: time.Duration(cells*targets) * cell, Units: cells * targets}
}

// count is n and a noun, plural when n is not 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// String is the plan as a table, one line a step and the total.
func (p Plan) String() string {
	var b strings.Builder
	rows := [][]string{{"phase", "name", "what", "estimate"}}
	span := func(est, budget time.Duration) string {
		if budget > est {
			return roundEstimate(est) + " (≤ " + roundEstimate(budget) + ")"
		}
		return roundEstimate(est)
	}
	for _, st := range p.Steps {
		rows = append(rows, []string{st.Phase, st.Name, st.Detail, span(st.Estimate, st.Budget)})
	}
	rows = append(rows, []string{"total", "", "", span(p.Total, p.Budget)})
	widths := make([]int, 4)
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		for i, c := range r {
			if i == len(r)-1 {
				fmt.Fprintf(&b, "%*s\n", widths[i], c)
				continue
			}
			fmt.Fprintf(&b, "%s%s  ", c, strings.Repeat(" ", widths[i]-len([]rune(c))))
		}
	}
	if p.Rule == stats.RuleShift && p.Comparisons > 0 {
		fmt.Fprintf(&b, "verdicts: %s, the chance of any false alarm held at %s (each at %s during the run; Holm's step-down at the end)\n",
			count(p.Comparisons, "comparison"), stats.Sig(p.Alpha), stats.Sig(p.Alpha/float64(p.Comparisons)))
	}
	return b.String()
}

// roundEstimate rounds an estimate to what it can claim: seconds, or whole
// minutes and seconds.
func roundEstimate(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s") // 2m0s is 2m
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m") // 1h0m is 1h
	}
	return s
}
