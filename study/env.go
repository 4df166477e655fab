package study

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// setting is one string of a study that tandem expands, by its path.
type setting struct{ path, value string }

// envSettings lists the strings in which tandem resolves ${env.NAME} from
// its environment: target and service settings (endpoints, metrics,
// metrics_labels, data_dir, start, consumer, a group's setup), cost
// commands, calls (see ResolveEnv), oracle URLs and metrics.prometheus.
// Validation refuses ${env.NAME} in any other string, where it would be
// sent as written.
func (s *Study) envSettings() []setting {
	var out []setting
	add := func(path, value string) {
		if strings.Contains(value, "${") {
			out = append(out, setting{path, value})
		}
	}
	list := func(path string, values []string) {
		for i, a := range values {
			add(fmt.Sprintf("%s[%d]", path, i), a)
		}
	}
	lists := func(path string, argvs [][]string) {
		for i, argv := range argvs {
			list(fmt.Sprintf("%s[%d]", path, i), argv)
		}
	}
	mapping := func(path string, m map[string]string) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			add(path+"."+k, m[k])
		}
	}
	start := func(path string, st *Start) {
		if st == nil {
			return
		}
		list(path+".command", st.Command)
		lists(path+".init", st.Init)
		list(path+".wipe", st.Wipe)
		add(path+".dir", st.Dir)
		mapping(path+".env", st.Env)
	}
	for i, t := range s.Targets {
		path := fmt.Sprintf("targets[%d]", i)
		mapping(path+".endpoints", t.Endpoints)
		add(path+".metrics", t.Metrics)
		mapping(path+".metrics_labels", t.MetricsLabels)
		add(path+".data_dir", t.DataDir)
		start(path+".start", t.Start)
		if g := t.Group; g != nil {
			lists(path+".group.setup", g.Setup)
		}
		if c := t.Consumer; c != nil {
			list(path+".consumer.command", c.Command)
			lists(path+".consumer.build", c.Build)
			add(path+".consumer.dir", c.Dir)
			mapping(path+".consumer.env", c.Env)
		}
	}
	for i, sv := range s.Services {
		path := fmt.Sprintf("services[%d]", i)
		mapping(path+".endpoints", sv.Endpoints)
		start(path+".start", sv.Start)
	}
	for i, c := range s.Costs {
		list(fmt.Sprintf("costs[%d].command", i), c.Command)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Calls)) {
		c := s.Calls[name]
		if c == nil {
			continue
		}
		c.mapStrings(func(path, value string, _ part) (string, error) {
			add("calls."+name+"."+path, value)
			return value, nil
		})
	}
	if m := s.Metrics; m != nil {
		add("metrics.prometheus", m.Prometheus)
	}
	if c := s.Compat; c != nil {
		for _, name := range slices.Sorted(maps.Keys(c.Oracles)) {
			if o := c.Oracles[name]; o != nil {
				add("compat.oracles."+name+".url", o.URL)
			}
		}
	}
	return out
}

// MissingEnv reports every ${env.NAME} of the study that lookup does not
// find, one located error per setting and variable, in file order; give
// it os.LookupEnv to check the process's environment. It covers every
// string in which tandem resolves ${env.NAME} (target and service
// settings, cost commands, calls, oracle URLs, metrics.prometheus), so an
// unset variable fails before anything starts rather than mid-run. The
// error, if any, is an ErrorList. ReadEnv reports these errors together
// with the study's others.
func (s *Study) MissingEnv(lookup func(name string) (string, bool)) error {
	errs := s.missingEnv(lookup)
	if len(errs) == 0 {
		return nil
	}
	return capErrors(errs)
}

// missingEnv is MissingEnv's list, unsorted.
func (s *Study) missingEnv(lookup func(name string) (string, bool)) ErrorList {
	var errs ErrorList
	for _, st := range s.envSettings() {
		var missing []string
		for _, name := range Placeholders(st.value) {
			env, ok := strings.CutPrefix(name, "env.")
			if !ok || slices.Contains(missing, env) {
				continue
			}
			if _, set := lookup(env); !set {
				missing = append(missing, env)
			}
		}
		for _, env := range missing {
			pos, path := s.locate(st.path)
			errs = append(errs, &Error{File: s.File, Pos: pos, Path: path,
				Msg: fmt.Sprintf("environment variable %s is not set", env), Expected: "set it in tandem's environment"})
		}
	}
	return errs
}

// envPlaces says where a study may use ${env.NAME}, for errors.
const envPlaces = "${env.NAME} only where tandem resolves it: the settings of targets and services, costs commands, " +
	"calls (headers, metadata, method, path, params, body, request, send), compat oracle URLs and metrics.prometheus; elsewhere write the value"

// envElsewhere refuses ${env.NAME} in every string read (strs, by path)
// where tandem does not resolve it (resolved, by path): it would be sent
// or used as written.
func (v *validator) envElsewhere(strs map[string]string, resolved map[string]bool) {
	for _, p := range slices.Sorted(maps.Keys(strs)) {
		if resolved[p] || v.reported(p) {
			continue
		}
		for _, name := range Placeholders(strs[p]) {
			if env, ok := envName(name); ok {
				v.errorf(p, envPlaces, "${env.%s} is not resolved here", env)
				break
			}
		}
	}
}

// mapStrings returns a copy of the call with f applied to every string in
// which tandem resolves ${env.NAME} (see ResolveEnv), each by its path
// under the call (http.headers.Authorization, jsonrpc.params[0]) and the
// part of the call it is in (which decides the placeholders it may hold).
// The first error f returns ends it.
func (c *Call) mapStrings(f func(path, value string, p part) (string, error)) (*Call, error) {
	names, _ := c.requests()
	out, req := c.withRequestCopy()
	if req == nil {
		return out, nil
	}
	for _, fl := range append(req.fields(), req.settings()...) {
		path := names[0] + "." + fl.key
		one := func(p, v string) (string, error) { return f(p, v, fl.part) }
		var err error
		switch {
		case fl.text != nil:
			*fl.text, err = one(path, *fl.text)
		case fl.mapping != nil && *fl.mapping != nil:
			m := make(map[string]string, len(*fl.mapping))
			for _, k := range slices.Sorted(maps.Keys(*fl.mapping)) {
				if m[k], err = one(path+"."+k, (*fl.mapping)[k]); err != nil {
					break
				}
			}
			*fl.mapping = m
		case fl.value != nil && fl.value.IsSet():
			fl.value.V, err = mapValue(path, fl.value.V, one)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// mapValue is a copy of a request value with f applied to every string in
// it, each by its path (path.key, path[i]).
func mapValue(path string, v any, f func(path, s string) (string, error)) (any, error) {
	switch x := v.(type) {
	case string:
		return f(path, x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			var err error
			if out[i], err = mapValue(fmt.Sprintf("%s[%d]", path, i), e, f); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			var err error
			if out[k], err = mapValue(join(path, k), x[k], f); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}

// ResolveEnv returns a copy of the call with every ${env.NAME} resolved by
// lookup (give it os.LookupEnv) in every string where a study may use it:
// its headers or metadata, its method and path, and every string of its
// request (an HTTP body, JSON-RPC and WebSocket params, a gRPC request, a
// TCP send). There "$${" is a literal "${", and other placeholders are
// left as written; in a call with values, the parts that take them stay
// templates of the values (Compile): "$${" stays as it is and a "${" in a
// variable's value is written "$${", so that it is sent as it is. It also
// returns the values it resolved, for the caller to keep out of what it
// prints. An unset variable is an error that names where it is.
func (c *Call) ResolveEnv(lookup func(name string) (string, bool)) (*Call, []string, error) {
	var secrets []string
	out, err := c.mapStrings(func(path, value string, p part) (string, error) {
		var missing string
		template := c.HasValues() && p.takesValues()
		v, err := expand(value, func(name string) (string, bool) {
			env, ok := envName(name)
			if !ok {
				return "${" + name + "}", false
			}
			val, set := lookup(env)
			if !set && missing == "" {
				missing = env
			}
			if set && !slices.Contains(secrets, val) {
				secrets = append(secrets, val)
			}
			if template {
				return escape(val), false
			}
			return val, false
		}, template)
		switch {
		case err != nil:
			return "", fmt.Errorf("%s: %w", path, err)
		case missing != "":
			return "", fmt.Errorf("%s: environment variable %s is not set", path, missing)
		}
		return v, nil
	})
	return out, secrets, err
}

// Literal returns a copy of the call whose strings ResolveEnv leaves as
// they are: each "${" in them escaped. A call made from tandem load's
// flags is sent as written.
func (c *Call) Literal() *Call {
	out, _ := c.mapStrings(func(_, value string, _ part) (string, error) { return escape(value), nil })
	return out
}

// locate is where the value at path was read, or its nearest enclosing
// value, or 1:1 for a study not read from a file.
func (s *Study) locate(path string) (Pos, string) {
	for p := path; ; {
		if pos, ok := s.pos[p]; ok {
			return pos, p
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return Pos{1, 1}, path
		}
		p = p[:i]
	}
}
