package study

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/values"
)

// valueNamePattern is a value's name, as package values takes it.
var valueNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// reservedValueNames are the namespaces and names of target placeholders:
// a value named so would shadow them.
var reservedValueNames = []string{"env", "port", "group", "node", "services", "workdir", "tandem", "studydir"}

// HasValues reports whether the call has values: in the study (Values),
// or given in code (ValueSpecs).
func (c *Call) HasValues() bool { return len(c.Values) > 0 || len(c.ValueSpecs) > 0 }

// isValue reports whether a placeholder names one of the call's values:
// ${NAME} or a feeder's ${NAME.COLUMN}.
func (c *Call) isValue(placeholder string) bool {
	name, _, _ := strings.Cut(placeholder, ".")
	_, inStudy := c.Values[name]
	_, inCode := c.ValueSpecs[name]
	return inStudy || inCode
}

// callValues checks a call's values: each a source values.ParseSpec reads,
// under a name that is not a target placeholder's, on a call whose request
// has parts to put them in. It sets the call's ValueSpecs, each feeder's
// path resolved against the study file's directory.
func (v *validator) callValues(path string, c *Call) {
	if len(c.Values) == 0 {
		return
	}
	if req := c.request(); req != nil && !slices.ContainsFunc(append(req.fields(), req.settings()...), func(f requestField) bool { return f.part.takesValues() }) {
		v.errorf(path+".values", "values on an http, jsonrpc, grpc, ws or tcp call (their requests have parts to put them in)",
			"%s calls have no request parts for values", c.Protocol())
		return
	}
	c.ValueSpecs = v.valueSpecs(path+".values", c.Values, filepath.Dir(v.file))
}

// valueSpecs parses the sources of a values map at path, each under a
// name that is not a target placeholder's; a feeder's relative path is
// resolved against dir.
func (v *validator) valueSpecs(path string, vals map[string]Value, dir string) map[string]values.Spec {
	specs := map[string]values.Spec{}
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		p := path + "." + name
		switch {
		case slices.Contains(reservedValueNames, name):
			v.errorf(p, "a name that is not a target placeholder's ("+strings.Join(reservedValueNames, ", ")+")", "value name %q is reserved", name)
			continue
		case !valueNamePattern.MatchString(name):
			v.errorf(p, "letters, digits, '_' and '-', starting with a letter or '_'", "bad value name %q", name)
			continue
		}
		spec, err := values.ParseSpec(vals[name].V)
		if err != nil {
			v.errorf(p, "a source: seq, uniform, float, choice, zipf, bytes, hex, time, or a csv or jsonl feeder (docs/values.md)", "%v", err)
			continue
		}
		if f, ok := spec.(values.File); ok && !filepath.IsAbs(f.Path) {
			f.Path = filepath.Join(dir, f.Path)
			spec = f
		}
		specs[name] = spec
	}
	return specs
}

// valuesFile is a file of values alone (tandem load --values).
type valuesFile struct {
	Values map[string]Value `yaml:"values,required" doc:"Per-request values by name, as a call's values: are."`
}

// ReadValues reads a file of values, as tandem load --values takes it: a
// YAML mapping whose one key, values, maps names to sources as a call's
// values: does in a study. A feeder's relative path is resolved against
// dir. Every error is at its file:line:col (an ErrorList); the feeders
// are not opened.
func ReadValues(path, dir string) (map[string]values.Spec, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	var vf valuesFile
	yf := parseYAML(path, data, &vf)
	if !yf.decoded || len(yf.errs) > 0 {
		return nil, capErrors(yf.errs)
	}
	v := &validator{file: path, pos: yf.pos, bad: map[string]bool{}}
	specs := v.valueSpecs("values", vf.Values, dir)
	v.envElsewhere(yf.strs, nil) // nothing in a values file is resolved
	if len(v.errs) > 0 {
		return nil, capErrors(v.errs)
	}
	if len(specs) == 0 {
		return nil, ErrorList{{File: path, Pos: yf.pos["values"], Path: "values", Msg: "no values", Expected: "at least one name: source"}}
	}
	return specs, nil
}

// OnceFeeders lists the call's feeders read in order once, by name: a
// run of the call ends when the first of them runs out of rows.
func (c *Call) OnceFeeders() []string {
	var names []string
	for _, name := range slices.Sorted(maps.Keys(c.ValueSpecs)) {
		if f, ok := c.ValueSpecs[name].(values.File); ok && f.Order == values.Once {
			names = append(names, name)
		}
	}
	return names
}

// OnceRows is how many requests a run of the call may send, as its
// feeders read once had rows when the study was read (the run counts them
// again when it opens them); ok is false when no feeder limits it.
func (c *Call) OnceRows() (n uint64, ok bool) { return c.onceRows, c.onceRows > 0 }

// onceFeedersOf is OnceFeeders of a call that may be nil.
func (c *Call) onceFeedersOf() []string {
	if c == nil {
		return nil
	}
	return c.OnceFeeders()
}

// notAskedOnce refuses a call with values where it is sent on its own
// (a readiness check, a height probe, a compat case): values number the
// requests of a scenario's load.
func (v *validator) notAskedOnce(path, name, what string) {
	c := v.s.Calls[name]
	switch {
	case c == nil:
	case len(c.Values) > 0:
		v.errorf(path, "a call without values: "+what+" sends one request, and values number the requests of a scenario's load",
			"call %s has values", name)
	case len(c.headerVars()) > 0:
		v.errorf(path, "a call whose headers name ${env.NAME} only: "+what+" sends one request, and a flow's capture has a value only in the flow",
			"call %s's headers use ${%s}", name, c.headerVars()[0])
	}
}

// openValues opens every call's values once the study is otherwise valid
// (feeder files read and checked), and compiles each string of the call
// that names them, so that a feeder's bad row, a column that is not there
// or a source a header cannot carry is an error now, where the string is.
func openValues(s *Study, file string, pos map[string]Pos) ErrorList {
	v := &validator{s: s, file: file, pos: pos, bad: map[string]bool{}}
	captured := flowCaptures(s)
	for _, name := range slices.Sorted(maps.Keys(s.Calls)) {
		c := s.Calls[name]
		if c == nil {
			continue
		}
		// what a flow captures before the call is a slot of its values
		withSlots := c.withSlots(captured[name])
		if len(withSlots.ValueSpecs) == 0 {
			continue
		}
		path := "calls." + name
		set, err := values.Open(context.Background(), s.Seed, withSlots.ValueSpecs)
		if err != nil {
			v.feederErrors(path, c.ValueSpecs)
			continue
		}
		v.compileStrings(path, withSlots, set)
		c.onceRows, _ = set.Limit()
		set.Close()
	}
	return v.errs
}

// feederErrors reports each feeder of specs that does not open, at its
// value: its own file's error (file:line: what) is the message. Only a
// feeder can fail to open once its spec has parsed.
func (v *validator) feederErrors(path string, specs map[string]values.Spec) {
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		one, err := values.Open(context.Background(), 0, map[string]values.Spec{name: specs[name]})
		if err != nil {
			v.errorf(path+".values."+name, "a readable feeder file whose every row is whole (docs/values.md)", "%v", err)
			continue
		}
		one.Close()
	}
}

// compileStrings compiles every string of the call that takes values, in
// its context, reporting an error at the string; then the call's whole
// request, whose errors would be the JSON's own. Each ${env.NAME} stands
// for an empty value there.
func (v *validator) compileStrings(path string, c *Call, set *values.Set) {
	before := len(v.errs)
	c, _, err := c.ResolveEnv(func(string) (string, bool) { return "", true })
	if err != nil {
		v.errorf(path, "a request its values can be spliced into", "%v", err)
		return
	}
	c.mapStrings(func(p, value string, pt part) (string, error) {
		if !pt.takesValues() || !strings.Contains(value, "${") {
			return value, nil
		}
		ctx := values.Text
		switch pt {
		case partHeader:
			ctx = values.Header
		case partPath:
			ctx = values.URL
		}
		if _, err := set.Compile(value, ctx); err != nil {
			v.errorf(path+"."+p, "the call's values: "+strings.Join(set.Names(), ", "), "%v", err)
		}
		return value, nil
	})
	if len(v.errs) > before {
		return
	}
	if _, err := c.Compile(set); err != nil {
		v.errorf(path, "a request its values can be spliced into", "%v", err)
	}
}

// Templates are a call's request parts compiled against a set of its
// values (Call.Compile); a part the call does not have is nil.
type Templates struct {
	// Path is an HTTP call's path and query (URL context: each value
	// percent-encoded).
	Path *values.Template
	// Headers are the HTTP or JSON-RPC headers, or the gRPC metadata, by
	// name (header context).
	Headers map[string]*values.Template
	// Body is an HTTP body (a string as text, anything else as JSON), the
	// params of a JSON-RPC or WebSocket call, a gRPC request (JSON) or a
	// TCP send (text).
	Body *values.Template
}

// Compile compiles the call's request parts that take values into
// templates of set (opened from its ValueSpecs). Every such part is a
// template, those without a placeholder too (Static): "$${" in them is a
// literal "${". Give it the call ResolveEnv returns.
func (c *Call) Compile(set *values.Set) (*Templates, error) {
	names, _ := c.requests()
	req := c.request()
	if req == nil {
		return nil, errors.New("a call with no request")
	}
	t := &Templates{}
	for _, fl := range append(req.fields(), req.settings()...) {
		path := names[0] + "." + fl.key
		var err error
		switch {
		case !fl.part.takesValues():
		case fl.mapping != nil:
			for _, k := range slices.Sorted(maps.Keys(*fl.mapping)) {
				tm, err := set.Compile((*fl.mapping)[k], values.Header)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", path, k, err)
				}
				if t.Headers == nil {
					t.Headers = map[string]*values.Template{}
				}
				t.Headers[k] = tm
			}
		case fl.part == partPath:
			t.Path, err = set.Compile(*fl.text, values.URL)
		case fl.text != nil:
			t.Body, err = set.Compile(*fl.text, values.Text)
		case fl.value != nil && fl.value.IsSet():
			if s, ok := fl.value.V.(string); ok && fl.stringText {
				t.Body, err = set.Compile(s, values.Text)
			} else {
				t.Body, err = set.CompileJSON(fl.value.V)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return t, nil
}
