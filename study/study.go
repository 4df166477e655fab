// Package study reads and validates study files: YAML that names the
// targets under test, the calls they serve and the experiments to run.
// Validation is strict and complete: every unknown key, wrong type, missing
// field and dangling reference is reported at once, each with its
// file:line:col and what was expected.
package study

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/stats"
)

// Protocol keys of a call.
const (
	ProtoHTTP     = "http"
	ProtoJSONRPC  = "jsonrpc"
	ProtoGRPC     = "grpc"
	ProtoWS       = "ws"
	ProtoAMQP     = "amqp"
	ProtoCometBFT = "cometbft"
)

// Defaults applied where a study is silent.
const (
	DefaultRounds       = 3
	DefaultWarmup       = time.Second
	DefaultMinDuration  = 5 * time.Second
	DefaultTimeout      = 10 * time.Second
	DefaultReadyTimeout = 120 * time.Second
)

// Policy is the verdict policy the defaults set (their percentages as
// fractions).
func (d Defaults) Policy() stats.Policy {
	p := stats.DefaultPolicy()
	p.NoiseFloor = d.NoiseFloor / 100
	p.MaxErrorShareDiff = d.MaxErrorShareDiff / 100
	p.MaxShortfall = d.MaxShortfall / 100
	p.ClientBoundUse = d.ClientBound / 100
	return p
}

// Read reads and validates the study file at path; a file over 8 MiB is
// refused unread. Load bounds are checked against this machine (see Parse).
func Read(path string) (*Study, error) {
	return read(path, machineLimits())
}

func read(path string, lim limits) (*Study, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return parse(path, data, lim)
}

// Parse validates a study file's bytes; file names it in errors. The error,
// if any, is an ErrorList of at most 100 errors (and one that says there
// are more). Connection counts are held against this machine's open-file
// limit.
func Parse(file string, data []byte) (*Study, error) {
	return parse(file, data, machineLimits())
}

func parse(file string, data []byte, lim limits) (*Study, error) {
	s := &Study{}
	pos, errs, decoded := parseYAML(file, data, s)
	if decoded {
		// Semantic checks run even after structural errors, so that one
		// pass reports everything; they skip values that failed to decode.
		v := &validator{s: s, file: file, pos: pos, bad: map[string]bool{}, lim: lim}
		for _, e := range errs {
			if !strings.HasPrefix(e.Msg, "missing required key") && !fileLevel(e) {
				v.bad[e.Path] = true
			}
		}
		v.check()
		errs = append(errs, v.errs...)
		if c := s.Compat; c != nil && c.File != "" && len(errs) == 0 {
			errs = append(errs, includeCases(s, file)...)
		}
	}
	if len(errs) > 0 {
		return nil, capErrors(errs)
	}
	sum := sha256.Sum256(data)
	s.File, s.SHA256, s.pos = file, hex.EncodeToString(sum[:]), pos
	s.setDefaults()
	return s, nil
}

func (s *Study) setDefaults() {
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.Baseline == "" {
		s.Baseline = s.Targets[0].Name
	}
	d := &s.Defaults
	if d.Rounds == 0 {
		d.Rounds = DefaultRounds
	}
	if d.Warmup == 0 {
		d.Warmup = DefaultWarmup
	}
	if d.MinDuration == 0 {
		d.MinDuration = DefaultMinDuration
	}
	if d.Timeout == 0 {
		d.Timeout = DefaultTimeout
	}
	if d.Order == "" {
		d.Order = "alternate"
	}
	// the verdict policy's thresholds: 0 is a setting (strict), so only
	// an absent key takes the default
	def := stats.DefaultPolicy()
	for _, f := range []struct {
		key string
		v   *float64
		def float64
	}{{"noise_floor", &d.NoiseFloor, def.NoiseFloor}, {"max_error_share_diff", &d.MaxErrorShareDiff, def.MaxErrorShareDiff},
		{"max_rate_shortfall", &d.MaxShortfall, def.MaxShortfall}, {"client_bound", &d.ClientBound, def.ClientBoundUse}} {
		if _, set := s.pos["defaults."+f.key]; !set && *f.v == 0 {
			*f.v = 100 * f.def
		}
	}
	for i := range s.Targets {
		if s.Targets[i].Ready.Timeout == 0 {
			s.Targets[i].Ready.Timeout = DefaultReadyTimeout
		}
	}
	for i := range s.Services {
		if s.Services[i].Ready.Timeout == 0 {
			s.Services[i].Ready.Timeout = DefaultReadyTimeout
		}
	}
	for i := range s.Scenarios {
		sc := &s.Scenarios[i]
		if sc.Rounds == 0 {
			sc.Rounds = d.Rounds
		}
		if len(sc.Targets) == 0 {
			for _, t := range s.Targets {
				sc.Targets = append(sc.Targets, t.Name)
			}
		}
		if sc.Metric == "" {
			sc.Metric = "latency"
			if s.Kind(sc) == KindDrain {
				sc.Metric = "throughput"
			}
		}
		if sc.Load.Model() != KindClosed && sc.Load.Connections == 0 {
			sc.Load.Connections = 1
		}
		if b := sc.Load.Batch; b != nil && b.Period == 0 {
			b.Period = time.Second
		}
		if sc.Sweep != nil {
			sc.Sweep.setDefaults()
		}
	}
	if s.Compat != nil && s.Compat.Reference == "" {
		s.Compat.Reference = s.Baseline
	}
}

// Target returns the target with the given name, or nil.
func (s *Study) Target(name string) *Target {
	for i := range s.Targets {
		if s.Targets[i].Name == name {
			return &s.Targets[i]
		}
	}
	return nil
}

// Protocol returns the call's protocol key, or "" if none is set.
func (c *Call) Protocol() string {
	ps := c.protocols()
	if len(ps) != 1 {
		return ""
	}
	return ps[0]
}

func (c *Call) protocols() []string {
	names, _ := c.requests()
	return names
}

// EndpointName is the name of the target endpoint the call goes to: the
// call's endpoint, else the one named after its protocol (jsonrpc falls back
// to http), else the target's only endpoint.
func (c *Call) EndpointName(t *Target) (string, error) {
	if c.Endpoint != "" {
		if _, ok := t.Endpoints[c.Endpoint]; !ok {
			return "", fmt.Errorf("target %q has no endpoint %q", t.Name, c.Endpoint)
		}
		return c.Endpoint, nil
	}
	p := c.Protocol()
	if req := c.request(); req != nil {
		for _, name := range req.endpoints() {
			if _, ok := t.Endpoints[name]; ok {
				return name, nil
			}
		}
	}
	if len(t.Endpoints) == 1 {
		for name := range t.Endpoints {
			return name, nil
		}
	}
	return "", fmt.Errorf("target %q has no endpoint named %q and more than one endpoint: set the call's endpoint", t.Name, p)
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

type validator struct {
	s    *Study
	file string
	pos  map[string]Pos
	// bad holds the paths that failed to decode: checks of them or of what
	// encloses them would only repeat the error.
	bad  map[string]bool
	errs ErrorList
	// caseVars caches each call's case variables (a walk of its request).
	caseVars map[string][]string
	// lim is the machine the load bounds are checked against.
	lim limits
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
	for _, f := range []struct {
		key string
		v   float64
	}{{"noise_floor", s.Defaults.NoiseFloor}, {"max_error_share_diff", s.Defaults.MaxErrorShareDiff},
		{"max_rate_shortfall", s.Defaults.MaxShortfall}} {
		if f.v < 0 || f.v >= 100 || math.IsNaN(f.v) {
			v.errorf("defaults."+f.key, "a percentage from 0 to 100", "%s %v", strings.ReplaceAll(f.key, "_", " "), f.v)
		}
	}
	if _, set := v.pos["defaults.client_bound"]; set {
		if c := s.Defaults.ClientBound; c <= 0 || c > 100 || math.IsNaN(c) {
			v.errorf("defaults.client_bound", "a percentage above 0, at most 100", "client bound %v", c)
		}
	}
	for _, name := range sortedKeys(s.Calls) {
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
	if m := s.Metrics; m != nil && m.Prometheus != "" && !strings.HasPrefix(m.Prometheus, "http://") && !strings.HasPrefix(m.Prometheus, "https://") {
		v.errorf("metrics.prometheus", "a Prometheus server's http:// or https:// URL", "url %q", m.Prometheus)
	}
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
	if m := s.Metrics; m != nil && m.Interval < 0 {
		v.errorf("metrics.interval", "a positive duration", "interval %s", m.Interval)
	}
	v.settings()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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
		expected := "one of: " + strings.Join(sortedKeys(v.s.Calls), ", ")
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
		for _, f := range req.fields() {
			if f.value != nil {
				v.placeholders(path+"."+names[i]+"."+f.key, f.value.V, false)
			}
		}
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
		if err != nil {
			v.errorf(path, "${port.NAME}, ${env.NAME}, ${services.NAME.ENDPOINT}, ${tandem}, ${workdir} or ${studydir}", "%v", err)
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
		for _, k := range sortedKeys(x) {
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
		return (ns == "port" || ns == "env") && identPattern.MatchString(rest)
	}
	return name == "tandem" || name == "workdir" || name == "studydir"
}

func validCaseVar(name string) bool { return targetName(name) || identPattern.MatchString(name) }

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
	for _, p := range sortedKeys(strs) {
		v.placeholders(p, strs[p], true)
	}
	v.targetReady(path, t)
}

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
	for _, p := range sortedKeys(strs) {
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
		}
	}
	if r := t.Ready.Condition; r != nil {
		if c := v.callRef(path+".ready.condition.call", r.Call); c != nil {
			v.endpoint(path+".ready.condition.call", t, r.Call, c)
		}
		if err := checkFieldPath(r.Path); err != nil {
			v.errorf(path+".ready.condition.path", "a field path such as result.height or result.txs[0].height", "%v", err)
		}
	}
}

// consumers counts the scenario's targets that are consumers.
func (v *validator) consumers(sc *Scenario) int {
	n := 0
	for _, name := range sc.Targets {
		if t := v.s.Target(name); t != nil && t.Consumer != nil {
			n++
		}
	}
	if len(sc.Targets) == 0 {
		for _, t := range v.s.Targets {
			if t.Consumer != nil {
				n++
			}
		}
	}
	return n
}

// drain checks a scenario on consumer targets: a queue filled and drained
// per run, so no load shape.
func (v *validator) drain(path string, sc *Scenario, c *Call, consumers int) {
	total := len(sc.Targets)
	if total == 0 {
		total = len(v.s.Targets)
	}
	if consumers < total {
		v.errorf(path+".targets", "consumer targets only, or none", "%d of its %d targets are consumers", consumers, total)
	}
	if c != nil && c.AMQP == nil {
		v.errorf(path+".call", "an amqp call: consumer targets drain a queue", "call %s is not amqp", sc.Call)
	}
	if sc.Sweep != nil || sc.Load.Model() != KindClosed || len(sc.Load.Concurrency) > 0 {
		v.errorf(path+".load", "no load or sweep: a consumer drains a queue tandem fills", "a load shape for consumer targets")
	}
	if sc.Metric == "latency" {
		v.errorf(path+".metric", "throughput (or nothing): a drain is timed as a whole", "latency for consumer targets")
	}
	if sc.Duration > 0 {
		v.errorf(path+".duration", "requests (messages per run) or nothing (calibrated)", "a duration for a drain")
	}
}

// Kind is the scenario's kind: KindDrain when its targets are consumers,
// KindBroker for an amqp call, else its load shape's model.
func (s *Study) Kind(sc *Scenario) Kind {
	for _, name := range sc.Targets {
		if t := s.Target(name); t != nil && t.Consumer != nil {
			return KindDrain
		}
	}
	if c := s.Calls[sc.Call]; c != nil && c.AMQP != nil {
		return KindBroker
	}
	return sc.Load.Model()
}

func (v *validator) endpoint(path string, t *Target, name string, c *Call) {
	if c.Protocol() == "" {
		return
	}
	if _, err := c.EndpointName(t); err != nil {
		v.errorf(path, "an endpoint the call can use", "call %q: %v", name, err)
	}
}

func (v *validator) scenario(path string, sc *Scenario) {
	c := v.callRef(path+".call", sc.Call)
	if c != nil {
		vars, ok := v.caseVars[sc.Call]
		if !ok {
			vars = c.CaseVars()
			if v.caseVars == nil {
				v.caseVars = map[string][]string{}
			}
			v.caseVars[sc.Call] = vars
		}
		if len(vars) > 0 {
			v.errorf(path+".call", "a call with a fixed request (case variables are bound by compat cases only)",
				"call %s uses case variable ${%s}", sc.Call, vars[0])
		}
	}
	for i, name := range sc.Targets {
		v.targetRef(fmt.Sprintf("%s.targets[%d]", path, i), name)
	}
	if c != nil {
		targets := sc.Targets
		if len(targets) == 0 {
			targets = v.targetNames()
		}
		for _, name := range targets {
			if t := v.s.Target(name); t != nil {
				v.endpoint(path+".call", t, sc.Call, c)
			}
		}
	}
	if consumers := v.consumers(sc); consumers > 0 {
		v.drain(path, sc, c, consumers)
		return
	}
	if sc.Sweep != nil {
		v.sweep(path, sc)
		return
	}
	l := sc.Load
	var shapes []string
	if len(l.Concurrency) > 0 {
		shapes = append(shapes, "concurrency")
	}
	if l.Rate > 0 {
		shapes = append(shapes, "rate")
	}
	if l.Ramp != nil {
		shapes = append(shapes, "ramp")
	}
	if len(l.Steps) > 0 {
		shapes = append(shapes, "steps")
	}
	if l.Batch != nil {
		shapes = append(shapes, "batch")
	}
	const oneShape = "one of concurrency (closed loop), rate, ramp or steps (open loop), batch (batched loop)"
	switch {
	case len(shapes) > 1:
		v.errorf(path+".load", oneShape, "several load shapes: %s", strings.Join(shapes, ", "))
	case len(shapes) == 0:
		v.errorf(path+".load", oneShape, "no load shape")
	case len(l.Concurrency) > 0 && (l.Connections > 0 || l.MaxWaiting > 0):
		v.errorf(path+".load", "connections and max_waiting only with an open or batched loop", "connections or max_waiting given for a closed loop")
	case l.Model() != KindClosed && sc.Duration == 0 && sc.Requests == 0 && len(l.Steps) == 0:
		v.errorf(path+".duration", "a duration for an open or batched loop (steps carry their own)", "no duration")
	}
	switch {
	case l.Engine != "" && l.Engine != "loop" && l.Engine != "workers":
		v.errorf(path+".load.engine", "loop or workers", "unknown engine %q", l.Engine)
	case l.Engine == "loop" && l.Model() == KindBatched:
		v.errorf(path+".load.engine", "engine loop for a closed or an open loop", "engine loop for a batched loop")
	case l.Engine == "loop" && c != nil && c.HTTP == nil && c.JSONRPC == nil:
		v.errorf(path+".load.engine", "an http or jsonrpc call for engine loop", "call %s is not HTTP", sc.Call)
	case l.Quantum > 0 && l.Engine != "loop":
		v.errorf(path+".load.quantum", "a quantum with engine: loop", "a quantum for the %s engine", cmp.Or(l.Engine, "workers"))
	}
	if l.Ramp != nil && l.Ramp.From == 0 && l.Ramp.To == 0 {
		v.errorf(path+".load.ramp", "a ramp with a positive rate somewhere", "ramp from 0 to 0")
	}
	if l.Batch != nil && l.Batch.PerPeriod <= 0 {
		v.errorf(path+".load.batch.per_period", "at least 1", "per_period is %d", l.Batch.PerPeriod)
	}
	for i, c := range l.Concurrency {
		if c <= 0 {
			v.errorf(fmt.Sprintf("%s.load.concurrency[%d]", path, i), "a positive integer", "concurrency %d", c)
		}
	}
	if sc.Metric != "" && sc.Metric != "latency" && sc.Metric != "throughput" {
		v.errorf(path+".metric", "latency or throughput", "unknown metric %q", sc.Metric)
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
	if !ok || strings.Contains(rest, "${") {
		return false
	}
	c := filepath.Clean(root + "/" + rest)
	return strings.HasPrefix(c, root+"/")
}
