package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/driver/internal/vary"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/values"
)

// Statuses of a flow's steps that its pass did not send, or whose capture
// found nothing.
const (
	// StatusCapture: a capture found nothing in the step's answer (a step
	// that answered, without the value the flow takes from it), and the
	// steps after it in the pass, not sent.
	StatusCapture = "capture"
	// StatusSkipped: a step not sent because an earlier step of the pass
	// failed.
	StatusSkipped = "skipped"
)

// FlowStep is one step of a flow: its name (for errors), its Caller (built
// with the step's call as study.Study.StepCall gives it: a values.Slot for
// each capture it uses), what it captures from its answer and the slots
// it fills from earlier captures.
type FlowStep struct {
	Name     string
	Caller   Caller
	Captures []study.StepCapture
	// Uses names the captures of earlier steps the step's call names,
	// each a values.Slot of its values.
	Uses []string
}

// Flow is the Caller of a scenario's flow, for a closed loop: each
// connection is a virtual user that runs the steps in order, again and
// again. Request i of the run is one pass: every step sends its call's
// request i (so the steps of a pass that name one source, by the same name
// and definition, get the same value), with the values its earlier steps
// captured from their answers, this user's own. A step that fails ends the
// pass: the steps after it are not sent and count as failures (status
// skipped); a capture that finds nothing fails its step and the rest of
// the pass with status capture. A run records each step apart as well
// (load.Parts, load.StepRecorder); its own latency is the pass's.
type Flow struct {
	steps []FlowStep
}

// NewFlow returns the Caller of a flow of steps.
func NewFlow(steps []FlowStep) (*Flow, error) {
	if len(steps) == 0 {
		return nil, errors.New("a flow of no steps")
	}
	for k, st := range steps {
		if st.Caller == nil {
			return nil, fmt.Errorf("flow step %d (%s) has no caller", k+1, st.Name)
		}
	}
	return &Flow{steps: steps}, nil
}

// Parts says that each of a run's requests is the flow's steps.
func (f *Flow) Parts() load.Parts { return load.Parts{N: len(f.steps)} }

// Ask refuses: a flow is sent by a scenario's load.
func (f *Flow) Ask(context.Context) ([][]byte, load.Result, error) {
	return nil, load.Result{}, errors.New("a flow is sent by a scenario's load, not asked once")
}

// keeper sends a request and keeps its answer: the drivers' Conns whose
// answers a flow captures from.
type keeper interface {
	Keep(ctx context.Context, i uint64, deadline time.Time, a *vary.Answer) load.Result
}

// varier is a Conn whose request parts vary, by a vary.Request whose
// slots a flow sets.
type varier interface {
	Vary() *vary.Request
}

// Dial opens one virtual user: a connection per step, over one
// connection where the protocols allow it.
func (f *Flow) Dial(ctx context.Context) (load.Conn, error) {
	callers := make([]Caller, len(f.steps))
	for k, st := range f.steps {
		callers[k] = st.Caller
	}
	conns, err := dialBeside(ctx, callers)
	if err != nil {
		return nil, err
	}
	c := &flowConn{f: f, conns: conns, keep: make([]keeper, len(conns)), vary: make([]*vary.Request, len(conns)),
		answers: make([]vary.Answer, len(conns)), captured: map[string]*captured{}}
	for k, st := range f.steps {
		if len(st.Captures) > 0 {
			kp, ok := conns[k].(keeper)
			if !ok {
				closeAll(conns)
				return nil, fmt.Errorf("flow step %d (%s): its answers cannot be captured from", k+1, st.Name)
			}
			c.keep[k] = kp
			for _, cp := range st.Captures {
				if cp.Header != "" {
					c.answers[k].Headers = append(c.answers[k].Headers, cp.Header)
				}
			}
		}
		if len(st.Uses) > 0 {
			v, ok := conns[k].(varier)
			if !ok || v.Vary() == nil {
				closeAll(conns)
				return nil, fmt.Errorf("flow step %d (%s): its request takes no captured values", k+1, st.Name)
			}
			c.vary[k] = v.Vary()
		}
	}
	return c, nil
}

// captured is a user's value of one capture: a JSON value, or a header's
// text.
type captured struct {
	b    []byte
	text bool
}

// flowConn is one virtual user of a flow.
type flowConn struct {
	f        *Flow
	conns    []load.Conn
	keep     []keeper
	vary     []*vary.Request
	answers  []vary.Answer
	captured map[string]*captured
	steps    load.StepRecorder
	// dec reads the answer a capture decodes.
	dec bytes.Reader
}

// RecordSteps takes the recorder of the run's steps.
func (c *flowConn) RecordSteps(s load.StepRecorder) { c.steps = s }

// step records step k of a pass (c.steps is nil outside a run of load).
func (c *flowConn) step(ctx context.Context, k int, deadline, sent, end time.Time, res load.Result) {
	if c.steps != nil {
		c.steps.Step(ctx, k, deadline, sent, end, res)
	}
}

// Do runs pass i: every step in order, each its call's request i.
func (c *flowConn) Do(ctx context.Context, i uint64, deadline time.Time) load.Result {
	failed := ""
	rest := StatusSkipped
	for k, st := range c.f.steps {
		if failed != "" {
			c.step(ctx, k, deadline, time.Time{}, time.Time{}, load.Result{Status: rest})
			continue
		}
		res, sent, end := c.send(ctx, k, i, deadline)
		if res.Status == "" && len(st.Captures) > 0 && !c.capture(k) {
			res = load.Result{Status: StatusCapture}
		}
		c.step(ctx, k, deadline, sent, end, res)
		if res.Status != "" {
			failed = res.Status
			if failed == StatusCapture {
				rest = StatusCapture
			}
		}
	}
	if failed != "" {
		return load.Result{Status: failed}
	}
	return load.Result{Units: 1}
}

// send sends step k's request i with the captures it uses, keeping its
// answer when it captures from it.
func (c *flowConn) send(ctx context.Context, k int, i uint64, deadline time.Time) (res load.Result, sent, end time.Time) {
	st := &c.f.steps[k]
	for _, name := range st.Uses {
		v := c.captured[name]
		var err error
		switch {
		case v == nil:
			err = fmt.Errorf("no capture %s", name)
		case v.text:
			err = c.vary[k].SetSlotText(name, v.b)
		default:
			err = c.vary[k].SetSlotJSON(name, v.b)
		}
		if err != nil {
			return load.Result{Status: load.StatusRequest}, time.Time{}, time.Time{}
		}
	}
	sent = time.Now()
	if c.keep[k] != nil {
		res = c.keep[k].Keep(ctx, i, deadline, &c.answers[k])
	} else {
		res = c.conns[k].Do(ctx, i, deadline)
	}
	return res, sent, time.Now()
}

// capture takes step k's captures from its answer; false when one finds
// nothing.
func (c *flowConn) capture(k int) bool {
	a := &c.answers[k]
	var tree any
	decoded := false
	h := 0
	for _, cp := range c.f.steps[k].Captures {
		v := c.captured[cp.Name]
		if v == nil {
			v = &captured{}
			c.captured[cp.Name] = v
		}
		if cp.Header != "" {
			val := a.Values[h]
			h++
			if val == nil {
				return false
			}
			v.b, v.text = append(v.b[:0], val...), true
			continue
		}
		if !decoded {
			decoded = true
			c.dec.Reset(a.Body)
			d := json.NewDecoder(&c.dec)
			d.UseNumber()
			if err := d.Decode(&tree); err != nil {
				if len(cp.Path) == 0 && len(a.Body) > 0 { // a text answer, whole
					v.b, v.text = append(v.b[:0], a.Body...), true
					continue
				}
				return false
			}
		}
		found, ok := lookup(tree, cp.Path)
		if !ok || found == nil {
			return false
		}
		js, err := json.Marshal(found)
		if err != nil {
			return false
		}
		v.b, v.text = append(v.b[:0], js...), false
	}
	return true
}

// lookup is the value at a field path (study.FieldPath's segments: keys,
// and [N] or a bare N for a list's element) in a decoded JSON tree.
func lookup(v any, segs []string) (any, bool) {
	for _, seg := range segs {
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[seg]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(seg, "["), "]"))
			if err != nil || n < 0 || n >= len(x) {
				return nil, false
			}
			v = x[n]
		default:
			return nil, false
		}
	}
	return v, true
}

// Close closes the user's connections.
func (c *flowConn) Close() error { return closeAll(c.conns) }

// NewFlowStep makes step st of a flow: call is the step's call as
// study.Study.StepCall gives it (a values.Slot for each capture it uses),
// sent by caller.
func NewFlowStep(st study.FlowStep, call *study.Call, caller Caller) (FlowStep, error) {
	caps, err := st.Captures()
	if err != nil {
		return FlowStep{}, err
	}
	var uses []string
	for _, name := range slices.Sorted(maps.Keys(call.ValueSpecs)) {
		if _, ok := call.ValueSpecs[name].(values.Slot); ok {
			uses = append(uses, name)
		}
	}
	return FlowStep{Name: st.Call, Caller: caller, Captures: caps, Uses: uses}, nil
}
