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
// metrics_labels, data_dir, start, consumer), cost commands, HTTP and
// JSON-RPC headers and oracle URLs.
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
		if c.HTTP != nil {
			mapping("calls."+name+".http.headers", c.HTTP.Headers)
		}
		if c.JSONRPC != nil {
			mapping("calls."+name+".jsonrpc.headers", c.JSONRPC.Headers)
		}
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
// settings, cost commands, HTTP and JSON-RPC headers, oracle URLs), so an
// unset variable fails before anything starts rather than mid-run. The
// error, if any, is an ErrorList.
func (s *Study) MissingEnv(lookup func(name string) (string, bool)) error {
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
	if len(errs) == 0 {
		return nil
	}
	return capErrors(errs)
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
