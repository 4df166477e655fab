package compat

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// oracle asks the case's oracle in its own terms (its call, bound to the
// case's variables) and checks every target's answer against it.
func (r *runner) oracle(ctx context.Context, co *study.CaseOracle, vars map[string]any, answers []answer) *results.OracleResult {
	out := &results.OracleResult{Name: co.Name, Checks: []results.OracleCheck{}}
	o := r.s.Compat.Oracles[co.Name]
	call, err := r.s.Calls[co.Call].Bind(vars)
	if err != nil {
		out.Status = "not sent: " + err.Error()
		return out
	}
	oa, err := r.ask(ctx, o.Target, o.URL, call)
	if err != nil {
		out.Status = "not sent: " + err.Error()
		return out
	}
	out.Status = oa.Status
	if oa.Status != driver.StatusOK {
		return out
	}
	for _, a := range answers {
		if a.Status != driver.StatusOK {
			continue // the status is already judged against the reference
		}
		for _, ch := range co.Checks {
			rule := ch.Rule
			if rule == "" {
				rule = study.RuleEqual
			}
			got, _ := Extract(a.tree, ch.Path)
			want, _ := Extract(oa.tree, ch.Oracle)
			same, _ := ch.Same.V.([]any)
			out.Checks = append(out.Checks, results.OracleCheck{Target: a.Target, Path: ch.Path, OraclePath: ch.Oracle,
				Rule: rule, OK: Holds(rule, got, want, same), Value: Show(got), OracleValue: Show(want)})
		}
	}
	return out
}

// Extract returns the value at a field path in a tree; a [*] segment
// collects every element into a list, and a list element may be named
// [N] or .N (txs[0].height = txs.0.height, the form readiness conditions
// were written in). A path that does not exist gives nil and false.
func Extract(tree any, path string) (any, bool) {
	segs, err := ParsePattern(path)
	if err != nil {
		return nil, false
	}
	return extract(tree, segs)
}

func extract(v any, segs []string) (any, bool) {
	if len(segs) == 0 {
		return v, true
	}
	seg := segs[0]
	switch x := v.(type) {
	case map[string]any:
		if e, ok := x[seg]; ok {
			return extract(e, segs[1:])
		}
		if seg == "*" {
			var out []any
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if e, ok := extract(x[k], segs[1:]); ok {
					out = append(out, e)
				}
			}
			return out, true
		}
	case []any:
		if seg == "[*]" {
			out := make([]any, 0, len(x))
			for _, e := range x {
				if e, ok := extract(e, segs[1:]); ok {
					out = append(out, e)
				}
			}
			return out, true
		}
		// [N] indexes a list; a bare N too (the older dotted form, list.0.x)
		if i, err := strconv.Atoi(strings.Trim(seg, "[]")); err == nil && i >= 0 && i < len(x) {
			return extract(x[i], segs[1:])
		}
	}
	return nil, false
}

// Holds applies an oracle rule: equal (after mapping each value in a same
// group to the group's first), reversed (equal after reversing the bytes
// of hex or base64 strings) or set (the same distinct elements).
func Holds(rule string, got, want any, same []any) bool {
	norm := func(v any) any { return normalize(v, same) }
	switch rule {
	case study.RuleReversed:
		return sameTree(norm(reverseAll(got)), norm(want))
	case study.RuleSet:
		g, ok1 := got.([]any)
		w, ok2 := want.([]any)
		if !ok1 || !ok2 {
			return false
		}
		set := func(l []any) []string {
			var keys []string
			for _, e := range l {
				keys = append(keys, string(Canonical(norm(e))))
			}
			slices.Sort(keys)
			return slices.Compact(keys)
		}
		return slices.Equal(set(g), set(w))
	}
	return sameTree(norm(got), norm(want))
}

func reverseAll(v any) any {
	switch x := v.(type) {
	case string:
		return Reversed(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = reverseAll(e)
		}
		return out
	}
	return v
}

// normalize replaces every scalar that belongs to a same group with the
// group's first value.
func normalize(v any, same []any) any {
	if len(same) == 0 {
		return v
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e, same)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e, same)
		}
		return out
	}
	c := string(Canonical(v))
	for _, g := range same {
		group, _ := g.([]any)
		for _, e := range group {
			if string(Canonical(e)) == c {
				return group[0]
			}
		}
	}
	return v
}
