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
