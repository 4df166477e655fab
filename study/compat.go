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
	for i := range c.Cases {
		v.compatCase(fmt.Sprintf("compat.cases[%d]", i), i, &c.Cases[i])
	}
	for i := range c.Recordings {
		v.recording(fmt.Sprintf("compat.recordings[%d]", i), &c.Recordings[i])
	}
}

func (v *validator) compatCase(path string, index int, cs *Case) {
	v.callRef(path+".call", cs.Call)
	if cs.Mode != "" && cs.Mode != ModeEqual && cs.Mode != ModeReport {
		v.errorf(path+".mode", "equal or report", "unknown mode %q", cs.Mode)
	}
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
func includeCases(s *Study, studyFile string) ErrorList {
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
	for i := range cf.Cases {
		v.compatCase(fmt.Sprintf("cases[%d]", i), first+i, &cf.Cases[i])
	}
	v.envElsewhere(yf.strs, nil) // nothing in a case file is resolved
	if len(v.errs) > 0 {
		return v.errs
	}
	s.Compat.Cases = append(s.Compat.Cases, cf.Cases...)
	return nil
}
