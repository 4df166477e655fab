package study

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/record"
)

// Replay is a scenario whose requests come from a recording rather than a
// call: request k of every run is the k-th request recorded (in the order
// they arrived), sent on the recorded timetable divided by speed (an open
// loop, the default) or, with load.concurrency, one after another as fast
// as the clients go (a closed loop).
type Replay struct {
	Recording string  `yaml:"recording,required" doc:"A recording (JSONL, written by tandem record), relative to the study file: its requests are the load, in the order they arrived."`
	Speed     float64 `yaml:"speed" doc:"Open loop: how much faster than recorded, e.g. 2 (each request at its recorded offset from the first ÷ 2) or 0.5; default 1."`
	Loop      bool    `yaml:"loop" doc:"Start the recording again after its last request (a pass lasts its span and one mean gap) until the run's duration or requests; default: one pass, which ends the run."`
	Endpoint  string  `yaml:"endpoint" doc:"The targets' endpoint every request goes to; default by protocol, as compat.recordings: grpc for gRPC, jsonrpc or http for JSON-RPC, http for HTTP (or a target's only endpoint)."`

	// Path is Recording resolved against the study file; Exchanges,
	// SHA256, Span and Protocols are the file's exchange count, digest,
	// time from its first request to its last, and protocols. All are set
	// when the study is read.
	Path      string            `yaml:"-"`
	Exchanges int               `yaml:"-"`
	SHA256    string            `yaml:"-"`
	Span      time.Duration     `yaml:"-"`
	Protocols []record.Protocol `yaml:"-"`
}

// Model is the scenario's load model: its load shape's, except that a
// replay without a concurrency is an open loop on the recorded timetable.
func (sc *Scenario) Model() Kind {
	if sc.Replay != nil && len(sc.Load.Concurrency) == 0 {
		return KindOpen
	}
	return sc.Load.Model()
}

// ReplayEndpoint is the name of the endpoint of target t that a replay's
// exchanges of protocol p go to.
func ReplayEndpoint(t *Target, rp *Replay, p record.Protocol) (string, error) {
	return RecordingEndpoint(t, &Recording{Endpoint: rp.Endpoint}, p)
}

// replay checks a scenario that replays a recording: its load shape is
// the recording's (or a closed loop's concurrency), on the worker engine.
func (v *validator) replay(path string, sc *Scenario) {
	rp, l := sc.Replay, sc.Load
	rpath := path + ".replay"
	if _, set := v.pos[rpath+".recording"]; set && strings.TrimSpace(rp.Recording) == "" {
		v.errorf(rpath+".recording", "a recording's file, relative to the study file", "no file")
	}
	if _, set := v.pos[rpath+".speed"]; set && (!(rp.Speed > 0) || math.IsInf(rp.Speed, 0)) {
		v.errorf(rpath+".speed", "a positive number: 2 replays twice as fast, 0.5 half as fast", "speed %v", rp.Speed)
	} else if set && len(l.Concurrency) > 0 {
		v.errorf(rpath+".speed", "no speed with load.concurrency: a closed loop sends as fast as its clients go", "speed %v", rp.Speed)
	}
	if rp.Loop && sc.Duration == 0 && sc.Requests == 0 {
		v.errorf(rpath+".loop", "a duration (or requests) for a looped replay, which runs until stopped", "no duration")
	}
	var own []string
	for _, s := range []struct {
		key string
		set bool
	}{{"rate", l.Rate != 0}, {"ramp", l.Ramp != nil}, {"steps", len(l.Steps) > 0}, {"batch", l.Batch != nil}} {
		if s.set {
			own = append(own, s.key)
		}
	}
	switch {
	case sc.Sweep != nil:
		v.errorf(path+".sweep", "no sweep with replay: the recording is the load", "a sweep")
	case len(own) > 0:
		v.errorf(path+".load", "with replay, load.concurrency (a closed loop) or no shape (the recorded timetable)", "a load shape of its own: %s", strings.Join(own, ", "))
	case len(l.Concurrency) > 0 && (l.Connections > 0 || l.MaxWaiting > 0):
		v.errorf(path+".load", "connections and max_waiting only with an open loop (replay without load.concurrency)", "connections or max_waiting given for a closed loop")
	}
	for i, c := range l.Concurrency {
		if c <= 0 {
			v.errorf(fmt.Sprintf("%s.load.concurrency[%d]", path, i), "a positive integer", "concurrency %d", c)
		}
	}
	switch {
	case l.Engine != "" && l.Engine != "workers":
		v.errorf(path+".load.engine", "workers (or nothing): a replay runs on the worker engine", "engine %q", l.Engine)
	case l.Quantum > 0:
		v.errorf(path+".load.quantum", "no quantum: a replay runs on the worker engine", "a quantum")
	}
	if sc.Metric != "" && sc.Metric != "latency" && sc.Metric != "throughput" && sc.Metric != "recovery" {
		v.errorf(path+".metric", "latency, throughput or recovery", "unknown metric %q", sc.Metric)
	}
	v.replayTargets(path, sc)
}

// replayTargets checks the targets a replay goes to: each serves requests
// at one address, with the replay's endpoint if it names one.
func (v *validator) replayTargets(path string, sc *Scenario) {
	targets := sc.Targets
	if len(targets) == 0 {
		targets = v.targetNames()
	}
	for _, name := range targets {
		t := v.s.Target(name)
		switch {
		case t == nil:
		case t.Consumer != nil:
			v.errorf(path+".replay", "targets that answer requests: a consumer drains a queue", "target %s is a consumer", name)
		case t.Group != nil && t.Group.Calls == "round-robin":
			v.errorf(path+".replay", "targets whose load goes to one node: a replay is not spread round-robin yet", "group %s spreads its calls round-robin", name)
		case sc.Replay.Endpoint != "":
			if _, ok := t.Endpoints[sc.Replay.Endpoint]; !ok {
				v.errorf(path+".replay.endpoint", "an endpoint every target of the scenario has", "target %s has no endpoint %q", name, sc.Replay.Endpoint)
			}
		}
	}
}

// readReplays reads the recording of every scenario that replays one
// through: a file that cannot be read is an error at its key in the
// study, a bad line an error at the recording's file:line:col. It sets
// each Replay's Path, Exchanges, SHA256, Span and Protocols.
func readReplays(s *Study, studyFile string, pos map[string]Pos) ErrorList {
	v := &validator{s: s, file: studyFile, pos: pos, bad: map[string]bool{}}
	for i := range s.Scenarios {
		sc := &s.Scenarios[i]
		rp := sc.Replay
		if rp == nil {
			continue
		}
		path := fmt.Sprintf("scenarios[%d].replay", i)
		rp.Path = rp.Recording
		if !filepath.IsAbs(rp.Path) {
			rp.Path = filepath.Join(filepath.Dir(studyFile), rp.Path)
		}
		idx, err := record.OpenIndex(rp.Path)
		var le *record.LineError
		switch {
		case errors.As(err, &le):
			v.errs = append(v.errs, &Error{File: le.File, Pos: Pos{le.Line, le.Col}, Msg: le.Err.Error(),
				Expected: "a recording line (docs/recording.md)"})
			continue
		case err != nil:
			v.errorf(path+".recording", "a recording written by tandem record (docs/recording.md)", "%v", err)
			continue
		}
		rp.Exchanges, rp.SHA256, rp.Span, rp.Protocols = idx.Len(), idx.SHA256(), idx.At(idx.Len()-1)-idx.At(0), idx.Protocols()
		idx.Close()
		if rp.Loop && rp.Span <= 0 {
			what := fmt.Sprintf("its %d requests arrived at one time", rp.Exchanges)
			if rp.Exchanges == 1 {
				what = "it holds one request"
			}
			v.errorf(path+".loop", "a recording of requests at two times at least, to loop", "%s", what)
		}
		targets := sc.Targets
		if len(targets) == 0 {
			targets = v.targetNames()
		}
		for _, name := range targets {
			t := s.Target(name)
			for _, p := range rp.Protocols {
				if _, err := ReplayEndpoint(t, rp, p); err != nil {
					v.errorf(path, "an endpoint for every protocol of the recording (set endpoint)", "its %s exchanges: %v", p, err)
				}
			}
		}
	}
	return v.errs
}
