package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/compat"
	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/target"
)

// nodeName names a node in messages: "target a", or "target net node full0".
func (l *live) nodeName(n *node) string {
	if l.spec.Group == nil {
		return "target " + l.spec.Name
	}
	return fmt.Sprintf("target %s node %s", l.spec.Name, n.name)
}

// running reports whether any of the target's processes runs.
func (l *live) running() bool {
	return slices.ContainsFunc(l.nodes, func(n *node) bool { return n.proc != nil })
}

// stopNodes stops every process of the target; the errors are warnings.
func (r *runner) stopNodes(l *live) {
	defer l.peers.close()
	for _, n := range l.nodes {
		r.closeLinks(n)
		if n.proc != nil {
			if err := n.proc.Stop(r.o.StopGrace); err != nil {
				r.warn(err.Error())
			}
			n.proc = nil
		}
	}
}

// exitedNode is the exit of any of the target's processes, if one exited.
func (l *live) exitedNode() error {
	for _, n := range l.nodes {
		if n.proc == nil {
			continue
		}
		select {
		case <-n.proc.Done():
			return n.proc.ExitErr()
		default:
		}
	}
	return nil
}

// startGroup starts a group target from empty: its work dir made anew, its
// setup commands run, then each node started from the target's start with
// its own ${node.*} and ports; the group is ready when every node is.
func (r *runner) startGroup(ctx context.Context, l *live, cpus []int) error {
	t := l.spec
	g := t.Group
	workdir := filepath.Join(r.o.Out, "work", t.Name)
	if err := os.RemoveAll(workdir); err != nil {
		return fmt.Errorf("target %s: %w", t.Name, err)
	}
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		return fmt.Errorf("target %s: %w", t.Name, err)
	}
	ge := r.newExpander(workdir)
	ge.groupPorts = map[string]int{}
	l.peers.close() // a start from empty: links anew
	l.peers, l.res.PeerNetwork = nil, nil
	if g.HasLinks() {
		l.peers = newPeerLinks(context.WithoutCancel(ctx), g, r.s.Seed)
		l.res.PeerNetwork = l.peers.res
		ge.peerLink = l.peers.addr
	}
	nodeExpanders := ge.withNodes(g.Members())
	dataDir, err := r.setDataDir(ge, l)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := r.groupSetup(ctx, t, ge, workdir); err != nil {
		return err
	}
	l.nodes, l.res.Nodes = nil, nil
	for i, m := range g.Members() {
		if err := r.startMember(ctx, l, m, nodeExpanders[i], cpus); err != nil {
			return err
		}
	}
	l.res.Command = l.res.Nodes[0].Command
	l.endpoints = l.node.endpoints
	st, err := r.awaitGroup(ctx, l, t0)
	if err != nil {
		return err
	}
	if err := exitedNode(ctx, l, 250*time.Millisecond); err != nil {
		return err // e.g. a port it bound after answering was taken (see startOnFreshPorts)
	}
	r.diskUse(st, t.Name, dataDir)
	l.res.Startup = st
	r.progress("target %s: %d nodes, the first answering after %v, all ready after %v", t.Name, len(l.nodes),
		time.Duration(st.FirstAnswerNs).Round(time.Millisecond), time.Duration(st.ReadyNs).Round(time.Millisecond))
	return nil
}

// groupSetup runs a group's setup commands, expanded by ge, in its work
// dir.
func (r *runner) groupSetup(ctx context.Context, t *study.Target, ge *expander, workdir string) error {
	for i, argv := range t.Group.Setup {
		expanded, err := ge.all(argv)
		if err != nil {
			return fmt.Errorf("target %s: setup[%d]: %w", t.Name, i, err)
		}
		r.progress("target %s: setup: %s", t.Name, ge.redact(strings.Join(expanded, " ")))
		spec := target.Spec{Name: "target " + t.Name + ": setup", Dir: workdir, Redact: ge.redact}
		if err := target.RunOnce(ctx, spec, expanded); err != nil {
			return err
		}
	}
	return nil
}

// startMember starts member m of group target l as a node of l, from the
// target's start expanded by e (with cpus unless it names its own).
func (r *runner) startMember(ctx context.Context, l *live, m study.Member, e *expander, cpus []int) error {
	t := l.spec
	n := &node{name: m.Name, role: m.Role, index: m.Index, endpoints: map[string]string{}}
	for name, ep := range t.Endpoints {
		v, err := e.expand(ep)
		if err != nil {
			return fmt.Errorf("target %s node %s: endpoint %s: %w", t.Name, m.Name, name, err)
		}
		n.endpoints[name] = v
	}
	var err error
	if n.metrics, err = e.expand(t.Metrics); err != nil {
		return fmt.Errorf("target %s node %s: metrics: %w", t.Name, m.Name, err)
	}
	spec, err := r.startSpec(e, l.nodeName(n), t.Start)
	if err != nil {
		return err
	}
	spec.Name = t.Name + "/" + m.Name
	if t.Start.CPUs == "" {
		spec.CPUs = cpus
	}
	if t.Ready.Log != "" {
		spec.ReadyLine = regexp.MustCompile(t.Ready.Log) // validated
	}
	n.started = spec
	if m.Index == 0 {
		r.expanders[t.Name] = e // where the calls go: the first node's
	}
	cmd := e.shown(t.Start.Command, spec.Command)
	l.res.Nodes = append(l.res.Nodes, results.Node{Name: m.Name, Role: m.Role, Index: m.Index, Command: cmd, Endpoints: maps.Clone(n.endpoints)})
	l.nodes = append(l.nodes, n)
	if m.Index == 0 {
		l.node = n
	}
	r.progress("%s: starting %s", l.nodeName(n), strings.Join(cmd, " "))
	if n.proc, err = target.Start(ctx, spec); err != nil {
		l.res.Nodes[m.Index].Error = err.Error()
		return err
	}
	return nil
}

// awaitGroup waits for every node of group target l to be ready and sums
// up the group's startup, timed from t0.
func (r *runner) awaitGroup(ctx context.Context, l *live, t0 time.Time) (*results.Startup, error) {
	st := &results.Startup{FirstAnswerNs: -1}
	for _, n := range l.nodes {
		ns, err := r.awaitNode(ctx, l, n)
		if err != nil {
			l.res.Nodes[n.index].Error = err.Error()
			return nil, err
		}
		l.res.Nodes[n.index].Startup = ns
		first := int64(n.proc.Started.Add(time.Duration(ns.FirstAnswerNs)).Sub(t0))
		if st.FirstAnswerNs < 0 || first < st.FirstAnswerNs {
			st.FirstAnswerNs = first
		}
		st.ReadyNs = max(st.ReadyNs, int64(n.proc.Started.Add(time.Duration(ns.ReadyNs)).Sub(t0)))
		st.CPUNs += ns.CPUNs
		st.PeakRSSBytes += ns.PeakRSSBytes
	}
	return st, nil
}

// exitedNode is the exit of a node of l's group that answered and has
// since exited, or exits within settle: a node answers before it has
// bound every port (CometBFT serves RPC before it listens for peers), so
// a bind it lost shows only after it was ready.
func exitedNode(ctx context.Context, l *live, settle time.Duration) error {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	end := time.After(settle)
	for {
		for _, n := range l.nodes {
			if n.proc == nil {
				continue
			}
			select {
			case <-n.proc.Done():
				err := n.proc.ExitErr()
				l.res.Nodes[n.index].Error = err.Error()
				return err
			default:
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-end:
			return nil
		case <-tick.C:
		}
	}
}

// height asks a node of a group for its height by the group's probe.
func (r *runner) height(ctx context.Context, l *live, n *node) (int64, error) {
	h := l.spec.Group.Height
	a, err := r.askerAt(ctx, l, n.own(), h.Call)
	if err != nil {
		return 0, err
	}
	ans, res, err := a.Ask(ctx)
	switch {
	case err != nil:
		return 0, err
	case res.Status != "":
		return 0, fmt.Errorf("%s answered %s", h.Call, res.Status)
	case len(ans) == 0:
		return 0, fmt.Errorf("%s: no answer", h.Call)
	}
	v, ok := number(ans[0], h.Path)
	if !ok {
		return 0, fmt.Errorf("%s: no number at %s", h.Call, h.Path)
	}
	return int64(v), nil
}

// catchUp waits until n's height reaches the highest of the group's other
// nodes, and returns when it did and how far behind it was at first.
func (r *runner) catchUp(ctx context.Context, l *live, n *node, within time.Duration) (at time.Time, behind int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	first := true
	for {
		var top int64 = -1
		for _, o := range l.nodes {
			if o == n || o.proc == nil {
				continue
			}
			if h, err := r.height(ctx, l, o); err == nil {
				top = max(top, h)
			}
		}
		others := slices.ContainsFunc(l.nodes, func(o *node) bool { return o != n && o.proc != nil })
		if !others {
			return time.Now(), 0, nil // nothing to catch up with
		}
		mine, err := r.height(ctx, l, n)
		if err == nil && top >= 0 {
			if first {
				behind, first = max(top-mine, 0), false
			}
			if mine >= top {
				return time.Now(), behind, nil
			}
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return time.Time{}, behind, fmt.Errorf("%s did not catch up within %v (height %d, the group's %d)", l.nodeName(n), within, mine, top)
			}
			return time.Time{}, behind, ctx.Err()
		case <-tick.C:
		}
	}
}

// roundRobin spreads a load's connections over a group's nodes: each
// connection to the next node, from the first at every run (reset). It
// asks (readiness, probes) the first.
type roundRobin struct {
	callers []driver.Caller
	next    int
}

// reset makes the next run's first connection go to the first node.
func (rr *roundRobin) reset() { rr.next = 0 }

func (rr *roundRobin) Dial(ctx context.Context) (load.Conn, error) {
	c := rr.callers[rr.next%len(rr.callers)]
	rr.next++
	return c.Dial(ctx)
}

func (rr *roundRobin) Ask(ctx context.Context) ([][]byte, load.Result, error) {
	return rr.callers[0].Ask(ctx)
}

// chooseNode is the node of l a perturbation is done to: the one its pick
// chooses by asking the nodes now (with how, in words), else pickNode's.
func (r *runner) chooseNode(ctx context.Context, l *live, p *study.Perturbation, k int) (*node, string, error) {
	if p.Pick == nil || l.spec.Group == nil {
		return pickNode(l, p, k), "", nil
	}
	pk := p.Pick
	ctx, cancel := context.WithTimeout(ctx, pickTimeout)
	defer cancel()
	type seen struct {
		n    *node
		text string
		num  float64
		isN  bool
	}
	var answers []seen
	var said []string
	for _, n := range l.nodes {
		if n.proc == nil || (p.Role != "" && n.role != p.Role) {
			continue
		}
		tree, err := r.askTree(ctx, l, n, pk.Call)
		if err != nil {
			said = append(said, n.name+": "+err.Error())
			continue
		}
		v, ok := compat.Extract(tree, pk.Field)
		if !ok {
			said = append(said, n.name+": no "+pk.Field)
			continue
		}
		text := fieldText(v)
		num, isN := numeric(v)
		want := ""
		switch {
		case pk.EqualsField != "":
			other, _ := compat.Extract(tree, pk.EqualsField)
			want = fieldText(other)
		case pk.Equals != "":
			want = strings.NewReplacer("${node.name}", n.name, "${node.index}", strconv.Itoa(n.index), "${node.host}", nodeHost(n.index),
				"${node.role}", n.role).Replace(pk.Equals)
		}
		said = append(said, n.name+": "+text)
		if (pk.Equals != "" || pk.EqualsField != "") && text != want {
			continue
		}
		answers = append(answers, seen{n, text, num, isN})
	}
	how := fmt.Sprintf("%s %s (%s)", pk.Call, pk.Field, strings.Join(said, "; "))
	switch {
	case pk.Highest || pk.Lowest:
		answers = slices.DeleteFunc(answers, func(a seen) bool { return !a.isN })
		if len(answers) == 0 {
			return nil, "", fmt.Errorf("pick: no node's %s is a number: %s", pk.Field, how)
		}
		best := answers[0]
		for _, a := range answers[1:] {
			if pk.Highest && a.num > best.num || pk.Lowest && a.num < best.num {
				best = a
			}
		}
		return best.n, how, nil
	case len(answers) == 0:
		return nil, "", fmt.Errorf("pick: no node's %s matched: %s", pk.Field, how)
	}
	return answers[0].n, how, nil
}

// pickTimeout bounds asking the nodes for a pick.
const pickTimeout = 5 * time.Second

// askTree asks node n of l call and decodes its answer.
func (r *runner) askTree(ctx context.Context, l *live, n *node, call string) (any, error) {
	a, err := r.askerAt(ctx, l, n.own(), call)
	if err != nil {
		return nil, err
	}
	ans, res, err := a.Ask(ctx)
	switch {
	case err != nil:
		return nil, err
	case res.Status != "":
		return nil, fmt.Errorf("%s answered %s", call, res.Status)
	case len(ans) == 0:
		return nil, fmt.Errorf("%s: no answer", call)
	}
	var tree any
	if err := json.Unmarshal(ans[0], &tree); err != nil {
		return nil, fmt.Errorf("%s: %w", call, err)
	}
	return tree, nil
}

// fieldText is a field's value as text: a string as it is, anything else
// as JSON.
func fieldText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// pickNode is the node of l a perturbation is done to: the named one, the
// k-th of its role in turn (k counting the perturbation's occurrences),
// else the first node.
func pickNode(l *live, p *study.Perturbation, k int) *node {
	if p.Node != "" {
		for _, n := range l.nodes {
			if n.name == p.Node {
				return n
			}
		}
	}
	if p.Role != "" {
		var of []*node
		for _, n := range l.nodes {
			if n.role == p.Role {
				of = append(of, n)
			}
		}
		if len(of) > 0 {
			return of[k%len(of)]
		}
	}
	return l.nodes[0]
}
