// Package rabbittest starts a private RabbitMQ node for a test (see
// rabbitnode), stopped when the test ends.
package rabbittest

import (
	"context"
	"errors"
	"os"
	"testing"

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
	n, err := rabbitnode.Start(context.Background(), "")
	if errors.Is(err, rabbitnode.ErrNotInstalled) {
		if os.Getenv("TANDEM_REQUIRE_RABBITMQ") == "1" {
			t.Fatal(err)
		}
		t.Skip(err.Error() + "; ./test.sh installs it")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Stop() })
	return n
}
