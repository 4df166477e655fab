package progress

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/runner"
)

// Off a terminal a run's progress is a line per step of its plan, or one
// JSON object per event; a round's own lines and status events are not
// step lines.
func TestFollow(t *testing.T) {
	plan := runner.Plan{Steps: make([]runner.PlanStep, 3), Total: 90 * time.Second}
	var b bytes.Buffer
	var o runner.Options
	if a := Follow(&b, &o, "s", plan, false, false); a != nil || o.Events == nil {
		t.Fatalf("a log got an area (%v) or no events", a)
	}
	o.Events(runner.Event{Phase: "scenario", Name: "get", Step: 2, Steps: 3, Elapsed: 30 * time.Second, Left: time.Minute})
	o.Events(runner.Event{Line: "a round's line", Target: "a"})
	o.Events(runner.Event{Status: true, Target: "a", Round: 1, Rounds: 3})
	want := "plan: 3 steps, about 1m30s (-v shows every round)\n[2/3] scenario get · 30s elapsed, about 1m0s left\n"
	if b.String() != want {
		t.Errorf("step lines %q; want %q", b.String(), want)
	}
	b.Reset()
	o = runner.Options{}
	Follow(&b, &o, "s", plan, true, false)
	o.Events(runner.Event{Phase: "scenario", Step: 1, Steps: 3, Left: time.Second, Target: "a", Round: 2, Rounds: 3, Status: true})
	var ev struct {
		Phase  string  `json:"phase"`
		LeftS  float64 `json:"left_s"`
		Round  int     `json:"round"`
		Status bool    `json:"status"`
	}
	if err := json.Unmarshal(b.Bytes(), &ev); err != nil || ev.Phase != "scenario" || ev.LeftS != 1 || ev.Round != 2 || !ev.Status {
		t.Errorf("JSON event %q: %+v, %v", b.String(), ev, err)
	}
	var nilArea *Area
	nilArea.Close() // none to close
}

// tandem load's status line says the time, the last second's rate and
// latency, the counts and what is left, and fits a window.
func TestLoadStatus(t *testing.T) {
	var live load.Live
	live.Sent.Store(50)
	live.OK.Store(48)
	live.Errors.Store(2)
	s := loadStatus(&live, 5*time.Second, 10*time.Second, 0)
	for _, want := range []string{"5s / 10s", "50 sent, 48 ok, 2 errors", "about 5s left"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
	if got := Fit(s, 12); len([]rune(got)) > 12 || !strings.HasSuffix(got, "…") {
		t.Errorf("fitted to 12 cells: %q", got)
	}
	if IsTerminal(&bytes.Buffer{}) || LiveTerminal(&bytes.Buffer{}) {
		t.Error("a buffer taken for a terminal")
	}
}
