// Package rabbittest starts a private RabbitMQ node for a test (see
// rabbitnode), stopped when the test ends, or one node that the tests of a
// package share.
package rabbittest

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/rabbitnode"
)

// Start starts a node and returns its amqp:// URL. Without the Debian
// package the test is skipped, or fails when the test command asked for it
// (TANDEM_REQUIRE_RABBITMQ=1).
func Start(t testing.TB) string {
	return StartNode(t).URL
}

// StartNode is Start, returning the node itself (to stop it mid-test).
func StartNode(t testing.TB) *rabbitnode.Node {
	t.Helper()
	n := start(t)
	t.Cleanup(func() { n.Stop() })
	return n
}

func start(t testing.TB) *rabbitnode.Node {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs RabbitMQ")
	}
	n, err := rabbitnode.Start(context.Background(), rabbitnode.Options{})
	if errors.Is(err, rabbitnode.ErrNotInstalled) {
		tooltest.Missing(t, "TANDEM_REQUIRE_RABBITMQ", err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Shared is one node for the tests of a package that need a broker but do
// not stop it (a node takes seconds to start): the first test to ask starts
// it, and the package's TestMain stops it after m.Run. Each test leaves the
// node as it found it (its queues deleted).
type Shared struct {
	mu   sync.Mutex
	node *rabbitnode.Node
}

// Node returns the shared node, started at the first call; skipped or
// failed as StartNode is without RabbitMQ.
func (s *Shared) Node(t testing.TB) *rabbitnode.Node {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.node == nil {
		s.node = start(t)
	}
	return s.node
}

// Stop stops the shared node, if one was started.
func (s *Shared) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.node != nil {
		s.node.Stop()
		s.node = nil
	}
}

// Queues lists the queues on a node.
func Queues(t testing.TB, node *rabbitnode.Node) []string {
	t.Helper()
	out, err := exec.Command("rabbitmqctl", "-n", node.Name, "-q", "list_queues", "name").Output()
	if err != nil {
		t.Fatalf("list_queues: %v", err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line = strings.TrimSpace(line); line != "" && line != "name" {
			names = append(names, line)
		}
	}
	return names
}
