// Package rabbittest starts a private RabbitMQ node for tests: its own
// node name, ports below the ephemeral range, data and log dirs, bound to
// 127.0.0.1, stopped when the test ends.
package rabbittest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Start starts a node and returns its amqp:// URL. Without the Debian
// package the test is skipped, or fails when the test command asked for it
// (TANDEM_REQUIRE_RABBITMQ=1).
func Start(t testing.TB) string {
	t.Helper()
	server, err := exec.LookPath("rabbitmq-server")
	if err == nil {
		_, err = exec.LookPath("rabbitmqctl")
	}
	if err != nil {
		if os.Getenv("TANDEM_REQUIRE_RABBITMQ") == "1" {
			t.Fatalf("rabbitmq-server is not installed: %v", err)
		}
		t.Skip("rabbitmq-server is not installed (./test.sh installs the Debian package)")
	}
	// The node runs as the rabbitmq user: its dirs must be its own and
	// every parent traversable.
	dir, err := os.MkdirTemp("", "tandem-rabbit-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	if u, err := user.Lookup("rabbitmq"); err == nil {
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		os.Chown(dir, uid, gid)
	}
	port, dist := freePair(t)
	node := fmt.Sprintf("tandem%d@localhost", port)
	cmd := exec.Command(server)
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(),
		"RABBITMQ_NODENAME="+node, "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT="+strconv.Itoa(port), "RABBITMQ_DIST_PORT="+strconv.Itoa(dist),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(dir, "mnesia"), "RABBITMQ_LOG_BASE="+filepath.Join(dir, "log"),
		"RABBITMQ_PID_FILE="+filepath.Join(dir, "pid"), "RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(dir, "enabled_plugins"),
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}")
	out, _ := os.Create(filepath.Join(dir, "out.log"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		exec.Command("rabbitmqctl", "-n", node, "stop").Run()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	})
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if exec.Command("rabbitmqctl", "-n", node, "-q", "await_startup", "--timeout", "5").Run() == nil {
			return fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", port)
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "out.log"))
			t.Fatalf("rabbitmq node %s did not start in 90 s:\n%s", node, log)
		}
	}
}

// freePair picks two free loopback ports below the ephemeral range
// (32768+), where a node's ports must be.
func freePair(t testing.TB) (int, int) {
	for range 200 {
		p := 20000 + rand.IntN(10000)
		if free(p) && free(p+1) {
			return p, p + 1
		}
	}
	t.Fatal("no two free ports below 30000")
	return 0, 0
}

func free(p int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}
