package study

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/stats"
)

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

type validator struct {
	s    *Study
	file string
	pos  map[string]Pos
	// strs holds every string read that has a placeholder, by its path.
	strs map[string]string
	// bad holds the paths that failed to decode: checks of them or of what
	// encloses them would only repeat the error.
	bad  map[string]bool
	errs ErrorList
	// caseVars caches each call's case variables (a walk of its request).
	caseVars map[string][]string
	// captured maps each call a flow sends to the names that the flow's
	// earlier steps capture (flowCaptures).
	captured map[string]map[string]bool
	// lim is the machine the load bounds are checked against.
	lim limits
	// kernelErr is lim.kernelPath's answer, once asked (kernelAsked).
	kernelErr   error
	kernelAsked bool
}

// kernelProbe is why the kernel's network path cannot be used here; nil if
// it can. The probe runs once per validation.
func (v *validator) kernelProbe() error {
	if !v.kernelAsked {
		v.kernelAsked = true
		if v.lim.kernelPath == nil {
			v.kernelErr = errors.New("not probed")
		} else {
			v.kernelErr = v.lim.kernelPath()
		}
	}
	return v.kernelErr
}

func (v *validator) related(path string) bool {
	for b := range v.bad {
		if b == path || within(b, path) || within(path, b) {
			return true
		}
	}
	return false
}

// within reports whether path lies inside parent.
func within(path, parent string) bool {
	return parent == "" || strings.HasPrefix(path, parent+".") || strings.HasPrefix(path, parent+"[")
}

func (v *validator) errorf(path, expected, format string, args ...any) {
	if v.related(path) || len(v.errs) > maxErrors {
		return
	}
	p, ok := v.pos[path]
	for !ok && path != "" {
		// a missing key: point at its parent
		if i := strings.LastIndexAny(path, ".["); i >= 0 {
			path = path[:i]
		} else {
			path = ""
		}
		p, ok = v.pos[path]
	}
	if !ok {
		p = Pos{1, 1}
	}
	v.errs = append(v.errs, &Error{File: v.file, Pos: p, Path: path, Msg: fmt.Sprintf(format, args...), Expected: expected})
}

func (v *validator) check() {
	s := v.s
	if _, set := v.pos["version"]; set && s.Version != 1 {
		v.errorf("version", "version: 1", "unsupported version %d", s.Version)
	}
	if _, set := v.pos["targets"]; set && len(s.Targets) == 0 {
		v.errorf("targets", "at least one target", "no targets")
	}
	v.names("targets", len(s.Targets), func(i int) string { return s.Targets[i].Name })
	v.names("services", len(s.Services), func(i int) string { return s.Services[i].Name })
	for i := range s.Services {
		v.service(fmt.Sprintf("services[%d]", i), &s.Services[i])
	}
	v.names("scenarios", len(s.Scenarios), func(i int) string { return s.Scenarios[i].Name })
	if s.Baseline != "" {
		v.targetRef("baseline", s.Baseline)
	}
	if len(s.AA) > 0 {
		v.aa()
	}
	v.defaults()
	v.captured = flowCaptures(s)
	for _, name := range slices.Sorted(maps.Keys(s.Calls)) {
		v.call(name, s.Calls[name])
	}
	for i := range s.Targets {
		v.target(fmt.Sprintf("targets[%d]", i), &s.Targets[i])
	}
	if s.Startup != nil && s.Startup.Runs < 1 {
		v.errorf("startup.runs", "at least 1", "runs is %d", s.Startup.Runs)
	}
	for i := range s.Scenarios {
		v.scenario(fmt.Sprintf("scenarios[%d]", i), &s.Scenarios[i])
	}
	if c := s.Compat; c != nil {
		v.compat(c)
	}
	if m := s.Metrics; m != nil && m.Prometheus != "" {
		if !strings.HasPrefix(m.Prometheus, "http://") && !strings.HasPrefix(m.Prometheus, "https://") && !strings.HasPrefix(m.Prometheus, "${env.") {
			v.errorf("metrics.prometheus", "a Prometheus server's http:// or https:// URL", "url %q", m.Prometheus)
		}
		v.envOnly("metrics.prometheus", m.Prometheus)
	}
	v.costs()
	if m := s.Metrics; m != nil && m.Interval < 0 {
		v.errorf("metrics.interval", "a positive duration", "interval %s", m.Interval)
	}
	v.settings()
	resolved := map[string]bool{}
	for _, st := range s.envSettings() {
		resolved[st.path] = true
	}
	v.envElsewhere(v.strs, resolved)
}

// aa checks the A/A pair: two different targets, each one of the study's.
func (v *validator) aa() {
	s := v.s
	switch {
	case len(s.AA) != 2:
		v.errorf("aa", "two different targets that run the same build", "aa names %d targets", len(s.AA))
	case s.AA[0] == s.AA[1]:
		v.errorf("aa", "two different targets that run the same build", "aa names %s twice", s.AA[0])
	}
	for i, name := range s.AA {
		v.targetRef(fmt.Sprintf("aa[%d]", i), name)
	}
}

// defaults checks the defaults block's settings.
func (v *validator) defaults() {
	s := v.s
	for _, f := range []struct {
		key string
		v   float64
	}{{"noise_floor", s.Defaults.NoiseFloor}, {"max_error_share_diff", s.Defaults.MaxErrorShareDiff},
		{"max_rate_shortfall", s.Defaults.MaxShortfall}} {
		if f.v < 0 || f.v >= 100 || math.IsNaN(f.v) {
			v.errorf("defaults."+f.key, "a percentage from 0 to 100", "%s %v", strings.ReplaceAll(f.key, "_", " "), f.v)
		}
	}
	switch s.Defaults.Rule {
	case "", string(stats.RuleShift), string(stats.RuleSpread):
	default:
		v.errorf("defaults.rule", "shift or spread", "unknown rule %q", s.Defaults.Rule)
	}
	if _, set := v.pos["defaults.alpha"]; set {
		if a := s.Defaults.Alpha; !(a > 0 && a < 0.5) {
			v.errorf("defaults.alpha", "a probability above 0 and below 0.5, e.g. 0.05", "alpha %v", a)
		}
	}
	if _, set := v.pos["defaults.max_rounds"]; set && s.Defaults.MaxRounds < 2 {
		v.errorf("defaults.max_rounds", "at least 2 (one round has no spread)", "max_rounds %d", s.Defaults.MaxRounds)
	}
	if _, set := v.pos["defaults.max_rounds"]; set && s.Defaults.MaxRounds > MaxRoundsLimit {
		v.errorf("defaults.max_rounds", fmt.Sprintf("at most %d", MaxRoundsLimit), "max_rounds %d", s.Defaults.MaxRounds)
	}
	if _, set := v.pos["defaults.max_time"]; set && s.Defaults.MaxTime <= 0 {
		v.errorf("defaults.max_time", "a positive duration, e.g. 2m", "max_time %v", s.Defaults.MaxTime)
	}
	if _, set := v.pos["defaults.client_bound"]; set {
		if c := s.Defaults.ClientBound; c <= 0 || c > 100 || math.IsNaN(c) {
			v.errorf("defaults.client_bound", "a percentage above 0, at most 100", "client bound %v", c)
		}
	}
}

// costs checks each cost's operation count and command.
func (v *validator) costs() {
	s := v.s
	for i, c := range s.Costs {
		path := fmt.Sprintf("costs[%d]", i)
		if c.Ops < 0 {
			v.errorf(path+".ops", "a positive operation count", "ops %d", c.Ops)
		}
		if !slices.ContainsFunc(c.Command, func(a string) bool { return strings.Contains(a, "{ops}") }) && len(c.Command) > 0 {
			v.errorf(path+".command", "an argument with {ops}, where the operation count goes", "no {ops} in the command")
		}
		for j, a := range c.Command {
			v.placeholders(fmt.Sprintf("%s.command[%d]", path, j), a, true)
		}
	}
}

func (v *validator) names(list string, n int, name func(int) string) {
	seen := map[string]int{}
	for i := 0; i < n; i++ {
		path := fmt.Sprintf("%s[%d].name", list, i)
		nm := name(i)
		if nm == "" {
			continue // reported as missing
		}
		if !namePattern.MatchString(nm) {
			v.errorf(path, "letters, digits, '.', '_' and '-', starting with a letter or digit", "bad name %q", nm)
		}
		if j, dup := seen[nm]; dup {
			v.errorf(path, "unique names", "duplicate name %q (also %s[%d])", nm, list, j)
			continue
		}
		seen[nm] = i
	}
}

func (v *validator) targetRef(path, name string) {
	if name != "" && v.s.Target(name) == nil {
		v.errorf(path, "one of: "+strings.Join(v.targetNames(), ", "), "undefined target %q", name)
	}
}

func (v *validator) targetNames() []string {
	var names []string
	for _, t := range v.s.Targets {
		names = append(names, t.Name)
	}
	return names
}

func (v *validator) callRef(path, name string) *Call {
	if name == "" {
		return nil
	}
	c, ok := v.s.Calls[name]
	if !ok {
		expected := "one of: " + strings.Join(slices.Sorted(maps.Keys(v.s.Calls)), ", ")
		if len(v.s.Calls) == 0 {
			expected = "a call defined under calls:"
		}
		v.errorf(path, expected, "undefined call %q", name)
		return nil
	}
	return c
}

func (v *validator) call(name string, c *Call) {
	path := "calls." + name
	if !namePattern.MatchString(name) {
		v.errorf(path, "letters, digits, '.', '_' and '-', starting with a letter or digit", "bad call name %q", name)
	}
	if c == nil {
		v.errorf(path, "a mapping with one of "+protocolNames(), "empty call")
		return
	}
	switch ps := c.protocols(); len(ps) {
	case 0:
		v.errorf(path, "one of: "+protocolNames(), "no protocol key")
	case 1:
	default:
		v.errorf(path, "exactly one protocol key", "several protocols: %s", strings.Join(ps, ", "))
	}
	if c.Unit != "" && c.Unit != "request" && c.Unit != "message" {
		v.errorf(path+".unit", "request or message", "unknown unit %q", c.Unit)
	}
	names, reqs := c.requests()
	for i, req := range reqs {
		req.check(v, path+"."+names[i])
	}
	v.callValues(path, c)
	// ${env.NAME} everywhere tandem resolves it in a call, case variables
	// in its request, its values (and what a flow captures before it) in
	// the parts that take them: nothing else is expanded there
	captured := v.captured[name]
	c.mapStrings(func(p, value string, pt part) (string, error) {
		switch {
		case (len(c.Values) > 0 || len(captured) > 0) && pt.takesValues():
			v.valuePlaceholders(path+"."+p, value, c, pt.request(), captured)
		case pt.request():
			v.placeholders(path+"."+p, value, false)
		case pt == partHeader:
			v.headerPlaceholders(path+"."+p, value)
		default:
			v.envOnly(path+"."+p, value)
		}
		return value, nil
	})
}

// valuePlaceholders checks a string of a call with values (or a flow's
// captures), in a part that takes them: ${env.NAME}, the call's values,
// the names captured and, in the request itself, case variables.
func (v *validator) valuePlaceholders(path, value string, c *Call, caseVars bool, captured map[string]bool) {
	_, err := Expand(value, func(name string) (string, bool) {
		if env, ok := envName(name); ok {
			return "", !identPattern.MatchString(env)
		}
		return "", !c.isValue(name) && !captured[name] && !(caseVars && identPattern.MatchString(name))
	})
	if err != nil {
		names := slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(c.Values)), slices.Collect(maps.Keys(captured))...)))
		v.errorf(path, "a value of the call ${"+strings.Join(names, "}, ${")+"} (a feeder's column as ${NAME.COLUMN}) or ${env.NAME}", "%v", err)
	}
}

// headerPlaceholders checks a header of a call without values that no
// flow sends after a capture: ${env.NAME} is its only placeholder.
func (v *validator) headerPlaceholders(path, value string) {
	_, err := Expand(value, func(name string) (string, bool) {
		env, ok := envName(name)
		return "", !ok || !identPattern.MatchString(env)
	})
	if err != nil {
		v.errorf(path, "${env.NAME}, the call's values, or in a flow a name an earlier step captures ($${ for a literal ${)", "%v", err)
	}
}

// envOnly checks a string where ${env.NAME} is the only placeholder.
func (v *validator) envOnly(path, value string) {
	_, err := Expand(value, func(name string) (string, bool) {
		env, ok := envName(name)
		return "", !ok || !identPattern.MatchString(env)
	})
	if err != nil {
		v.errorf(path, "${env.NAME}, the only placeholder here ($${ for a literal ${)", "%v", err)
	}
}

// placeholders checks the placeholders in every string of a value. Target
// settings may use only the target namespaces; call requests may also name
// case variables.
func (v *validator) placeholders(path string, val any, targetOnly bool) {
	switch x := val.(type) {
	case string:
		_, err := Expand(x, func(name string) (string, bool) {
			return "", targetOnly && !targetName(name) || !targetOnly && !validCaseVar(name)
		})
		if err != nil && !targetOnly {
			v.errorf(path, "a case variable ${NAME} (bound by compat cases) or ${env.NAME}", "%v", err)
			return
		}
		if err != nil {
			v.errorf(path, "${port.NAME}, ${env.NAME}, ${services.NAME.ENDPOINT}, ${tandem}, ${workdir} or ${studydir} (in a group target also ${node.index}, ${node.name}, ${node.role}, ${node.host}, ${group.port.NAME}, ${group.nodes.PORT}, ${group.others.PORT}, ${group.peers.PORT}, ${group.size})", "%v", err)
			return
		}
		for _, name := range Placeholders(x) {
			if svc, ep, ok := strings.Cut(strings.TrimPrefix(name, "services."), "."); ok && strings.HasPrefix(name, "services.") {
				v.serviceRef(path, svc, ep)
			}
		}
	case []any:
		for i, e := range x {
			v.placeholders(fmt.Sprintf("%s[%d]", path, i), e, targetOnly)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			v.placeholders(join(path, k), x[k], targetOnly)
		}
	}
}

var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// targetName reports whether a placeholder may appear in a target's settings.
func targetName(name string) bool {
	if ns, rest, ok := strings.Cut(name, "."); ok {
		if ns == "services" {
			svc, ep, ok := strings.Cut(rest, ".")
			return ok && namePattern.MatchString(svc) && namePattern.MatchString(ep)
		}
		if ns == "node" {
			return slices.Contains(nodeNames, rest)
		}
		if ns == "group" {
			if rest == "size" {
				return true
			}
			kind, port, ok := strings.Cut(rest, ".")
			return ok && slices.Contains(groupLists, kind) && identPattern.MatchString(port)
		}
		return (ns == "port" || ns == "env") && identPattern.MatchString(rest)
	}
	return name == "tandem" || name == "workdir" || name == "studydir"
}

// groupLists are the ${group.KIND.PORT} placeholders: the group's shared
// port, and every node's own port as a list (nodes, others, peers).
var groupLists = []string{"port", "nodes", "others", "peers"}

// nodeNames are the ${node.*} placeholders of a group target's nodes.
var nodeNames = []string{"index", "name", "role", "host"}

// groupOnly reports whether a placeholder names a group's node or ports.
func groupOnly(name string) bool {
	return strings.HasPrefix(name, "node.") || strings.HasPrefix(name, "group.")
}

// validCaseVar reports whether a placeholder may appear in a call's
// request: a case variable, or ${env.NAME} (the request is sent with it
// resolved; no other target placeholder is).
func validCaseVar(name string) bool {
	if env, ok := envName(name); ok {
		return identPattern.MatchString(env)
	}
	return identPattern.MatchString(name)
}
