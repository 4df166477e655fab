package compat

import (
	"fmt"
	"maps"
	"slices"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// captured is one target's capture of one name: its value, or why it has
// none.
type captured struct {
	value any
	err   string
}

// askers are the targets a case's request is bound for, each with its own
// captures: the targets under test and a noise instance.
func (r *runner) askers() []string {
	out := slices.Clone(r.under)
	if n := r.s.Compat.Noise; n != "" && n != study.NoiseAgain && !slices.Contains(out, n) {
		out = append(out, n)
	}
	return out
}

// bind binds case g's call for every target it goes to, each with the
// case's values and the target's own captures, and returns them with the
// variables its oracle's call is bound to (the reference's captures). A
// capture the case uses that has no value for a target is an error, and
// nothing is then sent to any.
func (r *runner) bind(g group, vars map[string]any) (map[string]*study.Call, map[string]any, error) {
	c := r.s.Compat
	call := r.s.Calls[g.cs.Call]
	names := c.CapturesUsed(g.index, call)
	calls := map[string]*study.Call{}
	var shared *study.Call // without captures every target gets the same request
	for _, t := range r.askers() {
		if shared != nil {
			calls[t] = shared
			continue
		}
		tv, err := r.withCaptures(t, vars, names)
		if err != nil {
			return nil, nil, err
		}
		b, err := call.Bind(tv)
		if err != nil {
			return nil, nil, err
		}
		calls[t] = b
		if len(names) == 0 {
			shared = b
		}
	}
	oracleVars := vars
	if o := g.cs.Oracle; o != nil {
		var err error
		if oracleVars, err = r.withCaptures(r.under[0], vars, c.CapturesUsed(g.index, r.s.Calls[o.Call])); err != nil {
			return nil, nil, err
		}
	}
	return calls, oracleVars, nil
}

// withCaptures is vars and, for each name, target's captured value.
func (r *runner) withCaptures(target string, vars map[string]any, names []string) (map[string]any, error) {
	if len(names) == 0 {
		return vars, nil
	}
	out := make(map[string]any, len(vars)+len(names))
	maps.Copy(out, vars)
	for _, n := range names {
		c, ok := r.captured[target][n]
		switch {
		case !ok:
			return nil, fmt.Errorf("capture ${%s} has no value for %s: no case before this one captured it", n, target)
		case c.err != "":
			return nil, fmt.Errorf("capture ${%s} has no value for %s: %s", n, target, c.err)
		}
		out[n] = c.value
	}
	return out, nil
}

// capture takes case g's captures from each target's first answer (got)
// and records them in out; the values replace the target's earlier ones.
func (r *runner) capture(g group, out *results.Case, got map[string]answer) {
	for _, name := range slices.Sorted(maps.Keys(g.cs.Capture)) {
		path := g.cs.Capture[name]
		for _, t := range r.askers() {
			v, why := captureFrom(got, t, path)
			c := results.Capture{Name: name, Target: t, Path: path, OK: why == ""}
			if why != "" {
				c.Error = why
				why = fmt.Sprintf("compat.cases[%d] (%s): %s", g.index, g.cs.Call, why)
			}
			out.Captures = append(out.Captures, c)
			r.setCapture(t, name, captured{value: v, err: why})
		}
	}
}

// captureNone records that case g, not sent, captured nothing: the cases
// that use its captures are not sent either, and say why.
func (r *runner) captureNone(g group, out *results.Case) {
	for _, name := range slices.Sorted(maps.Keys(g.cs.Capture)) {
		for _, t := range r.askers() {
			out.Captures = append(out.Captures, results.Capture{Name: name, Target: t, Path: g.cs.Capture[name], Error: "the case was not sent"})
			r.setCapture(t, name, captured{err: fmt.Sprintf("compat.cases[%d] (%s) was not sent: %s", g.index, g.cs.Call, out.Error)})
		}
	}
}

func (r *runner) setCapture(target, name string, c captured) {
	if r.captured[target] == nil {
		r.captured[target] = map[string]captured{}
	}
	r.captured[target][name] = c
}

// captureFrom is the value at path in target's answer, or why there is
// none: no answer, a failed one, or nothing (or null) at the path.
func captureFrom(got map[string]answer, target, path string) (any, string) {
	a, ok := got[target]
	where := "at " + path
	if path == "" {
		where = "as the whole answer"
	}
	switch {
	case !ok:
		return nil, target + " was not asked"
	case a.Status != driver.StatusOK:
		return nil, fmt.Sprintf("%s answered %s", target, a.Status)
	}
	v, found := Extract(a.tree, path)
	if !found || v == nil {
		return nil, fmt.Sprintf("found nothing %s in %s's answer", where, target)
	}
	return v, ""
}
