package runner

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/tandem-bench/tandem/internal/splitmix"
	"github.com/tandem-bench/tandem/link"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// peerLinks are the links between a group's nodes (its network:, regions
// and latency), one per ordered pair of nodes and port: the peer lists a
// node's start names (${group.nodes.P}, ${group.others.P},
// ${group.peers.P}) give it each other node's port through its own link,
// so that every pair's conditions are its own. They are opened as the
// nodes' starts are expanded and stay open, through perturbations' kills
// and restarts, until the group stops.
type peerLinks struct {
	ctx     context.Context
	g       *study.Group
	members []study.Member
	seed    uint64

	mu    sync.Mutex
	links map[peerKey]*link.Link
	res   *results.PeerNetwork
	// at is each link's place in res.Links.
	at map[peerKey]int
}

// peerKey names one link: from node index from to node to's port.
type peerKey struct {
	from, to int
	port     string
}

// newPeerLinks returns the (not yet opened) links between g's nodes,
// recorded in res.
func newPeerLinks(ctx context.Context, g *study.Group, seed uint64) *peerLinks {
	if g.Network != nil && g.Network.Seed != 0 {
		seed = g.Network.Seed
	}
	pl := &peerLinks{ctx: ctx, g: g, members: g.Members(), seed: seed, links: map[peerKey]*link.Link{},
		res: &results.PeerNetwork{Seed: seed}, at: map[peerKey]int{}}
	if g.Network.Kernel() {
		pl.res.Via = study.ViaKernel
	}
	return pl
}

// addr is where node from dials node to's port (at upstream, its own
// address): a link of the pair's conditions, opened on first use on to's
// loopback address.
func (pl *peerLinks) addr(from, to int, port, upstream string) (string, error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	k := peerKey{from, to, port}
	if lk, ok := pl.links[k]; ok {
		return lk.Addr(), nil
	}
	f, t := pl.members[from], pl.members[to]
	up, down, err := pl.g.PairConditions(f.Name, t.Name)
	if err != nil {
		return "", fmt.Errorf("the link from %s to %s: %w", f.Name, t.Name, err) // validated: not reached
	}
	lk, err := link.New(pl.ctx, link.Options{Listen: net.JoinHostPort(nodeHost(to), "0"), Upstream: upstream,
		Up: up, Down: down, Seed: max(splitmix.At(pl.seed, uint64(len(pl.links))), 1), Kernel: pl.g.Network.Kernel()})
	if err != nil {
		return "", fmt.Errorf("the link from %s to %s's port %s: %w", f.Name, t.Name, port, err)
	}
	pl.links[k] = lk
	pl.at[k] = len(pl.res.Links)
	pl.res.Links = append(pl.res.Links, results.PeerLink{From: f.Name, To: t.Name, Port: port,
		FromRegion: pl.g.Region(f.Name), ToRegion: pl.g.Region(t.Name), Listen: lk.Addr(), Upstream: upstream,
		Up: linkConditions(up), Down: linkConditions(down)})
	return lk.Addr(), nil
}

// close closes every link and records what crossed each.
func (pl *peerLinks) close() {
	if pl == nil {
		return
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for k, lk := range pl.links {
		lk.Close()
		st := lk.Stats()
		res := &pl.res.Links[pl.at[k]]
		res.MeasuredUp, res.MeasuredDown = linkFlow(st.Up), linkFlow(st.Down)
	}
	pl.links = map[peerKey]*link.Link{}
}

// touching are the links from and to node index n.
func (pl *peerLinks) touching(n int) []*link.Link {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	var out []*link.Link
	for _, k := range pl.sorted() {
		if k.from == n || k.to == n {
			out = append(out, pl.links[k])
		}
	}
	return out
}

// crossing are the links between nodes (by index) on different sides.
func (pl *peerLinks) crossing(side map[int]int) []*link.Link {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	var out []*link.Link
	for _, k := range pl.sorted() {
		if side[k.from] != side[k.to] {
			out = append(out, pl.links[k])
		}
	}
	return out
}

// sorted are the links' keys in order; pl.mu is held.
func (pl *peerLinks) sorted() []peerKey {
	return slices.SortedFunc(maps.Keys(pl.links), func(a, b peerKey) int {
		return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to), cmp.Compare(a.port, b.port))
	})
}

// perturbSides does a disconnect, partition or degrade to every link
// between two sides of a group's split for p.For, then restores them; with
// a height probe it then waits until every node has caught up (the event
// records the last to, and the most any node was behind).
func (r *runner) perturbSides(ctx context.Context, l *live, p *study.Perturbation, ev results.Perturbation, t0 time.Time) results.Perturbation {
	sides, err := l.spec.Group.Split(p.Sides)
	if err != nil {
		ev.Error = err.Error() // validated: not reached
		return ev
	}
	ev.Node, ev.Sides = "", sides
	side := map[int]int{}
	for i, names := range sides {
		for _, name := range names {
			side[slices.IndexFunc(l.nodes, func(n *node) bool { return n.name == name })] = i
		}
	}
	links := l.peers.crossing(side)
	if len(links) == 0 {
		ev.Error = "no link between the sides: the nodes' starts name no peer on another side"
		return ev
	}
	if !disturbPeerLinks(ctx, links, p, &ev, t0) {
		return ev
	}
	caught := ""
	if l.spec.Group.Height != nil {
		if err := r.caughtUp(ctx, l, l.nodes, &ev, t0); err != nil {
			ev.Error = err.Error()
			return ev
		}
		caught = fmt.Sprintf(", every node caught up after %v (%d behind at most when the sides met again)",
			time.Duration(ev.CaughtUpNs).Round(time.Millisecond), ev.BehindAtReady)
	}
	r.progressEvent(Event{Target: l.spec.Name}, "perturbation on target %s: %d links between %s %s for %v%s", l.spec.Name, len(links),
		results.SidesText(sides), pastTense(p.Action), time.Duration(ev.DownNs).Round(time.Millisecond), caught)
	return ev
}

// perturbPeers does a disconnect, partition or degrade to the links from
// and to node n of a group for p.For, then restores them: the node is cut
// from its peers (or they are slowed), while the generator still reaches
// it, unless p.Generator does the same to the generator's path to it (then
// it waits until the node answers through that path again). With a height
// probe it then waits until the node has caught up.
func (r *runner) perturbPeers(ctx context.Context, l *live, n *node, p *study.Perturbation, ev results.Perturbation, t0 time.Time) results.Perturbation {
	links := l.peers.touching(n.index)
	if len(links) == 0 {
		ev.Error = fmt.Sprintf("node %s has no link to a peer: its start names none", n.name)
		return ev
	}
	if p.Generator {
		for _, pl := range n.links {
			links = append(links, pl.Link)
		}
	}
	if !disturbPeerLinks(ctx, links, p, &ev, t0) {
		return ev
	}
	what := "its peers"
	if p.Generator {
		what = "its peers and the generator's path to it"
		back, err := r.answersThrough(ctx, l, n)
		if err != nil {
			ev.Error = fmt.Sprintf("no answer through the generator's path after the %s: %v", p.Action, err)
			return ev
		}
		ev.AnswersAfterNs = int64(back.Sub(t0))
		ev.ReadyAfterNs = ev.AnswersAfterNs
	}
	caught := ""
	if g := l.spec.Group; g.Height != nil {
		if err := r.caughtUp(ctx, l, []*node{n}, &ev, t0); err != nil {
			ev.Error = err.Error()
			return ev
		}
		caught = fmt.Sprintf(", caught up after %v (%d behind when its peers came back)", time.Duration(ev.CaughtUpNs).Round(time.Millisecond), ev.BehindAtReady)
	}
	r.progressEvent(Event{Target: l.spec.Name}, "perturbation on %s: %s %s for %v%s", l.nodeName(n), what, pastTense(p.Action),
		time.Duration(ev.DownNs).Round(time.Millisecond), caught)
	return ev
}

// disturbPeerLinks disturbs links between a group's nodes for p.For (see
// disturbFor) and records in ev how long: the generator reached the nodes
// all along, so they answered as soon as it ended. False if it failed.
func disturbPeerLinks(ctx context.Context, links []*link.Link, p *study.Perturbation, ev *results.Perturbation, t0 time.Time) bool {
	var err error
	if ev.Degraded, err = disturbFor(ctx, links, p); err != nil {
		ev.Error = err.Error()
	}
	ev.DownNs = int64(time.Since(t0))
	ev.AnswersAfterNs, ev.ReadyAfterNs = ev.DownNs, ev.DownNs
	return ev.Error == ""
}

// caughtUp waits, by the group's height probe, until each running node of
// nodes has caught up with the others, and records in ev when the last
// did and the most any was behind.
func (r *runner) caughtUp(ctx context.Context, l *live, nodes []*node, ev *results.Perturbation, t0 time.Time) error {
	for _, n := range nodes {
		if n.proc == nil {
			continue
		}
		at, behind, err := r.catchUp(ctx, l, n, max(l.spec.Ready.Timeout, 2*time.Minute))
		ev.BehindAtReady = max(ev.BehindAtReady, behind)
		if err != nil {
			return err
		}
		ev.CaughtUpNs = max(ev.CaughtUpNs, int64(at.Sub(t0)))
	}
	return nil
}

// pastTense says what a network perturbation did to a node's peers.
func pastTense(action string) string {
	switch action {
	case study.ActionDisconnect:
		return "cut off"
	case study.ActionPartition:
		return "held apart"
	}
	return "degraded"
}
