package runner

import (
	"testing"
	"time"
)

// The clock says where a run stands in its plan and scales what is left
// by how the finished steps went against their estimates.
func TestProgressClock(t *testing.T) {
	p := Plan{Steps: []PlanStep{
		{Phase: "startup", Estimate: 10 * time.Second},
		{Phase: "scenario", Name: "a", Estimate: 20 * time.Second},
		{Phase: "scenario", Name: "b", Estimate: 30 * time.Second},
	}, Total: 60 * time.Second}
	t0 := time.Unix(1000, 0)
	c := newProgressClock(p, t0)
	if e := c.event("x", t0); e.Step != 0 || e.Left != 60*time.Second || e.Steps != 3 {
		t.Errorf("before the first step: %+v", e)
	}
	if !c.enter("startup", "", t0) {
		t.Fatal("no startup step")
	}
	if e := c.event("", t0.Add(4*time.Second)); e.Step != 1 || e.Phase != "startup" || e.Left != 56*time.Second {
		t.Errorf("4 s into startup: %+v; want step 1, 6 s + 50 s left", e)
	}
	// startup took 20 s, twice its estimate of 10 s: with the plan's
	// weight of 30 s, the rest is scaled by (20 + 30) / (10 + 30) = 1.25
	if !c.enter("scenario", "a", t0.Add(20*time.Second)) {
		t.Fatal("no scenario a")
	}
	if e := c.event("", t0.Add(25*time.Second)); e.Step != 2 || e.Name != "a" || e.Elapsed != 25*time.Second || e.Left != 20*time.Second+37500*time.Millisecond {
		t.Errorf("5 s into a after a slow startup: %+v; want 20 s + 37.5 s left", e)
	}
	if c.enter("scenario", "nosuch", t0) || c.enter("startup", "", t0) {
		t.Error("entered a step that is not ahead in the plan")
	}
	// a step that overruns its estimate leaves nothing of itself to wait for
	if e := c.event("", t0.Add(5*time.Minute)); e.Left != 37500*time.Millisecond {
		t.Errorf("long past a's estimate: %v left; want b's 37.5 s", e.Left)
	}
}

// A short step far off its estimate does not swing a long one: a start of
// 50 ms planned at 2 s before an 18-minute sweep.
func TestProgressClockShortStepsWeighLittle(t *testing.T) {
	p := Plan{Steps: []PlanStep{{Phase: "startup", Estimate: 2 * time.Second}, {Phase: "sweep", Name: "grid", Estimate: 18 * time.Minute}},
		Total: 18*time.Minute + 2*time.Second}
	t0 := time.Unix(1000, 0)
	c := newProgressClock(p, t0)
	c.enter("startup", "", t0)
	c.enter("sweep", "grid", t0.Add(50*time.Millisecond))
	if e := c.event("", t0.Add(time.Second)); e.Left < 17*time.Minute || e.Left > 18*time.Minute {
		t.Errorf("1 s into the sweep: %v left; want about 18 minutes", e.Left)
	}
}

// Once a step's first runs are done, their pace says what is left of it:
// calibration refines the plan's guess.
func TestProgressClockRefinesByRuns(t *testing.T) {
	p := Plan{Steps: []PlanStep{{Phase: "scenario", Name: "a", Estimate: 12 * time.Second, Units: 6}}, Total: 12 * time.Second}
	t0 := time.Unix(1000, 0)
	c := newProgressClock(p, t0)
	c.enter("scenario", "a", t0)
	if e := c.event("", t0.Add(3*time.Second)); e.Left != 9*time.Second {
		t.Errorf("no run done yet: %v left; want the plan's 9 s", e.Left)
	}
	c.unitDone()
	c.unitDone()
	// two runs in 10 s: the other four take 20 s, not the plan's 2 s
	if e := c.event("", t0.Add(10*time.Second)); e.Left != 20*time.Second {
		t.Errorf("two of six runs in 10 s: %v left; want 20 s", e.Left)
	}
	for range 4 {
		c.unitDone()
	}
	if e := c.event("", t0.Add(30*time.Second)); e.Left != 0 {
		t.Errorf("every run done: %v left; want 0", e.Left)
	}
}
