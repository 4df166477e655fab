package runner

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tandem-bench/tandem/internal/redact"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/target"
)

// expander resolves a target's placeholders, choosing its ports once.
type expander struct {
	self, workdir, studyDir string
	ports                   map[string]int
	// services are the running services' endpoints.
	services map[string]map[string]string
	// secrets are the values expanded from ${env.*} and the passwords of
	// the URLs expanded: never written or printed (redact).
	secrets []string
	// runSecrets is the run's every secret, of every expander: what the runner
	// prints passes through it.
	runSecrets *secretSet
	// member is the group node the expander resolves ${node.*} for (nil
	// outside a node); groupPorts are the group's ${group.port.*}, one
	// map for the group and each of its nodes.
	member     *study.Member
	groupPorts map[string]int
	// nodes are the expanders of every node of the group (the group's own
	// and each node's share them): ${group.nodes.*}, ${group.others.*}
	// and ${group.peers.*} name the nodes' own ports.
	nodes []*expander
	// peerLink, when links stand between the group's nodes, is where node
	// from dials node to's port (upstream: its own address); a node's peer
	// lists name the others through it. The group's own lists (setup)
	// name every node's own address.
	peerLink func(from, to int, port, upstream string) (string, error)
}

// forNode is an expander for one node of the group e expands for: ports
// of its own, the group's ports shared.
func (e *expander) forNode(m study.Member) *expander {
	return &expander{self: e.self, workdir: e.workdir, studyDir: e.studyDir, ports: map[string]int{}, services: e.services,
		member: &m, groupPorts: e.groupPorts, runSecrets: e.runSecrets, peerLink: e.peerLink}
}

// withNodes makes an expander for every member of a group, each knowing
// all the others (so that a node's peer list can name their ports), and
// gives the group's expander the list too.
func (e *expander) withNodes(members []study.Member) []*expander {
	es := make([]*expander, len(members))
	for i, m := range members {
		es[i] = e.forNode(m)
	}
	e.nodes = es
	for _, n := range es {
		n.nodes = es
	}
	return es
}

// groupList expands ${group.KIND.PORT}: the nodes' addresses on their own
// port PORT (nodes: every node's HOST:PORT; others: every node's but this
// one's; peers: NAME=http://HOST:PORT, as etcd's --initial-cluster has
// them), comma-separated in node order. With links between the nodes, a
// node's list gives each other node's address through its link.
func (e *expander) groupList(kind, port string) (string, error) {
	var parts []string
	for _, n := range e.nodes {
		if kind == "others" && e.member != nil && n.member.Index == e.member.Index {
			continue
		}
		p, err := freePort(n.ports, port)
		if err != nil {
			return "", err
		}
		addr := nodeHost(n.member.Index) + ":" + strconv.Itoa(p)
		if e.peerLink != nil && e.member != nil && n.member.Index != e.member.Index {
			if addr, err = e.peerLink(e.member.Index, n.member.Index, port, addr); err != nil {
				return "", err
			}
		}
		if kind == "peers" {
			addr = n.member.Name + "=http://" + addr
		}
		parts = append(parts, addr)
	}
	return strings.Join(parts, ","), nil
}

// nodeHost is the loopback address of a group's node: 127.0.0.1 for the
// first, 127.0.0.2 for the second, …
func nodeHost(index int) string { return fmt.Sprintf("127.0.0.%d", index+1) }

// freePort chooses a port once per name in ports.
func freePort(ports map[string]int, name string) (int, error) {
	if p, ok := ports[name]; ok {
		return p, nil
	}
	p, err := target.FreePort()
	if err != nil {
		return 0, err
	}
	ports[name] = p
	return p, nil
}

// redact hides every secret the expander has expanded, and any URL
// password, in s: for what tandem writes and prints.
func (e *expander) redact(s string) string {
	for _, v := range e.secrets {
		s = strings.ReplaceAll(s, v, redact.Hidden)
	}
	return redact.URLs(s)
}

// shown is how an argument expanded from tmpl is recorded: as written
// where it used ${env.*} (so it is reproducible without the value), else
// expanded with any URL password hidden.
func (e *expander) shown(tmpl []string, expanded []string) []string {
	out := make([]string, len(expanded))
	for i, v := range expanded {
		if strings.Contains(tmpl[i], "${env.") {
			out[i] = tmpl[i]
		} else {
			out[i] = e.redact(v)
		}
	}
	return out
}

// secret notes an expanded value to keep out of what tandem writes.
func (e *expander) secret(v string) {
	if len(v) >= minSecret && !slices.Contains(e.secrets, v) {
		e.secrets = append(e.secrets, v)
	}
	e.runSecrets.add(v)
}

// secretSet is every secret a run's expanders have expanded, safe for
// concurrent use.
type secretSet struct {
	mu     sync.Mutex
	values []string
}

func (ss *secretSet) add(v string) {
	if ss == nil || len(v) < minSecret {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !slices.Contains(ss.values, v) {
		ss.values = append(ss.values, v)
	}
}

// redact hides every secret in the set, and any URL password, in s.
func (ss *secretSet) redact(s string) string {
	if ss != nil {
		ss.mu.Lock()
		for _, v := range ss.values {
			s = strings.ReplaceAll(s, v, redact.Hidden)
		}
		ss.mu.Unlock()
	}
	return redact.URLs(s)
}

// newExpander is an expander with its own ports and scratch dir.
func (r *runner) newExpander(workdir string) *expander {
	dir := "."
	if r.s.File != "" {
		dir = filepath.Dir(r.s.File)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return &expander{self: r.o.Self, workdir: workdir, studyDir: dir, ports: map[string]int{}, services: r.serviceEndpoints, runSecrets: &r.secrets}
}

func (e *expander) expand(s string) (string, error) {
	var lookupErr error
	out, err := study.Expand(s, func(name string) (string, bool) {
		ns, rest, _ := strings.Cut(name, ".")
		switch {
		case name == "tandem":
			return e.self, e.self == ""
		case name == "workdir":
			return e.workdir, false
		case name == "studydir":
			return e.studyDir, false
		case ns == "services":
			svc, ep, _ := strings.Cut(rest, ".")
			v, ok := e.services[svc][ep]
			if !ok && lookupErr == nil {
				lookupErr = fmt.Errorf("service %s has no running endpoint %s", svc, ep)
			}
			e.urlPassword(v)
			return v, false
		case ns == "port":
			p, err := freePort(e.ports, rest)
			if err != nil {
				lookupErr = err
			}
			return strconv.Itoa(p), false
		case ns == "group" && rest == "size" && e.nodes != nil:
			return strconv.Itoa(len(e.nodes)), false
		case ns == "group" && e.nodes != nil && (strings.HasPrefix(rest, "nodes.") || strings.HasPrefix(rest, "others.") || strings.HasPrefix(rest, "peers.")):
			kind, port, _ := strings.Cut(rest, ".")
			v, err := e.groupList(kind, port)
			if err != nil {
				lookupErr = err
			}
			return v, false
		case ns == "group" && e.groupPorts != nil && strings.HasPrefix(rest, "port."):
			p, err := freePort(e.groupPorts, strings.TrimPrefix(rest, "port."))
			if err != nil {
				lookupErr = err
			}
			return strconv.Itoa(p), false
		case ns == "node" && e.member != nil:
			switch rest {
			case "index":
				return strconv.Itoa(e.member.Index), false
			case "name":
				return e.member.Name, false
			case "role":
				return e.member.Role, false
			case "host":
				return nodeHost(e.member.Index), false
			}
		case ns == "env":
			v, ok := os.LookupEnv(rest)
			if !ok {
				lookupErr = fmt.Errorf("environment variable %s is not set", rest)
			}
			e.secret(v)
			return v, false
		}
		return "", true
	})
	if lookupErr != nil {
		return "", lookupErr
	}
	e.urlPassword(out)
	return out, err
}

// urlPassword notes the password of s, if s is a URL with one (an
// endpoint's, a metrics URL's, written out in the study or expanded): it
// is hidden wherever it appears, not only inside its URL.
func (e *expander) urlPassword(s string) {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			e.secret(pw)
		}
	}
}

func (e *expander) all(in []string) ([]string, error) {
	out := make([]string, len(in))
	for i, s := range in {
		var err error
		if out[i], err = e.expand(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// minSecret is the shortest value redact hides wherever it appears: a
// shorter one (a port, a flag such as 1) would mangle every message it
// occurs in, and arguments that use ${env.*} are recorded as written
// anyway (shown).
const minSecret = 6
