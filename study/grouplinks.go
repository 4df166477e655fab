package study

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/link"
)

// MaxLatency bounds a region latency, as a sanity check on the unit.
const MaxLatency = time.Minute

// regionPattern is a region's name: no '-', which joins two in latency.
var regionPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// peerLists are the placeholders that name a group's nodes' ports to a
// node: links between the nodes stand behind the addresses they give.
var peerLists = []string{"group.nodes.", "group.others.", "group.peers."}

// MaxKernelGroupNodes bounds a group whose links between nodes go through
// the kernel: n·(n−1) links a port, each two namespaces and a handful of
// descriptors.
const MaxKernelGroupNodes = 16

// HasLinks reports whether links stand between the group's nodes.
func (g *Group) HasLinks() bool { return g != nil && (g.Network != nil || len(g.Latency) > 0) }

// Region is the region a node (by name) is in, or "".
func (g *Group) Region(node string) string {
	for _, name := range slices.Sorted(maps.Keys(g.Regions)) {
		if slices.Contains(g.Regions[name], node) {
			return name
		}
	}
	return ""
}

// Split resolves a perturbation's sides to node names: each side's node
// and region names, in the group's node order, and the nodes in no side as
// one more side. It fails on a name that is neither, a node on two sides,
// and a split that leaves fewer than two sides.
func (g *Group) Split(sides [][]string) ([][]string, error) {
	side := map[string]int{}
	for i, names := range sides {
		if len(names) == 0 {
			return nil, fmt.Errorf("side %d is empty", i)
		}
		for _, name := range names {
			nodes := g.Regions[name]
			if nodes == nil {
				if !g.Has(name) {
					return nil, fmt.Errorf("%q is neither a node nor a region of the group", name)
				}
				nodes = []string{name}
			}
			for _, n := range nodes {
				if j, ok := side[n]; ok && j != i {
					return nil, fmt.Errorf("node %s is on sides %d and %d", n, j, i)
				}
				side[n] = i
			}
		}
	}
	out := make([][]string, len(sides)+1)
	for _, m := range g.Members() {
		i, ok := side[m.Name]
		if !ok {
			i = len(sides)
		}
		out[i] = append(out[i], m.Name)
	}
	out = slices.DeleteFunc(out, func(s []string) bool { return len(s) == 0 })
	if len(out) < 2 {
		return nil, fmt.Errorf("every node is on one side: nothing to split")
	}
	return out, nil
}

// PairConditions are the conditions of the link from node from to node
// to: up carries what from sends, down what to answers. They are the
// group's network's, with the delay of the latency between the two nodes'
// regions in place of its delay when one is given.
func (g *Group) PairConditions(from, to string) (up, down link.Conditions, err error) {
	if up, down, err = g.Network.Conditions(); err != nil {
		return up, down, err
	}
	if d, ok := g.latencyBetween(g.Region(from), g.Region(to)); ok {
		up.Delay, down.Delay = d, d
	}
	return up, down, nil
}

// latencyBetween is the latency between regions a and b, given either
// way round.
func (g *Group) latencyBetween(a, b string) (time.Duration, bool) {
	if a == "" || b == "" {
		return 0, false
	}
	if d, ok := g.Latency[a+"-"+b]; ok {
		return d, true
	}
	d, ok := g.Latency[b+"-"+a]
	return d, ok
}

// groupLinks checks the links between a group's nodes: the network's keys,
// regions of the group's own nodes (each in one region at most), latencies
// between named regions, and a start that names the peers through the
// placeholders the links stand behind.
func (v *validator) groupLinks(p string, t *Target) {
	g := t.Group
	if g.Network != nil {
		v.network(p+".network", g.Network, true)
		if g.Network.Kernel() && g.Size() > MaxKernelGroupNodes {
			v.errorf(p+".network.via", fmt.Sprintf("via kernel between at most %d nodes: each ordered pair's link is two network namespaces of its own", MaxKernelGroupNodes),
				"%d nodes", g.Size())
		}
	}
	members := map[string]bool{}
	if g.Size() <= MaxGroupNodes { // else refused above, and too many to name
		for _, m := range g.Members() {
			members[m.Name] = true
		}
	}
	in := map[string]string{}
	for _, region := range slices.Sorted(maps.Keys(g.Regions)) {
		rp := p + ".regions." + region
		if !regionPattern.MatchString(region) {
			v.errorf(rp, "lower-case letters, digits and '_', starting with a letter (no '-': latency joins two regions with it)", "region %q", region)
		}
		if len(g.Regions[region]) == 0 {
			v.errorf(rp, "the names of the region's nodes", "no nodes")
		}
		for i, node := range g.Regions[region] {
			np := fmt.Sprintf("%s[%d]", rp, i)
			switch {
			case !members[node]:
				v.errorf(np, "a node of the group: "+strings.Join(slices.Sorted(maps.Keys(members)), ", "), "no node %q", node)
			case in[node] != "":
				v.errorf(np, "each node in one region at most", "node %s is also in %s", node, in[node])
			default:
				in[node] = region
			}
		}
	}
	if len(g.Regions) > 0 && len(g.Latency) == 0 {
		v.errorf(p+".regions", "latency: the delay between the regions (regions alone change nothing)", "regions without latency")
	}
	for _, key := range slices.Sorted(maps.Keys(g.Latency)) {
		lp := p + ".latency." + key
		a, b, ok := strings.Cut(key, "-")
		_, knownA := g.Regions[a]
		_, knownB := g.Regions[b]
		switch {
		case !ok || !knownA || !knownB:
			v.errorf(lp, "REGION-REGION of two regions under regions: "+strings.Join(slices.Sorted(maps.Keys(g.Regions)), ", "), "latency %q", key)
			continue
		case a != b && hasKey(g.Latency, b+"-"+a) && a > b:
			v.errorf(lp, "one latency per pair of regions (it is the delay each way)", "both %s-%s and %s", b, a, key)
			continue
		}
		if d := g.Latency[key]; d < 0 || d > MaxLatency {
			v.errorf(lp, "a one-way delay from 0 to "+MaxLatency.String(), "latency %v", d)
		}
	}
	if !g.HasLinks() || t.Start == nil {
		return
	}
	at := p + ".network"
	if g.Network == nil {
		at = p + ".latency"
	}
	names := false
	for _, arg := range append(slices.Clone(t.Start.Command), slices.Collect(maps.Values(t.Start.Env))...) {
		for _, ph := range Placeholders(arg) {
			if slices.ContainsFunc(peerLists, func(pre string) bool { return strings.HasPrefix(ph, pre) }) {
				names = true
			}
		}
	}
	if !names {
		v.errorf(at, "a start that names the other nodes by ${group.nodes.P}, ${group.others.P} or ${group.peers.P}: the links stand behind the addresses they give each node",
			"links between the nodes, and a start that names no peer")
	}
}

// hasKey reports whether m has key k.
func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}
