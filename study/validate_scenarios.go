package study

import (
	"cmp"
	"fmt"
	"strings"
)

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
