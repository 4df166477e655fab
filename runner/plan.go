package runner

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/study"
)

// Plan is what a run of a study will do, step by step, with an estimate of
// each step's time. It is computed from the study and the options alone:
// nothing is started.
type Plan struct {
	Steps []PlanStep
	// Total is the sum of the steps' estimates.
	Total time.Duration
}

// PlanStep is one phase of a plan, or one scenario or sweep.
type PlanStep struct {
	// Phase is startup, compat, probes, scenario, sweep or costs; Name
	// names the scenario or sweep.
	Phase, Name string
	// Detail says what the step does, e.g. "3 levels × 2 targets × 3
	// rounds of ~2s, calibrated".
	Detail string
	// Estimate is the step's expected length.
	Estimate time.Duration
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
		p.Steps = append(p.Steps, st)
		p.Total += st.Estimate
	}
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
			add(scenarioStep(s, sc, o.Rounds))
		}
	}
	if len(s.Costs) > 0 && only("costs") {
		add(PlanStep{Phase: "costs", Detail: fmt.Sprintf("%d counted under valgrind", len(s.Costs)),
			Estimate: time.Duration(len(s.Costs)) * planCost})
	}
	return p
}

// scenarioStep estimates a scenario: per level, a warm-up (and a
// calibration) on each target, then its rounds.
func scenarioStep(s *study.Study, sc *study.Scenario, roundsOverride int) PlanStep {
	kind := s.Kind(sc)
	rounds := sc.Rounds
	if roundsOverride > 0 {
		rounds = roundsOverride
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
	case len(sc.Load.Steps) > 0:
		for _, st := range sc.Load.Steps {
			run += st.Duration
		}
	case run > 0:
	default:
		// a count of requests: as long as a calibrated run, which lasts
		// min_duration on the slowest target
		run = s.Defaults.MinDuration
		calibrated = sc.Requests == 0 && counted(kind, sc)
	}
	perLevel := time.Duration(targets)*warm + time.Duration(rounds*targets)*run
	if calibrated {
		perLevel += time.Duration(targets*planCalibration) * s.Defaults.MinDuration
	}
	detail := fmt.Sprintf("%s × %s × %s of ~%s", count(nlevels, "level"), count(targets, "target"), count(rounds, "round"),
		run.Round(time.Millisecond))
	if calibrated {
		detail += ", calibrated"
	}
	return PlanStep{Phase: "scenario", Name: sc.Name, Detail: detail, Estimate: time.Duration(nlevels) * perLevel, Units: nlevels * targets * rounds}
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
	for _, st := range p.Steps {
		rows = append(rows, []string{st.Phase, st.Name, st.Detail, roundEstimate(st.Estimate)})
	}
	rows = append(rows, []string{"total", "", "", roundEstimate(p.Total)})
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
	return b.String()
}

// roundEstimate rounds an estimate to what it can claim: seconds, or whole
// minutes and seconds.
func roundEstimate(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
