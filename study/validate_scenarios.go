package study

import (
	"fmt"
	"slices"
	"strings"
	"time"
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
	refs := v.scenarioCalls(path, sc)
	v.scenarioRefs(path, sc, refs)
	var c *Call // the scenario's one call, if it has one
	if !sc.IsMix() && !sc.IsFlow() && len(refs) == 1 {
		c = refs[0].c
	}
	if sc.IsMix() && sc.Sweep != nil {
		v.errorf(path+".sweep", "a load: a sweep is of one call", "a sweep of a mix")
	}
	for i, name := range sc.Targets {
		v.targetRef(fmt.Sprintf("%s.targets[%d]", path, i), name)
	}
	if len(sc.Perturbations) > 0 && (sc.Sweep != nil && sc.Sweep.Search != nil || c != nil && c.AMQP != nil) {
		v.errorf(path+".perturbations", "perturbations on a scenario with a closed, open or batched loop, or a grid, of a call that is not amqp",
			"perturbations on a search or an amqp scenario")
	}
	if sc.Replay != nil {
		v.replay(path, sc)
		v.perturbations(path, sc)
		return
	}
	if consumers := v.consumers(sc); consumers > 0 {
		if sc.IsMix() || sc.IsFlow() {
			v.errorf(path, "one amqp call: consumer targets drain a queue", "a mix or a flow for consumer targets")
			return
		}
		v.drain(path, sc, c, consumers)
		return
	}
	if sc.Sweep != nil {
		v.sweep(path, sc)
		v.perturbations(path, sc)
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
	case l.Engine == "loop" && notHTTP(refs) != "":
		v.errorf(path+".load.engine", "an http or jsonrpc call for engine loop", "call %s is not HTTP", notHTTP(refs))
	case l.Quantum > 0 && l.Engine == "workers":
		v.errorf(path+".load.quantum", "a quantum on the event loop (engine loop, or no engine)", "a quantum for the workers engine")
	case l.Quantum > 0 && l.Model() == KindBatched:
		v.errorf(path+".load.quantum", "a quantum for a closed or an open loop", "a quantum for a batched loop")
	case l.Quantum > 0 && sc.IsFlow():
		v.errorf(path+".load.quantum", "no quantum for a flow: its clients are goroutines, not the event loop", "a quantum for a flow")
	case l.Quantum > 0 && notHTTP(refs) != "":
		v.errorf(path+".load.quantum", "an http or jsonrpc call for a quantum (the event loop's)", "call %s is not HTTP", notHTTP(refs))
	}
	if l.Ramp != nil && l.Ramp.From == 0 && l.Ramp.To == 0 {
		v.errorf(path+".load.ramp", "a ramp with a positive rate somewhere", "ramp from 0 to 0")
	}
	// A step of rate 0 among others is a pause; steps that are all 0 send
	// nothing at all.
	if len(l.Steps) > 0 && !slices.ContainsFunc(l.Steps, func(st Step) bool { return st.Rate > 0 }) {
		v.errorf(path+".load.steps", "a positive rate in one step at least: a step of rate 0 among others is a pause", "every step's rate is 0")
	}
	if l.Batch != nil && l.Batch.PerPeriod <= 0 {
		v.errorf(path+".load.batch.per_period", "at least 1", "per_period is %d", l.Batch.PerPeriod)
	}
	for i, c := range l.Concurrency {
		if c <= 0 {
			v.errorf(fmt.Sprintf("%s.load.concurrency[%d]", path, i), "a positive integer", "concurrency %d", c)
		}
	}
	if sc.Metric != "" && sc.Metric != "latency" && sc.Metric != "throughput" && sc.Metric != "recovery" {
		v.errorf(path+".metric", "latency, throughput or recovery", "unknown metric %q", sc.Metric)
	}
	v.perturbations(path, sc)
}

// notHTTP names the first of the calls that is neither http nor jsonrpc
// ("" for none).
func notHTTP(refs []callAt) string {
	for _, at := range refs {
		if at.c.HTTP == nil && at.c.JSONRPC == nil {
			return at.name
		}
	}
	return ""
}

// perturbations checks a scenario's faults: each within a round of a
// duration (a grid's cell, less its last second), on a target tandem
// starts.
func (v *validator) perturbations(path string, sc *Scenario) {
	targets := sc.Targets
	if len(targets) == 0 {
		targets = v.targetNames()
	}
	if sc.Metric == "recovery" {
		v.recoveryCovered(path, sc, targets)
	}
	if len(sc.Perturbations) == 0 {
		return
	}
	length := roundLength(sc)
	if length == 0 {
		v.errorf(path+".duration", "a duration for a scenario with perturbations (they are timed from the round's start)", "no duration")
	}
	for i, pt := range sc.Perturbations {
		v.perturbation(fmt.Sprintf("%s.perturbations[%d]", path, i), pt, targets, length)
	}
}

// recoveryCovered checks that a scenario of metric recovery perturbs each
// of its targets.
func (v *validator) recoveryCovered(path string, sc *Scenario, targets []string) {
	covered := map[string]bool{}
	for _, pt := range sc.Perturbations {
		if pt.Target == "" {
			covered = map[string]bool{"": true}
			break
		}
		covered[pt.Target] = true
	}
	for _, name := range targets {
		if !covered[""] && !covered[name] {
			v.errorf(path+".metric", "perturbations done to each of the scenario's targets for metric recovery",
				"no perturbation is done to target %s", name)
			break
		}
	}
}

// roundLength is how long a round's load lasts, the time a perturbation
// must fall within (0: no duration).
func roundLength(sc *Scenario) time.Duration {
	length := sc.Duration
	if sw := sc.Sweep; sw != nil {
		length = sw.Duration - time.Second // a cell's load: its last second is for the answers
	}
	if len(sc.Load.Steps) > 0 {
		length = 0
		for _, st := range sc.Load.Steps {
			length += st.Duration
		}
	}
	return length
}

// perturbation checks one fault (at pp) of a scenario on targets, in a
// round of length.
func (v *validator) perturbation(pp string, pt Perturbation, targets []string, length time.Duration) {
	v.perturbationAction(pp, &pt, targets)
	if len(pt.Sides) > 0 && !pt.OnPath() {
		v.errorf(pp+".sides", "sides only with disconnect, partition or degrade", "sides with %s", pt.Action)
	}
	if pt.Generator && !pt.OnPath() {
		v.errorf(pp+".generator", "generator only with disconnect, partition or degrade", "generator with %s", pt.Action)
	}
	if pt.Network != nil && pt.Action != ActionDegrade {
		v.errorf(pp+".network", "network only with degrade", "network with %s", pt.Action)
	}
	if pt.At < 0 || pt.For < 0 || pt.Every < 0 {
		v.errorf(pp, "durations of 0 or more", "a negative duration")
	}
	if length > 0 && pt.At >= length {
		v.errorf(pp+".at", fmt.Sprintf("a time within the round (%v)", length), "at %v", pt.At)
	}
	if pt.Every > 0 && pt.Every <= pt.For {
		v.errorf(pp+".every", fmt.Sprintf("longer than for (%v)", pt.For), "every %v", pt.Every)
	} else if pt.Every > 0 && pt.Every < minEvery {
		v.errorf(pp+".every", fmt.Sprintf("%v or more (a target needs time to come back)", minEvery), "every %v", pt.Every)
	}
	if !v.perturbationTargets(pp, &pt, targets) {
		return
	}
	if pt.Pick != nil {
		v.nodePick(pp+".pick", &pt)
	}
}

// perturbationAction checks a fault's action and what that action asks of
// it and of its targets.
func (v *validator) perturbationAction(pp string, pt *Perturbation, targets []string) {
	switch pt.Action {
	case ActionKill, ActionStop, ActionRestart, ActionWipeAndRestart:
		if pt.Action == ActionRestart && pt.For > 0 {
			v.errorf(pp+".for", "no for with restart (it starts again at once; stop takes a for)", "for %v", pt.For)
		}
		if pt.Action == ActionWipeAndRestart {
			for _, name := range targets {
				if t := v.s.Target(name); t != nil && t.Start != nil && len(t.Start.Wipe)+len(t.Start.WipeOutside)+len(t.Start.Init) == 0 &&
					(pt.Target == "" || pt.Target == name) {
					v.errorf(pp+".action", "wipe-and-restart of a target with start.wipe or start.init (else it is a restart)", "target %s has neither", name)
				}
			}
		}
	case ActionPause:
		if pt.For <= 0 {
			v.errorf(pp+".for", "how long the pause lasts", "no for")
		}
	case ActionDisconnect, ActionPartition, ActionDegrade:
		v.pathPerturbation(pp, pt, targets)
	default:
		v.errorf(pp+".action", "kill, stop, pause, restart, wipe-and-restart, disconnect, partition or degrade", "unknown action %q", pt.Action)
	}
}

// perturbationTargets checks the targets a fault is done to: one of the
// scenario's, started by tandem unless on a path, with a node or role
// that group has; false if its target is not the scenario's.
func (v *validator) perturbationTargets(pp string, pt *Perturbation, targets []string) bool {
	on := targets
	if pt.Target != "" {
		if v.s.Target(pt.Target) == nil {
			v.targetRef(pp+".target", pt.Target)
			return false
		}
		if !slices.Contains(targets, pt.Target) {
			v.errorf(pp+".target", "one of the scenario's targets "+strings.Join(targets, ", "), "target %s", pt.Target)
			return false
		}
		on = []string{pt.Target}
	}
	for _, name := range on {
		t := v.s.Target(name)
		if t != nil && t.Start == nil && !pt.OnPath() { // a link is tandem's: any target; targetNetwork checks its endpoints
			v.errorf(pp+".target", "a target tandem starts (it has a start section)", "target %s is not started by tandem", name)
		}
		if t == nil || (pt.Node == "" && pt.Role == "" && pt.Pick == nil) {
			continue
		}
		switch {
		case t.Group == nil:
			v.errorf(pp, "node, role and pick only on a group target", "target %s is not a group", name)
		case pt.Node != "" && pt.Role != "":
			v.errorf(pp+".node", "node or role, not both", "both")
		case pt.Node != "" && pt.Pick != nil:
			v.errorf(pp+".pick", "node or pick, not both", "both")
		case pt.Node != "" && !t.Group.Has(pt.Node):
			v.errorf(pp+".node", "a node of group "+name+" (validator0, full1, …)", "no node %q", pt.Node)
		case pt.Role != "" && !slices.ContainsFunc(t.Group.Nodes, func(g GroupNodes) bool { return g.Role == pt.Role }):
			v.errorf(pp+".role", "a role of group "+name, "no role %q", pt.Role)
		}
	}
	return true
}

// nodePick checks a perturbation's pick: a call, a field, and one way to
// choose.
func (v *validator) nodePick(pp string, pt *Perturbation) {
	pk := pt.Pick
	v.callRef(pp+".call", pk.Call)
	if strings.TrimSpace(pk.Field) == "" {
		v.errorf(pp+".field", "a path into the call's answer (result.leader)", "no field")
	}
	n := 0
	for _, set := range []bool{pk.Equals != "", pk.EqualsField != "", pk.Highest, pk.Lowest} {
		if set {
			n++
		}
	}
	if n != 1 {
		v.errorf(pp, "one of equals, equals_field, highest or lowest", "%d of them", n)
	}
	for _, name := range Placeholders(pk.Equals) {
		if !strings.HasPrefix(name, "node.") || !slices.Contains(nodeNames, strings.TrimPrefix(name, "node.")) {
			v.errorf(pp+".equals", "${node.name}, ${node.index}, ${node.host} or ${node.role}: the asked node's", "${%s}", name)
		}
	}
}

// pathPerturbation checks a disconnect, partition or degrade: it lasts for,
// a degrade says what the path becomes, and a node or role is given only
// where it is done to a node's links to its peers (targets: the
// scenario's).
func (v *validator) pathPerturbation(pp string, pt *Perturbation, targets []string) {
	if pt.For <= 0 {
		v.errorf(pp+".for", "how long the path is "+map[string]string{ActionDisconnect: "disconnected",
			ActionPartition: "partitioned", ActionDegrade: "degraded"}[pt.Action], "no for")
	}
	if len(pt.Sides) > 0 {
		v.sides(pp, pt, targets)
	}
	if pt.Generator {
		for _, name := range targets {
			if t := v.s.Target(name); (pt.Target == "" || pt.Target == name) && t != nil && !t.Group.HasLinks() {
				v.errorf(pp+".generator", "generator only on a group with links between its nodes (on any other target a network perturbation is done to the generator's path already)", "target %s has no links between nodes", name)
			}
		}
	}
	if pt.Action != ActionDegrade {
		return
	}
	if pt.Network == nil {
		v.errorf(pp+".network", "the path's conditions while degraded, e.g. {delay: 100ms, loss: 0.05}", "no network")
		return
	}
	v.network(pp+".network", pt.Network, false)
}

// sides checks a perturbation's split of a group: only on groups with
// links between their nodes, not with a node chosen, and each side of node
// or region names.
func (v *validator) sides(pp string, pt *Perturbation, targets []string) {
	if pt.Node != "" || pt.Role != "" || pt.Pick != nil || pt.Generator {
		v.errorf(pp+".sides", "sides, or node, role, pick and generator: a split is between nodes, not done to one", "sides and a node chosen")
	}
	for _, name := range targets {
		t := v.s.Target(name)
		if t == nil || pt.Target != "" && pt.Target != name {
			continue
		}
		if !t.Group.HasLinks() {
			v.errorf(pp+".sides", "sides only on a group with links between its nodes (its network: or latency)", "target %s has none", name)
			continue
		}
		if _, err := t.Group.Split(pt.Sides); err != nil {
			v.errorf(pp+".sides", "sides of node names (validator0) or region names (eu) of group "+name+", each node on one side, two sides or more", "%v", err)
		}
	}
}

// minEvery is the shortest time between a perturbation's repeats.
const minEvery = 100 * time.Millisecond
