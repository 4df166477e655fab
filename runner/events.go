package runner

import (
	"time"

	"github.com/tandem-bench/tandem/results"
)

// Event is where a run stands: the step of its plan it is in, how long it
// has run and about how long is left. A run sends one when it enters a
// step (Line empty) and one with every progress line.
type Event struct {
	// Phase and Name are the step's (see PlanStep); Step counts from 1 to
	// Steps.
	Phase, Name string
	Step, Steps int
	// Elapsed is the run's time so far; Left is the estimate of the rest:
	// the plan's remaining steps, scaled by how the finished ones compared
	// with their estimates.
	Elapsed, Left time.Duration
	// Line is a progress line, or empty when the step begins.
	Line string
	// Target, Round and Rounds say which round (or sweep cell) of which
	// target the event is about, when it is about one; Rounds is 0 where
	// the count is not known (a sweep's search). A line about a target
	// with no round is a warm-up's or a calibration's.
	Target        string
	Round, Rounds int
	// Status marks an event that only says what is measured now (a round
	// begins): no line, no new step.
	Status bool
	// Done is set when a level of a scenario has finished: the scenario so
	// far (its rounds, summary and verdicts), valid during the call only,
	// and Level the level that finished.
	Done  *results.Scenario
	Level int
}

// progressClock follows a run through its plan.
type progressClock struct {
	plan  Plan
	start time.Time
	// step is the index of the current step (-1 before the first);
	// stepStart when it began.
	step      int
	stepStart time.Time
	// units counts the current step's measured runs done so far.
	units int
}

func newProgressClock(p Plan, now time.Time) *progressClock {
	return &progressClock{plan: p, start: now, step: -1, stepStart: now}
}

// enter moves to the plan's next step of the phase (and name), if there
// is one after the current step, and reports whether it moved.
func (c *progressClock) enter(phase, name string, now time.Time) bool {
	for i := c.step + 1; i < len(c.plan.Steps); i++ {
		if st := c.plan.Steps[i]; st.Phase == phase && (name == "" || st.Name == name) {
			c.step, c.stepStart, c.units = i, now, 0
			return true
		}
	}
	return false
}

// unitDone counts one measured run of the current step as done.
func (c *progressClock) unitDone() { c.units++ }

// event is the clock's reading at now, with a progress line.
func (c *progressClock) event(line string, now time.Time) Event {
	e := Event{Steps: len(c.plan.Steps), Elapsed: now.Sub(c.start), Line: line}
	if c.step < 0 {
		e.Left = c.plan.Total
		return e
	}
	st := c.plan.Steps[c.step]
	e.Phase, e.Name, e.Step = st.Phase, st.Name, c.step+1
	var done, rest time.Duration // estimates of the finished steps and of those after this one
	for i, s := range c.plan.Steps {
		switch {
		case i < c.step:
			done += s.Estimate
		case i > c.step:
			rest += s.Estimate
		}
	}
	// how the run has gone against the plan so far: later steps are
	// scaled alike, the plan weighing as much as a tenth of the run (at
	// least 30 s) of measured time, so a short step far off its estimate
	// (a start of 50 ms planned at 2 s) cannot swing an 18-minute sweep
	scale := 1.0
	if before := c.stepStart.Sub(c.start); done > 0 {
		prior := float64(max(c.plan.Total/10, 30*time.Second))
		scale = min(max((float64(before)+prior)/(float64(done)+prior), 0.25), 4)
	}
	inStep := now.Sub(c.stepStart)
	current := max(time.Duration(float64(st.Estimate)*scale)-inStep, 0)
	if c.units > 0 && st.Units > c.units {
		// the step's own pace so far: its remaining runs at the mean
		// length of those done (warm-ups and calibration included)
		current = time.Duration(float64(inStep) / float64(c.units) * float64(st.Units-c.units))
	} else if c.units >= st.Units && st.Units > 0 {
		current = 0
	}
	e.Left = current + time.Duration(float64(rest)*scale)
	return e
}
