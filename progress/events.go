package progress

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tandem-bench/tandem/runner"
)

// StepLines prints a line when a run enters a step of its plan: where it
// stands and about how long is left.
func StepLines(w io.Writer) func(runner.Event) {
	return func(e runner.Event) {
		if e.Line != "" || e.Status {
			return
		}
		name := e.Phase
		if e.Name != "" {
			name += " " + e.Name
		}
		fmt.Fprintf(w, "[%d/%d] %s · %s elapsed, about %s left\n", e.Step, e.Steps, name,
			e.Elapsed.Round(time.Second), e.Left.Round(time.Second))
	}
}

// JSONEvents writes each event as one JSON object on a line.
func JSONEvents(w io.Writer) func(runner.Event) {
	enc := json.NewEncoder(w)
	return func(e runner.Event) {
		var level *int
		if e.Done != nil {
			level = &e.Level
		}
		enc.Encode(struct {
			Phase    string  `json:"phase"`
			Name     string  `json:"name,omitempty"`
			Step     int     `json:"step"`
			Steps    int     `json:"steps"`
			ElapsedS float64 `json:"elapsed_s"`
			LeftS    float64 `json:"left_s"`
			Line     string  `json:"line,omitempty"`
			Target   string  `json:"target,omitempty"`
			Round    int     `json:"round,omitempty"`
			Rounds   int     `json:"rounds,omitempty"`
			Status   bool    `json:"status,omitempty"`
			Done     *int    `json:"level_done,omitempty"`
		}{e.Phase, e.Name, e.Step, e.Steps, e.Elapsed.Seconds(), e.Left.Seconds(), e.Line, e.Target, e.Round, e.Rounds, e.Status, level})
	}
}

// Follow sets o's progress for a study run on stderr, whose plan it
// says first: one JSON object per event (asJSON); on a live terminal the
// plan, then a status area that follows it (a notice written meanwhile
// goes above it); elsewhere a line per step of the plan (every round's
// lines too where verbose, or on a terminal). Close what it returns when
// the run ends.
func Follow(stderr io.Writer, o *runner.Options, name string, plan runner.Plan, asJSON, verbose bool) *Area {
	switch {
	case asJSON:
		o.Events = JSONEvents(stderr)
	case LiveTerminal(stderr):
		fmt.Fprintf(stderr, "%s: the plan\n\n%s\n", name, plan)
		a := NewArea(stderr, len(plan.Steps), plan.Total, verbose, true)
		o.Events = a.Event
		return a
	case verbose || IsTerminal(stderr):
		o.Progress, o.Events = stderr, StepLines(stderr)
		fmt.Fprintf(stderr, "plan: %d steps, about %s (--plan lists them)\n", len(plan.Steps), plan.Total.Round(time.Second))
	default:
		// a log (CI, a pipe): a line per step of the plan, not per round
		o.Events = StepLines(stderr)
		fmt.Fprintf(stderr, "plan: %d steps, about %s (-v shows every round)\n", len(plan.Steps), plan.Total.Round(time.Second))
	}
	return nil
}
