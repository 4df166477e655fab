package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/internal/splitmix"
	"github.com/tandem-bench/tandem/link"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/study"
)

// pathLink is one endpoint's link on the generator's path to a target.
type pathLink struct {
	endpoint string
	*link.Link
	// res is the link's entry in the target's results, where closing it
	// records what crossed it.
	res *results.Link
}

// Measuring a link's round trip when it opens: the target's first-answer
// call, asked linkRTTAsks times after one warm-up ask, through the link and
// straight to the target, all within linkRTTBound.
const (
	linkRTTAsks  = 5
	linkRTTBound = 10 * time.Second
)

// own is the node's endpoints as the target listens on them: what its
// readiness checks ask, never through a link.
func (n *node) own() map[string]string {
	if n.direct != nil {
		return n.direct
	}
	return n.endpoints
}

// openLinks puts a link in front of each endpoint of a started (or
// external) target whose generator path goes through one (its network:,
// or a network perturbation), and points the target's endpoints, where the
// load, compat cases and probes go, at them; the target's own endpoints
// stay for its readiness checks. It measures each link's round trip and
// records the path in the target's results.
func (r *runner) openLinks(ctx context.Context, l *live) error {
	if !r.s.NeedsLink(l.spec) {
		return nil
	}
	up, down, err := l.spec.Network.Conditions()
	if err != nil {
		return fmt.Errorf("target %s: network: %w", l.spec.Name, err) // validated: not reached
	}
	seed := r.s.Seed
	if nw := l.spec.Network; nw != nil && nw.Seed != 0 {
		seed = nw.Seed
	}
	res := &results.Network{Seed: seed, Up: linkConditions(up), Down: linkConditions(down)}
	kernel := l.spec.Network.Kernel()
	if kernel {
		res.Via = study.ViaKernel
	}
	i := 0
	for _, n := range l.nodes {
		direct, via := n.endpoints, map[string]string{}
		for _, name := range slices.Sorted(maps.Keys(direct)) {
			pl, rewritten, err := openLink(ctx, name, direct[name], link.Options{Up: up, Down: down,
				Seed: max(splitmix.At(seed, uint64(i)), 1), Kernel: kernel})
			i++
			if err != nil {
				for _, n := range l.nodes {
					r.closeLinks(n)
				}
				return fmt.Errorf("%s: endpoint %s: %w", l.nodeName(n), name, err)
			}
			n.links = append(n.links, pl)
			via[name] = rewritten
			rl := results.Link{Endpoint: name, Upstream: upstreamOf(direct[name]), Listen: pl.Addr()}
			if l.spec.Group != nil {
				rl.Node = n.name
			}
			res.Links = append(res.Links, rl)
		}
		n.direct, n.endpoints = direct, via
	}
	k := 0
	for _, n := range l.nodes {
		for _, pl := range n.links {
			pl.res = &res.Links[k]
			k++
		}
	}
	r.measureLinks(ctx, l, res)
	l.res.Network = res
	return nil
}

// openLink opens one endpoint's link and rewrites the endpoint to it: its
// port, and its host when the host is an address (a loopback host name is
// kept, so that TLS verifies it and sends it as SNI).
func openLink(ctx context.Context, name, ep string, o link.Options) (*pathLink, string, error) {
	host, port, err := study.EndpointAddress(ep)
	if err != nil {
		return nil, "", err
	}
	listen, keepName, err := listenHost(ctx, host)
	if err != nil {
		return nil, "", err
	}
	o.Listen, o.Upstream = net.JoinHostPort(listen, "0"), net.JoinHostPort(host, port)
	lk, err := link.New(ctx, o)
	if err != nil {
		return nil, "", err
	}
	_, linkPort, _ := net.SplitHostPort(lk.Addr())
	newHost := listen
	if keepName {
		newHost = host
	}
	return &pathLink{endpoint: name, Link: lk}, rewriteHostPort(ep, net.JoinHostPort(newHost, linkPort)), nil
}

// listenHost is the address a link in front of host listens on: host
// itself when it is a loopback address, the loopback address a loopback
// host name resolves to (keepName: the endpoint keeps the name), else
// 127.0.0.1.
func listenHost(ctx context.Context, host string) (listen string, keepName bool, err error) {
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() {
			return ip.String(), false, nil
		}
		return "127.0.0.1", false, nil
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return "", false, fmt.Errorf("resolve %s: %w", host, err)
	}
	slices.SortStableFunc(addrs, func(a, b net.IPAddr) int { // IPv4 first
		return boolInt(a.IP.To4() == nil) - boolInt(b.IP.To4() == nil)
	})
	for _, a := range addrs {
		if a.IP.IsLoopback() {
			return a.IP.String(), true, nil
		}
	}
	return "127.0.0.1", false, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rewriteHostPort replaces an endpoint's host:port (a URL's authority, its
// user info kept, or the endpoint itself) with hostPort.
func rewriteHostPort(ep, hostPort string) string {
	if !strings.Contains(ep, "://") {
		return hostPort
	}
	u, err := url.Parse(ep)
	if err != nil {
		return hostPort // EndpointAddress parsed it: not reached
	}
	u.Host = hostPort
	return u.String()
}

// upstreamOf is an endpoint's host:port, without a URL's user info.
func upstreamOf(ep string) string {
	host, port, err := study.EndpointAddress(ep)
	if err != nil {
		return ""
	}
	return net.JoinHostPort(host, port)
}

// closeLinks closes the node's links and points its endpoints back at the
// target.
func (r *runner) closeLinks(n *node) {
	for _, pl := range n.links {
		if err := pl.Close(); err != nil {
			r.warn(fmt.Sprintf("%s: %v", pl.endpoint, err))
		}
		if pl.res != nil {
			st := pl.Stats()
			pl.res.MeasuredUp, pl.res.MeasuredDown = linkFlow(st.Up), linkFlow(st.Down)
		}
	}
	n.links = nil
	if n.direct != nil {
		n.endpoints, n.direct = n.direct, nil
	}
}

// measureLinks times the round trip of each link whose endpoint the
// target's first-answer call goes to, through the link and straight to the
// target, and says why the others were not timed.
func (r *runner) measureLinks(ctx context.Context, l *live, res *results.Network) {
	fa := l.spec.Ready.FirstAnswer
	epName := ""
	if fa != nil {
		if name, err := r.s.Calls[fa.Call].EndpointName(l.spec); err == nil {
			epName = name
		}
	}
	ctx, cancel := context.WithTimeout(ctx, linkRTTBound)
	defer cancel()
	for i := range res.Links {
		lk := &res.Links[i]
		if fa == nil || lk.Endpoint != epName {
			lk.Note = "not timed: the target's ready.first_answer call does not go to this endpoint"
			if fa == nil {
				lk.Note = "not timed: the target has no ready.first_answer call"
			}
			continue
		}
		n := l.node
		if i := slices.IndexFunc(l.nodes, func(n *node) bool { return n.name == lk.Node }); i >= 0 && lk.Node != "" {
			n = l.nodes[i]
		}
		call := r.s.Calls[fa.Call]
		through, nt := r.timeAsks(ctx, call, n.endpoints[lk.Endpoint])
		direct, nd := r.timeAsks(ctx, call, n.direct[lk.Endpoint])
		if nt == 0 || nd == 0 {
			lk.Note = fmt.Sprintf("not timed: %d of %d asks through the link and %d straight answered", nt, linkRTTAsks, nd)
			continue
		}
		lk.RTTCall, lk.RTTSamples, lk.RTTNs, lk.DirectRTTNs = fa.Call, min(nt, nd), through, direct
	}
	for _, lk := range res.Links {
		on := "target " + l.spec.Name
		if lk.Node != "" {
			on += " node " + lk.Node
		}
		if lk.RTTNs > 0 {
			r.progress("%s: link on %s (%s → %s): round trip of %s %v through it, %v straight (median of %d)", on,
				lk.Endpoint, lk.Listen, lk.Upstream, lk.RTTCall, time.Duration(lk.RTTNs), time.Duration(lk.DirectRTTNs), lk.RTTSamples)
		} else {
			r.progress("%s: link on %s (%s → %s), %s", on, lk.Endpoint, lk.Listen, lk.Upstream, lk.Note)
		}
	}
}

// timeAsks asks call at endpoint once to warm up, then linkRTTAsks times,
// and returns the median time of the asks answered and how many were.
func (r *runner) timeAsks(ctx context.Context, call *study.Call, endpoint string) (int64, int) {
	a, err := driver.NewAsker(ctx, call, endpoint, driver.Options{Timeout: r.s.Defaults.Timeout})
	if err != nil {
		return 0, 0
	}
	_, _, _ = a.Ask(ctx) // a warm-up: the target's and the link's first connection
	var times []float64
	for range linkRTTAsks {
		t0 := time.Now()
		_, res, err := a.Ask(ctx)
		if err != nil || res.Status != "" {
			continue
		}
		times = append(times, float64(time.Since(t0)))
	}
	if len(times) == 0 {
		return 0, 0
	}
	return int64(stats.Summarize(times, false).Median), len(times)
}

// linkFlow is what crossed a direction of a link, as results record it.
func linkFlow(f link.Flow) *results.LinkFlow {
	return &results.LinkFlow{Bytes: f.Bytes, Pieces: f.Pieces, MeanHeldNs: int64(f.MeanHeld()), MaxHeldNs: f.MaxHeldNs,
		Lost: f.Lost, Packets: f.Packets, Overflow: f.Overflow}
}

// linkConditions are a direction's conditions as results record them.
func linkConditions(c link.Conditions) results.LinkConditions {
	out := results.LinkConditions{DelayNs: int64(c.Delay), JitterNs: int64(c.Jitter), Loss: c.Loss,
		BandwidthBytesPerS: c.Bandwidth, ResetAfterNs: int64(c.ResetAfter), ResetAfterBytes: c.ResetAfterBytes}
	if c.Jitter > 0 {
		out.Distribution = c.Distribution.String()
	}
	return out
}

// perturbPath does a disconnect, partition or degrade to the generator's
// path to l for p.For, then restores it, and waits until the target
// answers through it again (its first-answer call, when it has one).
func (r *runner) perturbPath(ctx context.Context, l *live, n *node, p *study.Perturbation, ev results.Perturbation, t0 time.Time) results.Perturbation {
	links := n.links
	if len(links) == 0 {
		ev.Error = "no link on the generator's path to the target" // openLinks made one: not reached
		return ev
	}
	lks := make([]*link.Link, len(links))
	for i, pl := range links {
		lks[i] = pl.Link
	}
	var err error
	if ev.Degraded, err = disturbFor(ctx, lks, p); err != nil {
		ev.Error = err.Error()
	}
	ev.DownNs = int64(time.Since(t0))
	if ev.Error != "" {
		return ev
	}
	back, err := r.answersThrough(ctx, l, n)
	if err != nil {
		ev.Error = fmt.Sprintf("no answer through the link after the %s: %v", p.Action, err)
		return ev
	}
	ev.AnswersAfterNs = int64(back.Sub(t0))
	ev.ReadyAfterNs = ev.AnswersAfterNs
	r.progressEvent(Event{Target: l.spec.Name}, "perturbation on %s: path %s for %v, answering through it after %v", l.nodeName(n),
		p.Action, time.Duration(ev.DownNs).Round(time.Millisecond), time.Duration(ev.AnswersAfterNs).Round(time.Millisecond))
	return ev
}

// answersThrough polls the target's first-answer call through node n's
// link until it answers, within its ready timeout, and returns when it
// did; at once for a target without one.
func (r *runner) answersThrough(ctx context.Context, l *live, n *node) (time.Time, error) {
	fa := l.spec.Ready.FirstAnswer
	if fa == nil {
		return time.Now(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.spec.Ready.Timeout)
	defer cancel()
	a, err := r.askerAt(ctx, l, n.endpoints, fa.Call)
	if err != nil {
		return time.Time{}, err
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, res, err := a.Ask(ctx); err == nil && res.Status == "" {
			return time.Now(), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// disturbFor disturbs links for p.For (see disturb), then restores them,
// even when ctx is cancelled meanwhile.
func disturbFor(ctx context.Context, links []*link.Link, p *study.Perturbation) (*results.Degraded, error) {
	restore, degraded, err := disturb(links, p)
	if err != nil {
		return degraded, err
	}
	sleep(ctx, p.For)
	return degraded, restore()
}

// disturb does a disconnect, partition or degrade to links: Cut, Partition,
// or the perturbation's network laid over each link's own conditions
// (degraded: the first link's, as the event records them). restore undoes
// it: Restore, or each link's own conditions again.
func disturb(links []*link.Link, p *study.Perturbation) (restore func() error, degraded *results.Degraded, err error) {
	base := make([][2]link.Conditions, len(links))
	for i, lk := range links {
		base[i][0], base[i][1] = lk.Conditions()
	}
	restore = func() error {
		var errs []error
		for i, lk := range links {
			if p.Action == study.ActionDegrade {
				errs = append(errs, lk.Set(base[i][0], base[i][1]))
				continue
			}
			lk.Restore()
		}
		return errors.Join(errs...)
	}
	for i, lk := range links {
		switch p.Action {
		case study.ActionDisconnect:
			lk.Cut()
		case study.ActionPartition:
			lk.Partition()
		case study.ActionDegrade:
			up, down := base[i][0], base[i][1]
			if err := p.Network.Apply(&up, &down); err != nil {
				return nil, nil, errors.Join(err, restore()) // validated: not reached
			}
			if i == 0 {
				degraded = &results.Degraded{Up: linkConditions(up), Down: linkConditions(down)}
			}
			if err := lk.Set(up, down); err != nil {
				return nil, nil, errors.Join(err, restore())
			}
		}
	}
	return restore, degraded, nil
}
