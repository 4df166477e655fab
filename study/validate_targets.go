package study

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

func (v *validator) target(path string, t *Target) {
	if len(t.Endpoints) == 0 {
		v.errorf(path+".endpoints", "at least one endpoint", "no endpoints")
	}
	strs := map[string]string{path + ".metrics": t.Metrics, path + ".data_dir": t.DataDir}
	for k, e := range t.Endpoints {
		strs[path+".endpoints."+k] = e
	}
	if c := t.Consumer; c != nil {
		v.consumer(path, t, strs)
	}
	v.start(path, t.Start, strs)
	for _, p := range slices.Sorted(maps.Keys(strs)) {
		v.placeholders(p, strs[p], true)
		if t.Group == nil {
			if n := slices.IndexFunc(Placeholders(strs[p]), groupOnly); n >= 0 {
				v.errorf(p, "${node.*} and ${group.*} only in a group target", "${%s}", Placeholders(strs[p])[n])
			}
		}
	}
	v.targetReady(path, t)
	v.targetNetwork(path, t)
	if t.Group != nil {
		v.group(path, t)
	}
}

// group checks a group target: nodes by role, a start to make them from,
// setup commands without a node's placeholders.
func (v *validator) group(path string, t *Target) {
	g := t.Group
	p := path + ".group"
	if t.Start == nil {
		v.errorf(path+".start", "a start: each node of the group is started from it", "no start")
	}
	if t.Consumer != nil {
		v.errorf(p, "a group or a consumer, not both", "both")
	}
	roles := map[string]bool{}
	for i, r := range g.Nodes {
		rp := fmt.Sprintf("%s.nodes[%d]", p, i)
		if !rolePattern.MatchString(r.Role) || roles[r.Role] {
			v.errorf(rp+".role", "a unique name of lower-case letters and digits, ending in a letter (validator, full)", "role %q", r.Role)
		}
		roles[r.Role] = true
		if r.Count < 1 || r.Count > MaxGroupNodes {
			v.errorf(rp+".count", fmt.Sprintf("from 1 to %d", MaxGroupNodes), "count %d", r.Count)
		}
	}
	if g.Size() > MaxGroupNodes {
		v.errorf(p+".nodes", fmt.Sprintf("at most %d nodes", MaxGroupNodes), "more than %d nodes", MaxGroupNodes)
	}
	if g.Calls != "" && g.Calls != "first" && g.Calls != "round-robin" {
		v.errorf(p+".calls", "first or round-robin", "calls %q", g.Calls)
	}
	if g.Calls == "round-robin" {
		for i, sc := range v.s.Scenarios {
			if sc.Load.Engine == "loop" && (len(sc.Targets) == 0 || slices.Contains(sc.Targets, t.Name)) {
				v.errorf(p+".calls", "first with engine loop (round-robin spreads the workers engine's connections)",
					"round-robin, and scenarios[%d] runs on engine loop", i)
				break
			}
		}
	}
	strs := map[string]string{}
	v.argvs(p+".setup", "setup", g.Setup, strs)
	for _, k := range slices.Sorted(maps.Keys(strs)) {
		v.placeholders(k, strs[k], true)
		for _, name := range Placeholders(strs[k]) {
			if strings.HasPrefix(name, "node.") || strings.HasPrefix(name, "port.") {
				v.errorf(k, "${workdir}, ${group.port.NAME}, ${group.nodes.PORT}, ${group.size}, ${tandem}, ${studydir} or ${env.NAME}: setup runs once for the group", "${%s}", name)
			}
		}
	}
	if slices.ContainsFunc(Placeholders(t.DataDir), func(n string) bool { return strings.HasPrefix(n, "node.") || strings.HasPrefix(n, "port.") }) {
		v.errorf(path+".data_dir", "the group's data directory: ${workdir} or a path under it without ${node.*} or ${port.*}", "%q", t.DataDir)
	}
	if h := g.Height; h != nil {
		v.callRef(p+".height.call", h.Call)
		v.notAskedOnce(p+".height.call", h.Call, "a height probe")
	}
	v.groupLinks(p, t)
}

// rolePattern: a role does not end in a digit, so node names (the role
// and an index) never collide.
var rolePattern = regexp.MustCompile(`^[a-z]([a-z0-9]*[a-z])?$`)

// start checks a start section (of a target or a service) and collects its
// strings for the placeholder check.
func (v *validator) start(path string, st *Start, strs map[string]string) {
	if st == nil {
		return
	}
	if len(st.Command) == 0 {
		v.errorf(path+".start.command", "the program and its arguments", "empty command")
	}
	for i, a := range st.Command {
		strs[fmt.Sprintf("%s.start.command[%d]", path, i)] = a
	}
	v.argvs(path+".start.init", "init", st.Init, strs)
	for i, w := range st.Wipe {
		key := fmt.Sprintf("%s.start.wipe[%d]", path, i)
		strs[key] = w
		if strings.TrimSpace(w) == "" || w == "/" {
			v.errorf(key, "a data path", "refusing to wipe %q", w)
		} else if slices.Contains(strings.Split(w, "/"), "..") {
			v.errorf(key, "a path without .. components: through a link, .. leads out of ${workdir}", "refusing to wipe %q", w)
		} else if !WipeInWorkdir(w) {
			v.errorf(key, "a path under ${workdir}; name one outside it in wipe_outside", "%q is not under ${workdir}", w)
		}
	}
	for i, w := range st.WipeOutside {
		key := fmt.Sprintf("%s.start.wipe_outside[%d]", path, i)
		strs[key] = w
		if c := filepath.Clean(w); !filepath.IsAbs(w) || c == "/" || strings.Contains(w, "${") {
			v.errorf(key, "an absolute path without placeholders, not /", "refusing to wipe %q", w)
		}
	}
	for k, e := range st.Env {
		strs[path+".start.env."+k] = e
	}
	strs[path+".start.dir"] = st.Dir
	if _, err := ParseCPUList(st.CPUs); err != nil {
		v.errorf(path+".start.cpus", "a CPU list such as 1 or 0,2-3", "%v", err)
	}
}

// argvs checks a list of commands (what names them in errors) and
// collects their arguments for the placeholder check.
func (v *validator) argvs(path, what string, cmds [][]string, strs map[string]string) {
	for i, argv := range cmds {
		if len(argv) == 0 {
			v.errorf(fmt.Sprintf("%s[%d]", path, i), "the program and its arguments", "empty %s command", what)
		}
		for j, a := range argv {
			strs[fmt.Sprintf("%s[%d][%d]", path, i, j)] = a
		}
	}
}

// consumer checks a consumer target.
func (v *validator) consumer(path string, t *Target, strs map[string]string) {
	c := t.Consumer
	switch {
	case c.Raw && len(c.Command) > 0:
		v.errorf(path+".consumer", "raw: true or a command, not both", "both raw and command")
	case !c.Raw && len(c.Command) == 0:
		v.errorf(path+".consumer", "raw: true (tandem's loop) or a command", "neither raw nor command")
	}
	if t.Start != nil {
		v.errorf(path+".start", "no start: a consumer is started for every run (shared infrastructure goes in services)", "start given for a consumer")
	}
	if _, ok := t.Endpoints["amqp"]; !ok && len(t.Endpoints) > 0 {
		v.errorf(path+".endpoints", "an amqp endpoint: the broker the consumer drains", "no amqp endpoint")
	}
	for i, a := range c.Command {
		strs[fmt.Sprintf("%s.consumer.command[%d]", path, i)] = a
	}
	v.argvs(path+".consumer.build", "build", c.Build, strs)
	for k, e := range c.Env {
		strs[path+".consumer.env."+k] = e
	}
	strs[path+".consumer.dir"] = c.Dir
}

// service checks a service.
func (v *validator) service(path string, sv *Service) {
	strs := map[string]string{}
	switch {
	case sv.RabbitMQ != nil && sv.Start != nil:
		v.errorf(path, "rabbitmq or start, not both", "both rabbitmq and start")
	case sv.RabbitMQ == nil && sv.Start == nil:
		v.errorf(path, "rabbitmq (a private node) or start (any other service)", "neither rabbitmq nor start")
	case sv.RabbitMQ != nil && len(sv.Endpoints) > 0:
		v.errorf(path+".endpoints", "no endpoints: a rabbitmq service has amqp", "endpoints given for a rabbitmq service")
	case sv.Start != nil && len(sv.Endpoints) == 0:
		v.errorf(path+".endpoints", "at least one endpoint", "no endpoints")
	}
	if r := sv.RabbitMQ; r != nil && r.URLEnv != "" && !identPattern.MatchString(r.URLEnv) {
		v.errorf(path+".rabbitmq.url_env", "an environment variable's name", "bad name %q", r.URLEnv)
	}
	v.start(path, sv.Start, strs)
	for k, e := range sv.Endpoints {
		strs[path+".endpoints."+k] = e
	}
	for _, p := range slices.Sorted(maps.Keys(strs)) {
		if slices.ContainsFunc(Placeholders(strs[p]), func(n string) bool { return strings.HasPrefix(n, "services.") }) {
			v.errorf(p, "${port.NAME}, ${env.NAME}, ${tandem}, ${workdir} or ${studydir}", "a service cannot name another's endpoints")
			continue
		}
		v.placeholders(p, strs[p], true)
	}
	if sv.Ready.Log != "" {
		if _, err := regexp.Compile(sv.Ready.Log); err != nil {
			v.errorf(path+".ready.log", "a regular expression (Go syntax)", "%v", err)
		}
	}
}

// serviceRef checks a ${services.NAME.ENDPOINT} placeholder.
func (v *validator) serviceRef(path, name, endpoint string) {
	for _, sv := range v.s.Services {
		if sv.Name != name {
			continue
		}
		if _, ok := sv.Endpoints[endpoint]; ok || sv.RabbitMQ != nil && endpoint == "amqp" {
			return
		}
		v.errorf(path, "an endpoint of service "+name, "service %s has no endpoint %q", name, endpoint)
		return
	}
	var names []string
	for _, sv := range v.s.Services {
		names = append(names, sv.Name)
	}
	expected := "a service defined under services:"
	if len(names) > 0 {
		expected = "one of: " + strings.Join(names, ", ")
	}
	v.errorf(path, expected, "undefined service %q", name)
}

func (v *validator) targetReady(path string, t *Target) {
	if t.Ready.Log != "" {
		if _, err := regexp.Compile(t.Ready.Log); err != nil {
			v.errorf(path+".ready.log", "a regular expression (Go syntax)", "%v", err)
		} else if t.Start == nil {
			v.errorf(path+".ready.log", "a target that tandem starts", "a log line needs start: tandem reads the output of what it starts")
		}
	}
	if r := t.Ready.FirstAnswer; r != nil {
		if c := v.callRef(path+".ready.first_answer.call", r.Call); c != nil {
			v.endpoint(path+".ready.first_answer.call", t, r.Call, c)
			v.notAskedOnce(path+".ready.first_answer.call", r.Call, "a readiness check")
		}
	}
	if r := t.Ready.Condition; r != nil {
		if c := v.callRef(path+".ready.condition.call", r.Call); c != nil {
			v.endpoint(path+".ready.condition.call", t, r.Call, c)
			v.notAskedOnce(path+".ready.condition.call", r.Call, "a readiness check")
		}
		if err := checkFieldPath(r.Path); err != nil {
			v.errorf(path+".ready.condition.path", "a field path such as result.height or result.txs[0].height", "%v", err)
		}
		if n := r.predicates(); n != 1 {
			v.errorf(path+".ready.condition", "exactly one predicate: equals, >=, >, <=, < or matches", "%d given", n)
		}
		if r.Matches != "" {
			if _, err := regexp.Compile(r.Matches); err != nil {
				v.errorf(path+".ready.condition.matches", "a regular expression (Go syntax)", "%v", err)
			}
		}
	}
}

// WipeInWorkdir reports whether a wipe path stays under ${workdir} once
// its ".." are resolved: it must start with ${workdir}/ and never climb
// above it. (Symlinks are checked when the path is deleted.)
func WipeInWorkdir(w string) bool {
	const root = "/workdir"
	if w == "${workdir}" {
		return true
	}
	rest, ok := strings.CutPrefix(w, "${workdir}/")
	// a node's index, name and role are plain words: a path of its own
	for _, n := range []string{"${node.index}", "${node.name}", "${node.role}"} {
		rest = strings.ReplaceAll(rest, n, "n")
	}
	if !ok || strings.Contains(rest, "${") {
		return false
	}
	c := filepath.Clean(root + "/" + rest)
	return strings.HasPrefix(c, root+"/")
}
