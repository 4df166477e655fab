package study

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// Compat modes and oracle rules.
const (
	ModeEqual  = "equal"
	ModeReport = "report"

	RuleEqual    = "equal"
	RuleReversed = "reversed"
	RuleSet      = "set"

	// NoiseAgain asks the reference twice to find its noisy fields.
	NoiseAgain = "again"
)

// Under returns the targets under test: compat.targets, or every target
// that is neither an oracle nor the noise instance.
func (c *Compat) Under(s *Study) []string {
	if len(c.Targets) > 0 {
		return c.Targets
	}
	var out []string
	for _, t := range s.Targets {
		if t.Name != c.Noise && !c.isOracleTarget(t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

func (c *Compat) isOracleTarget(name string) bool {
	for _, o := range c.Oracles {
		if o != nil && o.Target == name {
			return true
		}
	}
	return false
}

func (v *validator) compat(c *Compat) {
	if c.Reference != "" {
		v.targetRef("compat.reference", c.Reference)
	}
	for i, name := range c.Targets {
		v.targetRef(fmt.Sprintf("compat.targets[%d]", i), name)
	}
	if c.Noise != "" && c.Noise != NoiseAgain {
		if v.s.Target(c.Noise) == nil {
			v.errorf("compat.noise", "again, or the name of a second instance of the reference: one of "+strings.Join(v.targetNames(), ", "),
				"undefined target %q", c.Noise)
		} else if c.Noise == c.Reference || c.Noise == v.s.Baseline && c.Reference == "" {
			v.errorf("compat.noise", "a second instance, not the reference itself", "noise names the reference %q", c.Noise)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Oracles)) {
		path := "compat.oracles." + name
		o := c.Oracles[name]
		if o == nil || (o.Target == "") == (o.URL == "") {
			v.errorf(path, "exactly one of target or url", "oracle %s needs a target or a url", name)
			continue
		}
		if o.Target != "" {
			v.targetRef(path+".target", o.Target)
		}
		if o.URL != "" {
			if !strings.HasPrefix(o.URL, "http://") && !strings.HasPrefix(o.URL, "https://") && !strings.HasPrefix(o.URL, "${env.") {
				v.errorf(path+".url", "an http:// or https:// URL", "url %q", o.URL)
			}
			v.placeholders(path+".url", o.URL, true)
		}
	}
	v.caseOrder("compat.order", c.Order)
	list := caseList{all: c.Cases, first: len(c.Cases)}
	for i := range c.Cases {
		v.compatCase(list.path(i), i, &c.Cases[i])
		v.captures(list, i)
	}
	for i := range c.Recordings {
		v.recording(fmt.Sprintf("compat.recordings[%d]", i), &c.Recordings[i])
	}
}

func (v *validator) compatCase(path string, index int, cs *Case) {
	v.callRef(path+".call", cs.Call)
	v.notAskedOnce(path+".call", cs.Call, "a compat case (its variables are vary's)")
	if cs.Mode != "" && cs.Mode != ModeEqual && cs.Mode != ModeReport {
		v.errorf(path+".mode", "equal or report", "unknown mode %q", cs.Mode)
	}
	v.caseOrder(path+".order", cs.Order)
	for _, name := range slices.Sorted(maps.Keys(cs.Vary)) {
		if !identPattern.MatchString(name) {
			v.errorf(path+".vary."+name, "a name of letters, digits and _", "bad variable name %q", name)
		}
		if _, err := Values(cs.Vary[name], VarSeed(v.s.Seed, index, name)); err != nil {
			v.errorf(path+".vary."+name, "a list of values, or one of sample, boundaries, invalid, duplicates", "%v", err)
		}
	}
	if _, err := cs.Expand(v.s.Seed, index); err != nil && strings.Contains(err.Error(), "combinations") {
		v.errorf(path+".vary", fmt.Sprintf("at most %d combinations", MaxCases), "%v", err)
	}
	for i, p := range cs.Ignore {
		if err := checkFieldPath(p); err != nil {
			v.errorf(fmt.Sprintf("%s.ignore[%d]", path, i), "a field path such as txs[*].time", "%v", err)
		}
	}
	if o := cs.Oracle; o != nil {
		if _, ok := v.s.Compat.Oracles[o.Name]; !ok && o.Name != "" {
			v.errorf(path+".oracle.name", "one of: "+strings.Join(slices.Sorted(maps.Keys(v.s.Compat.Oracles)), ", "), "undefined oracle %q", o.Name)
		}
		v.callRef(path+".oracle.call", o.Call)
		v.notAskedOnce(path+".oracle.call", o.Call, "an oracle's question")
		for i, ch := range o.Checks {
			cp := fmt.Sprintf("%s.oracle.checks[%d]", path, i)
			for key, p := range map[string]string{"path": ch.Path, "oracle": ch.Oracle} {
				if err := checkFieldPath(p); err != nil && p != "" {
					v.errorf(cp+"."+key, "a field path such as txs[*].txid", "%v", err)
				}
			}
			if ch.Rule != "" && ch.Rule != RuleEqual && ch.Rule != RuleReversed && ch.Rule != RuleSet {
				v.errorf(cp+".rule", "equal, reversed or set", "unknown rule %q", ch.Rule)
			}
			if ch.Same.IsSet() && !listOfLists(ch.Same.V) {
				v.errorf(cp+".same", "a list of lists of values, e.g. [[0, null]]", "same is not a list of lists")
			}
		}
	}
}

func listOfLists(v any) bool {
	l, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range l {
		if _, ok := e.([]any); !ok {
			return false
		}
	}
	return true
}

// FieldPath splits a field path into its segments: keys joined by dots,
// [N] or [*] indexes, * for any key. "txs[*].outputs[0].address" is txs,
// [*], outputs, [0], address. The empty path is the whole answer.
func FieldPath(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	var segs []string
	for _, part := range strings.Split(p, ".") {
		key, rest, indexed := strings.Cut(part, "[")
		if key == "" && !indexed {
			return nil, fmt.Errorf("path %q has an empty key", p)
		}
		if key != "" {
			segs = append(segs, key)
		}
		if !indexed {
			continue
		}
		for _, idx := range strings.Split(rest, "[") {
			n, ok := strings.CutSuffix(idx, "]")
			if !ok || n == "" || strings.Trim(n, "0123456789") != "" && n != "*" {
				return nil, fmt.Errorf("path %q: bad index [%s", p, idx)
			}
			segs = append(segs, "["+n+"]")
		}
	}
	return segs, nil
}

func checkFieldPath(p string) error {
	_, err := FieldPath(p)
	return err
}

// caseFile is a file of further compat cases.
type caseFile struct {
	Cases []Case `yaml:"cases,required" doc:"The cases."`
}

// includeCases reads compat.file (relative to the study file) and appends
// its cases, each checked like the study's own and reported at its own
// file:line:col.
func includeCases(s *Study, studyFile string, studyPos map[string]Pos) ErrorList {
	path := s.Compat.File
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(studyFile), path)
	}
	data, err := readFile(path)
	var tooLarge ErrorList
	if errors.As(err, &tooLarge) {
		return tooLarge
	}
	if err != nil {
		return ErrorList{{File: studyFile, Pos: Pos{1, 1}, Path: "compat.file", Msg: err.Error(), Expected: "a readable YAML file of cases"}}
	}
	var cf caseFile
	yf := parseYAML(path, data, &cf)
	if !yf.decoded || len(yf.errs) > 0 {
		return yf.errs
	}
	v := &validator{s: s, file: path, pos: yf.pos, bad: map[string]bool{}}
	first := len(s.Compat.Cases)
	list := caseList{all: append(slices.Clone(s.Compat.Cases), cf.Cases...), first: first, inFile: true, file: s.Compat.File}
	for i := range cf.Cases {
		v.compatCase(list.path(first+i), first+i, &cf.Cases[i])
		v.captures(list, first+i)
	}
	v.envElsewhere(yf.strs, nil) // nothing in a case file is resolved
	// the study's own cases again, now that the file's captures are known:
	// one that uses a capture only the file makes uses it before it is made
	sv := &validator{s: s, file: studyFile, pos: studyPos, bad: map[string]bool{}}
	for i := range first {
		sv.capturesLater(caseList{all: list.all, first: first, file: s.Compat.File}, i)
	}
	if errs := append(sv.errs, v.errs...); len(errs) > 0 {
		return errs
	}
	s.Compat.Cases = append(s.Compat.Cases, cf.Cases...)
	return nil
}

// CaseOrder is the order case i runs in: listed when it makes or uses a
// capture, else the case's own order, else compat.order, else parallel.
func (c *Compat) CaseOrder(s *Study, i int) CaseOrder {
	cs := &c.Cases[i]
	switch {
	case len(cs.Capture) > 0 || len(c.CapturesUsed(i, s.Calls[cs.Call])) > 0:
		return OrderListed
	case cs.Oracle != nil && len(c.CapturesUsed(i, s.Calls[cs.Oracle.Call])) > 0:
		return OrderListed
	case cs.Order != "":
		return cs.Order
	case c.Order != "":
		return c.Order
	}
	return OrderParallel
}

// CapturesUsed lists the captures call binds in case i: the case
// variables of its request that the case's vary does not give and a case
// before it captures, in order of first use.
func (c *Compat) CapturesUsed(i int, call *Call) []string {
	return capturesUsed(c.Cases, i, call)
}

// CapturedBy is the index of the case whose capture NAME case i binds:
// the last one before it that captures NAME, or -1.
func (c *Compat) CapturedBy(i int, name string) int {
	return capturedBefore(c.Cases, i, name)
}

func capturesUsed(cases []Case, i int, call *Call) []string {
	if call == nil {
		return nil
	}
	var out []string
	for _, name := range call.CaseVars() {
		if _, varied := cases[i].Vary[name]; !varied && capturedBefore(cases, i, name) >= 0 {
			out = append(out, name)
		}
	}
	return out
}

func capturedBefore(cases []Case, i int, name string) int {
	for j := i - 1; j >= 0; j-- {
		if _, ok := cases[j].Capture[name]; ok {
			return j
		}
	}
	return -1
}

// caseList is the cases a validator sees: all of them, the study file's
// and then compat.file's (from first on); inFile is set when the
// validator reads compat.file.
type caseList struct {
	all    []Case
	first  int
	inFile bool
	file   string
}

// path names case j: as compat.cases[j] in the study file, as cases[k] in
// compat.file (and, seen from the study file, "of" that file).
func (l caseList) path(j int) string {
	switch {
	case j < l.first:
		return fmt.Sprintf("compat.cases[%d]", j)
	case l.inFile:
		return fmt.Sprintf("cases[%d]", j-l.first)
	}
	return fmt.Sprintf("cases[%d] of %s", j-l.first, l.file)
}

func (v *validator) caseOrder(path string, o CaseOrder) {
	if o != "" && o != OrderListed && o != OrderParallel {
		v.errorf(path, "listed or parallel", "unknown order %q", o)
	}
}

// captures checks case i's captures and its uses of captures: names and
// field paths, no vary named as an earlier case's capture, no use of a
// capture made by this case or a later one, no order parallel on a case
// that makes or uses one.
func (v *validator) captures(l caseList, i int) {
	cs := &l.all[i]
	path := l.path(i)
	for _, name := range slices.Sorted(maps.Keys(cs.Capture)) {
		if !identPattern.MatchString(name) || targetName(name) {
			v.errorf(path+".capture."+name, "a name of letters, digits and _, other than tandem, workdir and studydir", "bad capture name %q", name)
		}
		if err := checkFieldPath(cs.Capture[name]); err != nil {
			v.errorf(path+".capture."+name, `a field path such as items[0].id, or "" for the whole answer`, "%v", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cs.Vary)) {
		if j := capturedBefore(l.all, i, name); j >= 0 {
			v.errorf(path+".vary."+name, "a name that no earlier case captures", "vary %s has the name of the capture %s makes", name, l.path(j))
		}
	}
	v.capturesLater(l, i)
	uses := len(capturesUsed(l.all, i, v.s.Calls[cs.Call]))
	if cs.Oracle != nil {
		uses += len(capturesUsed(l.all, i, v.s.Calls[cs.Oracle.Call]))
	}
	if cs.Order == OrderParallel && (len(cs.Capture) > 0 || uses > 0) {
		v.errorf(path+".order", "listed, or no order: a case that makes or uses a capture runs in order",
			"order parallel on a case that makes or uses a capture")
	}
}

// capturesLater reports the case variables of case i's call and oracle
// call that no earlier case captures but this case or a later one does:
// used before they are made.
func (v *validator) capturesLater(l caseList, i int) {
	cs := &l.all[i]
	path := l.path(i)
	check := func(key, callName string) {
		call := v.s.Calls[callName]
		if call == nil {
			return
		}
		for _, name := range call.CaseVars() {
			if _, varied := cs.Vary[name]; varied || capturedBefore(l.all, i, name) >= 0 {
				continue
			}
			for j := i; j < len(l.all); j++ {
				if _, ok := l.all[j].Capture[name]; !ok {
					continue
				}
				maker := l.path(j)
				if j == i {
					maker = "this case itself"
				}
				v.errorf(path+"."+key, "a capture made by an earlier case, or a vary of this case",
					"call %s uses ${%s}, captured by %s, after it is sent", callName, name, maker)
				break
			}
		}
	}
	check("call", cs.Call)
	if cs.Oracle != nil {
		check("oracle.call", cs.Oracle.Call)
	}
}

// CompatCases is how many cases the study's compat block sends: each
// listed case's expansions and each recorded exchange (0 without a compat
// block). The study must be valid.
func (s *Study) CompatCases() int {
	c := s.Compat
	if c == nil {
		return 0
	}
	n := 0
	for i := range c.Cases {
		vars, _ := c.Cases[i].Expand(s.Seed, i) // validated already
		n += len(vars)
	}
	for _, rec := range c.Recordings {
		n += rec.Exchanges // each exchange is a case
	}
	return n
}
