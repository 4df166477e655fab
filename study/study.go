// Package study reads and validates study files: YAML that names the
// targets under test, the calls they serve and the experiments to run.
// Validation is strict and complete: every unknown key, wrong type, missing
// field and dangling reference is reported at once, each with its
// file:line:col and what was expected.
package study

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
	// DefaultRounds is the fixed design of rule spread (the shift rule's
	// rounds are adaptive).
	DefaultRounds       = 3
	DefaultMaxRounds    = 100
	DefaultMaxTime      = 2 * time.Minute
	DefaultWarmup       = time.Second
	DefaultMinDuration  = 250 * time.Millisecond
	SpreadMinDuration   = 5 * time.Second
	DefaultTimeout      = 10 * time.Second
	DefaultReadyTimeout = 120 * time.Second
)

// Policy is the verdict policy the defaults set (their percentages as
// fractions).
func (d Defaults) Policy() stats.Policy {
	p := stats.DefaultPolicy()
	if d.Rule != "" {
		p.Rule = stats.Rule(d.Rule)
	}
	if d.Alpha > 0 {
		p.Alpha = d.Alpha
	}
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

// ReadEnv is Read that also reports every ${env.NAME} of the study that
// lookup does not find (give it os.LookupEnv; see MissingEnv), among the
// study's other errors: one list, in file order.
func ReadEnv(path string, lookup func(name string) (string, bool)) (*Study, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return parseEnv(path, data, machineLimits(), lookup)
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
	return parseEnv(file, data, lim, nil)
}

// parseEnv is parse; with a lookup, the ${env.NAME} it does not find are
// errors too (see MissingEnv).
func parseEnv(file string, data []byte, lim limits, lookup func(name string) (string, bool)) (*Study, error) {
	s := &Study{}
	yf := parseYAML(file, data, s)
	errs, pos := yf.errs, yf.pos
	if yf.decoded {
		// Semantic checks run even after structural errors, so that one
		// pass reports everything; they skip values that failed to decode.
		v := &validator{s: s, file: file, pos: pos, strs: yf.strs, bad: map[string]bool{}, lim: lim}
		for _, e := range errs {
			if !strings.HasPrefix(e.Msg, "missing required key") && !fileLevel(e) {
				v.bad[e.Path] = true
			}
		}
		v.check()
		errs = append(errs, v.errs...)
		if lookup != nil {
			s.File, s.pos = file, pos
			errs = append(errs, s.missingEnv(lookup)...)
		}
		if c := s.Compat; c != nil && c.File != "" && len(errs) == 0 {
			errs = append(errs, includeCases(s, file, pos)...)
		}
		if c := s.Compat; c != nil && len(c.Recordings) > 0 && len(errs) == 0 {
			errs = append(errs, readRecordings(s, file, pos)...)
		}
		if len(errs) == 0 {
			errs = append(errs, readReplays(s, file, pos)...)
		}
		if len(errs) == 0 {
			errs = append(errs, openValues(s, file, pos)...)
		}
		if len(errs) == 0 {
			errs = append(errs, compileProtos(s, file, pos)...)
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
	adaptive := s.setDefaultsBlock()
	s.setPolicyDefaults()
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
		s.setScenarioDefaults(&s.Scenarios[i], adaptive)
	}
	if s.Compat != nil && s.Compat.Reference == "" {
		s.Compat.Reference = s.Baseline
	}
}

// setDefaultsBlock fills the defaults block's unset settings (but the
// policy's) and says whether a scenario without rounds of its own stops
// adaptively.
func (s *Study) setDefaultsBlock() (adaptive bool) {
	d := &s.Defaults
	if d.Rule == "" {
		d.Rule = string(stats.RuleShift)
	}
	if d.Alpha == 0 {
		d.Alpha = stats.DefaultAlpha
	}
	if d.MaxRounds == 0 {
		d.MaxRounds = DefaultMaxRounds
	}
	if d.MaxTime == 0 {
		d.MaxTime = DefaultMaxTime
	}
	adaptive = d.Rounds == 0 && d.Rule == string(stats.RuleShift)
	if d.Rounds == 0 {
		d.Rounds = DefaultRounds
	}
	if d.Warmup == 0 {
		d.Warmup = DefaultWarmup
	}
	if d.MinDuration == 0 {
		d.MinDuration = DefaultMinDuration
		if d.Rule == string(stats.RuleSpread) {
			d.MinDuration = SpreadMinDuration
		}
	}
	if d.Timeout == 0 {
		d.Timeout = DefaultTimeout
	}
	if d.Order == "" {
		d.Order = "alternate"
	}
	return adaptive
}

// setPolicyDefaults fills the verdict policy's thresholds the defaults
// block leaves out.
func (s *Study) setPolicyDefaults() {
	d := &s.Defaults
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
}

// setScenarioDefaults fills a scenario's unset settings from the defaults
// block (adaptive: as setDefaultsBlock said) and the study.
func (s *Study) setScenarioDefaults(sc *Scenario, adaptive bool) {
	d := &s.Defaults
	if sc.Rounds == 0 {
		sc.Rounds = d.Rounds
		sc.Adaptive = adaptive && sc.Sweep == nil
		if sc.Adaptive {
			sc.Rounds = d.MaxRounds
		}
		if sc.Sweep != nil {
			sc.Rounds = 1 // a grid runs once unless its scenario says otherwise
		}
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
	if rp := sc.Replay; rp != nil && rp.Speed == 0 {
		rp.Speed = 1
	}
	for k := range sc.Calls {
		if sc.Calls[k].Weight == 0 {
			sc.Calls[k].Weight = 1
		}
	}
	if sc.Model() != KindClosed && sc.Load.Connections == 0 {
		sc.Load.Connections = 1
	}
	if b := sc.Load.Batch; b != nil && b.Period == 0 {
		b.Period = time.Second
	}
	if sc.Sweep != nil {
		sc.Sweep.setDefaults()
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
	return sc.Model()
}
