package study

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/link"
)

// Network is the generator's path to a target's endpoints (docs/network.md):
// conditions for both directions, and up or down to set a key for one
// direction only. On a degrade perturbation it is the conditions during the
// perturbation: its keys replace the target's, the others stay.
type Network struct {
	Delay           *time.Duration     `yaml:"delay" doc:"One-way delay added to every chunk each way (a round trip gains twice it), e.g. 25ms."`
	Jitter          *time.Duration     `yaml:"jitter" doc:"Each chunk's delay spread around delay, by distribution."`
	Distribution    *string            `yaml:"distribution" doc:"How jitter spreads the delay: uniform (default, within delay ± jitter) or normal (standard deviation jitter)."`
	Loss            *float64           `yaml:"loss" want:"a fraction from 0 to below 1, e.g. 0.01 for 1 %" doc:"The chance that a 1,448-byte segment is lost, a fraction from 0 to below 1 (0.01 is 1 %): a lost segment holds its stream for a retransmission timeout."`
	Bandwidth       *string            `yaml:"bandwidth" doc:"A cap each way, shared by the target's connections: 10MB/s, 1.5MiB/s, 100Mbit/s."`
	ResetAfter      *time.Duration     `yaml:"reset_after" doc:"Each connection is reset (RST to both ends) this long after it was opened."`
	ResetAfterBytes *int64             `yaml:"reset_after_bytes" doc:"A connection is reset once this many bytes crossed one direction."`
	Up              *NetworkConditions `yaml:"up" doc:"Keys for the generator-to-target direction only; they replace the shorthand's."`
	Down            *NetworkConditions `yaml:"down" doc:"Keys for the target-to-generator direction only; they replace the shorthand's."`
	Seed            uint64             `yaml:"seed" doc:"Seed of the jitter and loss draws; default the study's seed. Only on a target's network."`
	Via             string             `yaml:"via" doc:"Who does loss and bandwidth: proxy (default: tandem's own link, in user space, anywhere) or kernel (real packets dropped and queued by the kernel, on a veth pair between two network namespaces tandem makes: Linux, as root or with CAP_SYS_ADMIN and CAP_NET_ADMIN; validate says why not where it cannot). Not on a degrade."`
}

// The ways a network's loss and bandwidth are done.
const (
	ViaProxy  = "proxy"
	ViaKernel = "kernel"
)

// Kernel reports whether the kernel does the network's loss and bandwidth.
func (n *Network) Kernel() bool { return n != nil && n.Via == ViaKernel }

// NetworkConditions are one direction's keys of a Network.
type NetworkConditions struct {
	Delay           *time.Duration `yaml:"delay" doc:"One-way delay added to every chunk, e.g. 25ms."`
	Jitter          *time.Duration `yaml:"jitter" doc:"Each chunk's delay spread around delay, by distribution."`
	Distribution    *string        `yaml:"distribution" doc:"uniform (default) or normal."`
	Loss            *float64       `yaml:"loss" want:"a fraction from 0 to below 1, e.g. 0.01 for 1 %" doc:"The chance that a 1,448-byte segment is lost, a fraction from 0 to below 1."`
	Bandwidth       *string        `yaml:"bandwidth" doc:"A cap: 10MB/s, 1.5MiB/s, 100Mbit/s."`
	ResetAfter      *time.Duration `yaml:"reset_after" doc:"Each connection is reset this long after it was opened."`
	ResetAfterBytes *int64         `yaml:"reset_after_bytes" doc:"A connection is reset once this many bytes crossed this direction."`
}

// shorthand is the network's keys for both directions.
func (n *Network) shorthand() NetworkConditions {
	return NetworkConditions{Delay: n.Delay, Jitter: n.Jitter, Distribution: n.Distribution, Loss: n.Loss,
		Bandwidth: n.Bandwidth, ResetAfter: n.ResetAfter, ResetAfterBytes: n.ResetAfterBytes}
}

// apply sets on c each key that nc gives; the first error names the key.
func (nc *NetworkConditions) apply(c *link.Conditions) error {
	if nc == nil {
		return nil
	}
	set := func(p *time.Duration, to *time.Duration) {
		if p != nil {
			*to = *p
		}
	}
	set(nc.Delay, &c.Delay)
	set(nc.Jitter, &c.Jitter)
	set(nc.ResetAfter, &c.ResetAfter)
	if nc.Loss != nil {
		c.Loss = *nc.Loss
	}
	if nc.ResetAfterBytes != nil {
		c.ResetAfterBytes = *nc.ResetAfterBytes
	}
	if nc.Distribution != nil {
		d, err := link.ParseDistribution(*nc.Distribution)
		if err != nil {
			return &networkKeyError{"distribution", err}
		}
		c.Distribution = d
	}
	if nc.Bandwidth != nil {
		b, err := link.ParseBandwidth(*nc.Bandwidth)
		if err != nil {
			return &networkKeyError{"bandwidth", err}
		}
		c.Bandwidth = b
	}
	return nil
}

// networkKeyError is a key of a network that does not read.
type networkKeyError struct {
	key string
	err error
}

func (e *networkKeyError) Error() string { return e.key + ": " + e.err.Error() }
func (e *networkKeyError) Unwrap() error { return e.err }

// Apply lays the network's keys over up and down: the shorthand's on both,
// then up's and down's each on its own direction. A nil network leaves
// them as they are.
func (n *Network) Apply(up, down *link.Conditions) error {
	if n == nil {
		return nil
	}
	both := n.shorthand()
	for _, step := range []struct {
		nc  *NetworkConditions
		dir *link.Conditions
	}{{&both, up}, {&both, down}, {n.Up, up}, {n.Down, down}} {
		if err := step.nc.apply(step.dir); err != nil {
			return err
		}
	}
	return nil
}

// Conditions are the network's two directions, from nothing.
func (n *Network) Conditions() (up, down link.Conditions, err error) {
	err = n.Apply(&up, &down)
	return up, down, err
}

// NeedsLink reports whether the generator's path to the target goes
// through a link: it has a network, or a network perturbation is done to
// it (a link that passes everything until then). On a group with links
// between its nodes a network perturbation is done to a node's peers, and
// to the generator's path only with generator: true.
func (s *Study) NeedsLink(t *Target) bool {
	if t.Network != nil {
		return true
	}
	peers := t.Group.HasLinks()
	for _, sc := range s.Scenarios {
		if len(sc.Targets) > 0 && !slices.Contains(sc.Targets, t.Name) {
			continue
		}
		for _, p := range sc.Perturbations {
			if p.OnPath() && (p.Target == "" || p.Target == t.Name) && (!peers || p.Generator) {
				return true
			}
		}
	}
	return false
}

// OnPath reports whether the perturbation is done to the generator's path
// to its target rather than to the target's process.
func (p *Perturbation) OnPath() bool {
	switch p.Action {
	case ActionDisconnect, ActionPartition, ActionDegrade:
		return true
	}
	return false
}

// network checks a network (at path) of a target or a degrade.
func (v *validator) network(path string, n *Network, onTarget bool) {
	if !onTarget && n.Seed != 0 {
		v.errorf(path+".seed", "seed only on a target's network: a degrade draws from the target's link", "seed %d", n.Seed)
	}
	switch {
	case n.Via != "" && !onTarget:
		v.errorf(path+".via", "via only on a target's or a group's network: a degrade changes the conditions of the path there is", "via %s", n.Via)
	case n.Via != "" && n.Via != ViaProxy && n.Via != ViaKernel:
		v.errorf(path+".via", "proxy or kernel", "via %q", n.Via)
	case n.Via == ViaKernel:
		if err := v.kernelProbe(); err != nil {
			v.errorf(path+".via", "proxy here: the kernel's path needs Linux and the right to make network namespaces, veth pairs, qdiscs and nftables rules (root, or CAP_SYS_ADMIN and CAP_NET_ADMIN)", "via kernel, and this machine refuses it: %v", err)
		}
	}
	both := n.shorthand()
	for _, d := range []struct {
		path string
		nc   *NetworkConditions
	}{{path, &both}, {path + ".up", n.Up}, {path + ".down", n.Down}} {
		v.networkConditions(d.path, d.nc)
	}
}

// networkConditions checks one set of a network's keys.
func (v *validator) networkConditions(path string, nc *NetworkConditions) {
	if nc == nil {
		return
	}
	if nc.Distribution != nil {
		if _, err := link.ParseDistribution(*nc.Distribution); err != nil {
			v.errorf(path+".distribution", "uniform or normal", "distribution %q", *nc.Distribution)
		}
	}
	if nc.Bandwidth != nil {
		if _, err := link.ParseBandwidth(*nc.Bandwidth); err != nil {
			v.errorf(path+".bandwidth", "a rate such as 10MB/s, 1.5MiB/s or 100Mbit/s, at least 1B/s",
				"bandwidth %q", *nc.Bandwidth)
		}
	}
	if nc.Loss != nil && *nc.Loss >= 1 {
		v.errorf(path+".loss", "a fraction from 0 to below 1, e.g. 0.01 for 1 %; a path that loses everything is a partition",
			"loss %v", *nc.Loss)
	}
}

// targetNetwork checks that the generator's path to t can go through a
// link, when it has to: every endpoint a TCP host:port or a URL of one.
func (v *validator) targetNetwork(path string, t *Target) {
	if t.Network != nil {
		v.network(path+".network", t.Network, true)
	}
	if !v.s.NeedsLink(t) {
		return
	}
	at := path + ".network"
	if t.Network == nil {
		at = path // a pass-through link for a network perturbation
	}
	why := "the generator's path to it goes through a link (network, or a disconnect, partition or degrade perturbation)"
	if t.Consumer != nil {
		v.errorf(at, "a target the generator calls: a consumer's own process talks to the broker, not the generator", "a consumer target, and %s", why)
		return
	}
	for _, name := range slices.Sorted(maps.Keys(t.Endpoints)) {
		if err := ProxiableEndpoint(t.Endpoints[name]); err != nil {
			v.errorf(path+".endpoints."+name, "a TCP endpoint a link can stand in front of: host:port, or an http, https, ws, wss, amqp or amqps URL with a host", "%v, and %s", err, why)
		}
	}
}

// proxiedSchemes are the URL schemes whose connections are plain TCP to the
// URL's host and port, which a link can stand in front of.
var proxiedSchemes = []string{"http", "https", "ws", "wss", "amqp", "amqps"}

// placeholderPattern matches one ${…} placeholder.
var placeholderPattern = regexp.MustCompile(`\$\{[^}]*\}`)

// ProxiableEndpoint says why an endpoint (a study's, before its
// placeholders are resolved, or a resolved one) cannot have a link in front
// of it; nil if it can, or if it is a placeholder alone (checked when it is
// resolved). A link needs a TCP host and port: host:port, or a URL of a
// scheme that is TCP to its host (http, https, ws, wss, amqp, amqps).
func ProxiableEndpoint(ep string) error {
	if placeholderPattern.ReplaceAllString(ep, "") == "" && ep != "" {
		return nil // a service's endpoint or an environment variable: resolved at run
	}
	probe := placeholderPattern.ReplaceAllString(ep, "1")
	_, _, err := EndpointAddress(probe)
	return err
}

// EndpointAddress is the TCP host and port an endpoint connects to, and
// its form: a URL with a scheme, or host:port.
func EndpointAddress(ep string) (host, port string, err error) {
	if scheme, _, ok := strings.Cut(ep, "://"); ok {
		if !slices.Contains(proxiedSchemes, strings.ToLower(scheme)) {
			return "", "", fmt.Errorf("scheme %s is not TCP to a host:port a link can forward to", scheme)
		}
		u, err := url.Parse(ep)
		if err != nil {
			return "", "", fmt.Errorf("endpoint %q: %w", ep, err)
		}
		if u.Hostname() == "" {
			return "", "", fmt.Errorf("endpoint %q has no host", ep)
		}
		port = u.Port()
		if port == "" {
			port = defaultPorts[strings.ToLower(u.Scheme)]
		}
		if !validPort(port) {
			return "", "", fmt.Errorf("endpoint %q: port %q is not a TCP port", ep, port)
		}
		return u.Hostname(), port, nil
	}
	host, port, err = net.SplitHostPort(ep)
	if err != nil || host == "" || !validPort(port) {
		return "", "", fmt.Errorf("endpoint %q is neither host:port nor a URL", ep)
	}
	return host, port, nil
}

// validPort reports whether p is a TCP port number, 1 to 65535.
func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535 && strconv.Itoa(n) == p
}

// defaultPorts are the ports of URLs that name none.
var defaultPorts = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443", "amqp": "5672", "amqps": "5671"}
