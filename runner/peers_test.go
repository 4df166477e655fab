package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/study"
)

// A group's nodes name each other: ${group.nodes.P} lists every node's
// own port P, ${group.others.P} all but the node's own, ${group.peers.P}
// as NAME=http://HOST:PORT, ${group.size} the count; each node's
// ${port.P} is the port the lists give it, in every node's view.
func TestGroupPeerPlaceholders(t *testing.T) {
	g := &study.Group{Nodes: []study.GroupNodes{{Role: "voter", Count: 2}, {Role: "learner", Count: 1}}}
	r := &runner{o: Options{}, s: &study.Study{}}
	ge := r.newExpander(t.TempDir())
	ge.groupPorts = map[string]int{}
	es := ge.withNodes(g.Members())
	own := make([]string, len(es))
	for i, e := range es {
		p, err := e.expand("${node.host}:${port.raft}")
		if err != nil {
			t.Fatal(err)
		}
		own[i] = p
	}
	all := strings.Join(own, ",")
	for i, e := range es {
		for tmpl, want := range map[string]string{
			"${group.nodes.raft}": all,
			"${group.size}":       "3",
			"${group.peers.raft}": fmt.Sprintf("voter0=http://%s,voter1=http://%s,learner0=http://%s", own[0], own[1], own[2]),
		} {
			if got, err := e.expand(tmpl); err != nil || got != want {
				t.Errorf("node %d: %s = %q, %v; want %q", i, tmpl, got, err, want)
			}
		}
		var others []string
		for j, o := range own {
			if j != i {
				others = append(others, o)
			}
		}
		if got, _ := e.expand("${group.others.raft}"); got != strings.Join(others, ",") {
			t.Errorf("node %d: others %q; want %q", i, got, strings.Join(others, ","))
		}
	}
	// the group's own expander (setup) sees every node
	if got, err := ge.expand("--initial-cluster=${group.peers.raft}"); err != nil || !strings.HasSuffix(got, "learner0=http://"+own[2]) {
		t.Errorf("setup: %q, %v", got, err)
	}
}
