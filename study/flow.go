package study

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/values"
)

// MixCall is one call of a scenario's mix and its weight.
type MixCall struct {
	Call   string  `yaml:"call,required" doc:"A call of the mix."`
	Weight float64 `yaml:"weight" doc:"Its share of the mix's requests, relative to the other calls' weights (90 and 10: nine requests in ten are this call); default 1."`
}

// FlowStep is one step of a scenario's flow: a call, and what its answer
// gives the later steps.
type FlowStep struct {
	Call    string            `yaml:"call,required" doc:"The step's call."`
	Capture map[string]string `yaml:"capture" doc:"NAME → where in the step's answer its value is: a field path into the answer as JSON (an HTTP body, a JSON-RPC result, a gRPC message: key, result.token, items[0].id) or header:NAME (a header of an HTTP or JSON-RPC answer). Later steps of the same pass use it as ${NAME}, each client its own; a capture that finds nothing fails the rest of the pass (status capture)."`
}

// The protocols a mix or a flow may send: answers with JSON (and, over
// HTTP, headers) that one connection can carry in turn.
var multiProtocols = []string{ProtoHTTP, ProtoJSONRPC, ProtoGRPC}

// IsMix reports whether the scenario sends a mix of calls (calls:).
func (sc *Scenario) IsMix() bool { return len(sc.Calls) > 0 }

// IsFlow reports whether the scenario sends a flow of steps (flow:).
func (sc *Scenario) IsFlow() bool { return len(sc.Flow) > 0 }

// CallNames lists the calls the scenario sends: its call, its mix's calls
// or its flow's steps' (a call that two steps send, once), in order.
func (sc *Scenario) CallNames() []string {
	switch {
	case sc.IsMix():
		var names []string
		for _, mc := range sc.Calls {
			if !slices.Contains(names, mc.Call) {
				names = append(names, mc.Call)
			}
		}
		return names
	case sc.IsFlow():
		var names []string
		for _, st := range sc.Flow {
			if !slices.Contains(names, st.Call) {
				names = append(names, st.Call)
			}
		}
		return names
	case sc.Call != "":
		return []string{sc.Call}
	}
	return nil
}

// StepCapture is one capture of a flow's step: the name later steps use,
// and where it is read, a header of an HTTP answer or a field path into
// the answer as JSON (nil: the whole answer).
type StepCapture struct {
	Name   string
	Header string
	Path   []string
	// Source is where, as the study wrote it.
	Source string
}

// headerCapture is the prefix of a capture that reads an answer's header.
const headerCapture = "header:"

// parseCapture reads where a capture takes its value: header:NAME, or a
// field path without wildcards (a capture is one value).
func parseCapture(name, src string) (StepCapture, error) {
	c := StepCapture{Name: name, Source: src}
	if h, ok := strings.CutPrefix(src, headerCapture); ok {
		if h == "" || strings.ContainsFunc(h, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == ':' }) {
			return c, fmt.Errorf("bad header name %q", h)
		}
		c.Header = h
		return c, nil
	}
	segs, err := FieldPath(src)
	if err != nil {
		return c, err
	}
	if slices.ContainsFunc(segs, func(s string) bool { return s == "*" || s == "[*]" }) {
		return c, fmt.Errorf("path %q has a wildcard: a capture takes one value", src)
	}
	c.Path = segs
	return c, nil
}

// Captures lists the step's captures by name, parsed (the study checked
// them: an error is only that of a step made in code).
func (st FlowStep) Captures() ([]StepCapture, error) {
	var out []StepCapture
	for _, name := range slices.Sorted(maps.Keys(st.Capture)) {
		c, err := parseCapture(name, st.Capture[name])
		if err != nil {
			return nil, fmt.Errorf("capture %s: %w", name, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// StepCall is step k of a scenario's flow as it is sent: its call, with a
// values.Slot for every capture of an earlier step that the call uses
// (${NAME} in its request or headers), each client's own value set when
// that step's answer comes.
func (s *Study) StepCall(sc *Scenario, k int) (*Call, error) {
	if k < 0 || k >= len(sc.Flow) {
		return nil, fmt.Errorf("scenario %s has no step %d", sc.Name, k+1)
	}
	c := s.Calls[sc.Flow[k].Call]
	if c == nil {
		return nil, fmt.Errorf("scenario %s: step %d: undefined call %q", sc.Name, k+1, sc.Flow[k].Call)
	}
	return c.withSlots(stepsCapture(sc, k)), nil
}

// stepsCapture is the set of names the steps before step k capture.
func stepsCapture(sc *Scenario, k int) map[string]bool {
	names := map[string]bool{}
	for _, st := range sc.Flow[:k] {
		for name := range st.Capture {
			names[name] = true
		}
	}
	return names
}

// withSlots is the call with a values.Slot for each of its free names
// among captured (a copy; the call itself when there is none).
func (c *Call) withSlots(captured map[string]bool) *Call {
	var slots []string
	for _, name := range c.freeNames() {
		if captured[name] {
			slots = append(slots, name)
		}
	}
	if len(slots) == 0 {
		return c
	}
	out := *c
	out.ValueSpecs = maps.Clone(c.ValueSpecs)
	if out.ValueSpecs == nil {
		out.ValueSpecs = map[string]values.Spec{}
	}
	for _, name := range slots {
		out.ValueSpecs[name] = values.Slot{}
	}
	return &out
}

// freeNames lists the placeholders of the call's request and headers
// that are neither a target placeholder nor one of its values: case
// variables, or a flow's captures.
func (c *Call) freeNames() []string {
	return append(c.CaseVars(), c.headerVars()...)
}

// headerVars lists the placeholders of the call's headers (or gRPC
// metadata) that are neither ${env.NAME} nor its values: a flow's
// captures.
func (c *Call) headerVars() []string {
	var names []string
	c.mapStrings(func(_, value string, pt part) (string, error) {
		if pt != partHeader {
			return value, nil
		}
		for _, n := range Placeholders(value) {
			if !targetName(n) && !c.isValue(n) && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		return value, nil
	})
	return names
}

// flowCaptures maps each call a flow sends to the names that steps
// before it capture, over every flow of the study: what its strings may
// name besides its values.
func flowCaptures(s *Study) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for i := range s.Scenarios {
		sc := &s.Scenarios[i]
		for k, st := range sc.Flow {
			for name := range stepsCapture(sc, k) {
				if out[st.Call] == nil {
					out[st.Call] = map[string]bool{}
				}
				out[st.Call][name] = true
			}
		}
	}
	return out
}

// callAt is a call a scenario names, with the path of its name.
type callAt struct {
	name, path string
	c          *Call
}

// scenarioCalls checks that the scenario names exactly one of call,
// calls, flow and replay, and returns the calls it names (each defined one, with
// its path; a mix's and a flow's checked on their own).
func (v *validator) scenarioCalls(path string, sc *Scenario) []callAt {
	var given []string
	if _, set := v.pos[path+".call"]; set || sc.Call != "" {
		given = append(given, "call")
	}
	if _, set := v.pos[path+".calls"]; set {
		given = append(given, "calls")
	}
	if _, set := v.pos[path+".flow"]; set {
		given = append(given, "flow")
	}
	if _, set := v.pos[path+".replay"]; set {
		given = append(given, "replay")
	}
	const one = "one of call, calls (a mix), flow or replay (a recording's requests)"
	switch {
	case len(given) == 0:
		if !v.related(path) {
			v.errorf(path, one, "nothing to send")
		}
		return nil
	case len(given) > 1:
		v.errorf(path+"."+given[1], one, "both %s and %s", given[0], given[1])
		return nil
	}
	switch given[0] {
	case "calls":
		return v.mix(path, sc)
	case "flow":
		return v.flow(path, sc)
	case "replay":
		return nil // a recording's requests (validator.replay)
	}
	if c := v.callRef(path+".call", sc.Call); c != nil {
		return []callAt{{name: sc.Call, path: path + ".call", c: c}}
	}
	return nil
}

// multi checks a call of a mix or a flow: an http, jsonrpc or grpc call,
// without amqp's or cometbft's whole runs.
func (v *validator) multi(path, what string, at callAt) bool {
	if at.c == nil {
		return false
	}
	if p := at.c.Protocol(); p != "" && !slices.Contains(multiProtocols, p) {
		v.errorf(path, "an http, jsonrpc or grpc call: "+what, "call %s is %s", at.name, p)
		return false
	}
	return true
}

// mix checks a scenario's mix: at least two calls, each once and of
// positive weight, all of one protocol and endpoint (and, over HTTP, one
// version of it), since one connection carries them in turn.
func (v *validator) mix(path string, sc *Scenario) []callAt {
	out, alike := v.mixCalls(path+".calls", sc.Calls)
	for _, at := range alike {
		v.sameEndpoint(sc, out[0], at)
	}
	return out
}

// mixCalls checks a mix's list at path: at least two calls, each once and
// of positive weight, all of one protocol (and, over HTTP, one version of
// it). alike are the calls after the first that speak as it does: their
// endpoints are the one thing left to check.
func (v *validator) mixCalls(path string, calls []MixCall) (out, alike []callAt) {
	if len(calls) < 2 {
		v.errorf(path, "at least two calls (one call alone is call:)", "%d call", len(calls))
	}
	seen := map[string]int{}
	for i, mc := range calls {
		p := fmt.Sprintf("%s[%d]", path, i)
		if _, set := v.pos[p+".weight"]; set && mc.Weight == 0 {
			v.errorf(p+".weight", "a weight above 0 (leave out a call the mix never sends)", "weight 0")
		}
		if mc.Call == "" {
			continue
		}
		if j, dup := seen[mc.Call]; dup {
			v.errorf(p+".call", "each call once in a mix (its weight is its share)", "call %s is also %s[%d]", mc.Call, path[strings.LastIndex(path, ".")+1:], j)
			continue
		}
		seen[mc.Call] = i
		at := callAt{name: mc.Call, path: p + ".call", c: v.callRef(p+".call", mc.Call)}
		if v.multi(at.path, "one connection carries a mix's calls in turn", at) {
			out = append(out, at)
		}
	}
	if len(out) < 2 {
		return out, nil
	}
	first := out[0]
	for _, at := range out[1:] {
		switch {
		case at.c.Protocol() != first.c.Protocol():
			v.errorf(at.path, "a call of the mix's protocol, "+first.c.Protocol()+": one connection carries a mix's calls in turn",
				"call %s is %s, call %s %s", at.name, at.c.Protocol(), first.name, first.c.Protocol())
		case httpVersion(at.c) != httpVersion(first.c):
			v.errorf(at.path, "the HTTP version of the mix's other calls: one connection carries them in turn",
				"call %s speaks %s, call %s %s", at.name, httpVersion(at.c), first.name, httpVersion(first.c))
		default:
			alike = append(alike, at)
		}
	}
	return out, alike
}

// httpVersion is the HTTP a call speaks ("" for gRPC).
func httpVersion(c *Call) string {
	switch {
	case c.HTTP != nil && c.HTTP.HTTP2, c.JSONRPC != nil && c.JSONRPC.HTTP2:
		return "HTTP/2"
	case c.HTTP != nil, c.JSONRPC != nil:
		return "HTTP/1.1"
	}
	return ""
}

// sameEndpoint checks that a mix's call goes to its first call's endpoint
// on every target of the scenario.
func (v *validator) sameEndpoint(sc *Scenario, first, at callAt) {
	targets := sc.Targets
	if len(targets) == 0 {
		targets = v.targetNames()
	}
	for _, name := range targets {
		t := v.s.Target(name)
		if t == nil {
			continue
		}
		a, errA := first.c.EndpointName(t)
		b, errB := at.c.EndpointName(t)
		if errA == nil && errB == nil && a != b {
			v.errorf(at.path, "the endpoint of the mix's other calls: one connection carries them in turn",
				"on target %s call %s goes to endpoint %s, call %s to %s", name, at.name, b, first.name, a)
			return
		}
	}
}

// flow checks a scenario's flow: a closed loop on the workers, steps of
// http, jsonrpc or grpc calls, captures of names that no call's value
// shadows, each read from a header (HTTP) or a field path, and every
// name a step's call uses besides its values captured by an earlier step.
func (v *validator) flow(path string, sc *Scenario) []callAt {
	l := sc.Load
	switch {
	case sc.Sweep != nil:
		v.errorf(path+".sweep", "a load of concurrency: a flow runs in a closed loop", "a sweep of a flow")
	case l.Model() != KindClosed:
		v.errorf(path+".load", "concurrency (a closed loop): each client runs the flow's steps in turn, the next after the last answer", "%s for a flow", withArticle(string(l.Model())+" loop"))
	case l.Engine == "loop":
		v.errorf(path+".load.engine", "workers, or no engine: a flow's clients are goroutines, each running its steps", "engine loop for a flow")
	}
	if len(sc.Flow) == 0 {
		v.errorf(path+".flow", "at least one step", "no steps")
	}
	var out []callAt
	valueNames := map[string]bool{}
	for _, st := range sc.Flow {
		if c := v.s.Calls[st.Call]; c != nil {
			for name := range c.Values {
				valueNames[name] = true
			}
		}
	}
	captured := map[string]bool{}
	for k, st := range sc.Flow {
		p := fmt.Sprintf("%s.flow[%d]", path, k)
		at := callAt{name: st.Call, path: p + ".call", c: v.callRef(p+".call", st.Call)}
		ok := v.multi(at.path, "a flow's captures read JSON answers", at)
		if ok {
			out = append(out, at)
			for _, name := range at.c.freeNames() {
				if !captured[name] {
					v.errorf(at.path, "a name an earlier step of the flow captures (capture: {"+name+": PATH})",
						"call %s uses ${%s}, which no earlier step captures", st.Call, name)
					break
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(st.Capture)) {
			cp := p + ".capture." + name
			switch {
			case !identPattern.MatchString(name) || slices.Contains(reservedValueNames, name):
				v.errorf(cp, "letters, digits and _, starting with a letter or _, not a target placeholder's name", "bad capture name %q", name)
			case valueNames[name]:
				v.errorf(cp, "a name no call of the flow has a value of", "capture %s shadows a value of the same name", name)
			}
			c, err := parseCapture(name, st.Capture[name])
			switch {
			case err != nil:
				v.errorf(cp, "a field path (result.token, items[0].id) or header:NAME", "%v", err)
			case c.Header != "" && ok && httpVersion(at.c) == "":
				v.errorf(cp, "a field path: only an HTTP or JSON-RPC answer has headers", "header %s of a %s answer", c.Header, at.c.Protocol())
			}
		}
		for name := range st.Capture {
			captured[name] = true
		}
	}
	return out
}

// scenarioRefs checks what a scenario's calls must be, whatever their
// number: their request fixed but for values (and, in a flow, captures),
// values not on a sweep, no feeder read once in a batched loop, an
// endpoint on every target, an HTTP call for the event loop.
func (v *validator) scenarioRefs(path string, sc *Scenario, refs []callAt) {
	for _, at := range refs {
		c := at.c
		if !sc.IsFlow() {
			if vars := v.caseVarsOf(at.name, c); len(vars) > 0 {
				v.errorf(at.path, "a call with a fixed request (case variables are bound by compat cases only)",
					"call %s uses case variable ${%s}", at.name, vars[0])
			} else if hv := c.headerVars(); len(hv) > 0 {
				v.errorf(at.path, "a call whose headers name its values or ${env.NAME} only: a flow's capture has a value only in the flow",
					"call %s's headers use ${%s}", at.name, hv[0])
			}
		}
		switch once := c.onceFeedersOf(); {
		case c.HasValues() && sc.Sweep != nil:
			v.errorf(at.path, "a call without values for a sweep (its cells do not number their requests for values yet)",
				"call %s has values", at.name)
		case len(once) > 0 && sc.Load.Batch != nil:
			v.errorf(at.path, "a closed or an open loop for a call with a feeder read once: its run ends when the rows do",
				"call %s reads feeder %s once, which a batched loop cannot end on", at.name, once[0])
		}
		targets := sc.Targets
		if len(targets) == 0 {
			targets = v.targetNames()
		}
		for _, name := range targets {
			if t := v.s.Target(name); t != nil {
				v.endpoint(at.path, t, at.name, c)
			}
		}
	}
}

// caseVarsOf is the case variables of a call, cached by name.
func (v *validator) caseVarsOf(name string, c *Call) []string {
	vars, ok := v.caseVars[name]
	if !ok {
		vars = c.CaseVars()
		if v.caseVars == nil {
			v.caseVars = map[string][]string{}
		}
		v.caseVars[name] = vars
	}
	return vars
}

// withArticle is s after "a" or "an".
func withArticle(s string) string {
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}
