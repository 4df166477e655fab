// Package rabbittest starts a private RabbitMQ node for a test (see
// rabbitnode), stopped when the test ends.
package rabbittest

import (
	"context"
	"errors"
	"os/exec"
	"strings"
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
	t.Cleanup(func() { n.Stop() })
	return n
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
