// Package rabbitnode starts a private RabbitMQ node from the Debian
// package: its own node name, ports below the ephemeral range, data and log
// dirs, epmd and distribution bound to 127.0.0.1. Tests and studies use it;
// a node started here is stopped with Stop, whatever happened in between.
package rabbitnode

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tandem-bench/tandem/target"
)

// startWait bounds a node's start: a busy machine was seen to need more
// than 90 s.
const startWait = 5 * time.Minute

// ErrNotInstalled is returned when rabbitmq-server or rabbitmqctl is not on
// PATH.
var ErrNotInstalled = errors.New("rabbitmq-server is not installed (Debian package rabbitmq-server)")

// Node is a running private node.
type Node struct {
	// Name is the Erlang node name, e.g. tandem20417@localhost.
	Name string
	// URL is the node's amqp:// URL (user guest, which the node allows
	// from loopback only).
	URL string
	// Dir holds the node's data, logs and output (out.log).
	Dir string

	proc     *target.Process
	ownsDir  bool
	stopOnce sync.Once
	stopErr  error
}

// Options says where a node keeps its files and where it runs.
type Options struct {
	// Dir holds the node's data and logs; default (or when the node's user
	// could not reach it) a fresh temporary directory, removed by Stop.
	Dir string
	// CPUs pins the node, e.g. to the cores the load generator does not
	// use; default unpinned.
	CPUs []int
}

// Start starts a node and waits until it accepts connections, within ctx
// and at most startWait (5 minutes).
func Start(ctx context.Context, o Options) (*Node, error) {
	dir := o.Dir
	server, err := exec.LookPath("rabbitmq-server")
	if err == nil {
		_, err = exec.LookPath("rabbitmqctl")
	}
	if err != nil {
		return nil, ErrNotInstalled
	}
	n := &Node{Dir: dir}
	if dir != "" && !traversable(filepath.Dir(dir)) {
		dir = "" // the rabbitmq user could not reach it (e.g. under a 0700 temp dir)
	}
	if dir == "" {
		if n.Dir, err = os.MkdirTemp("", "tandem-rabbit-"); err != nil {
			return nil, err
		}
		n.ownsDir = true
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// The node runs as the rabbitmq user: its dir must be its own and
	// every parent traversable (a MkdirTemp dir is mode 700).
	os.Chmod(n.Dir, 0o755)
	if u, err := user.Lookup("rabbitmq"); err == nil {
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		os.Chown(n.Dir, uid, gid)
	}
	port, dist, err := freePair()
	if err != nil {
		n.cleanup()
		return nil, err
	}
	n.Name = fmt.Sprintf("tandem%d@localhost", port)
	n.URL = fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", port)
	spec := target.Spec{Name: "rabbitmq " + n.Name, Command: []string{server}, Dir: "/", CPUs: o.CPUs, Env: []string{
		"RABBITMQ_NODENAME=" + n.Name, "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT=" + strconv.Itoa(port), "RABBITMQ_DIST_PORT=" + strconv.Itoa(dist),
		"RABBITMQ_MNESIA_BASE=" + filepath.Join(n.Dir, "mnesia"), "RABBITMQ_LOG_BASE=" + filepath.Join(n.Dir, "log"),
		"RABBITMQ_PID_FILE=" + filepath.Join(n.Dir, "pid"), "RABBITMQ_ENABLED_PLUGINS_FILE=" + filepath.Join(n.Dir, "enabled_plugins"),
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}"}}
	if n.proc, err = target.Start(ctx, spec); err != nil {
		n.cleanup()
		return nil, err
	}
	// a node boots in seconds on a quiet machine; rabbitmqctl is an Erlang
	// VM of its own, which a busy machine takes tens of seconds to start
	ctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	for {
		actx, acancel := context.WithTimeout(ctx, time.Minute)
		err := exec.CommandContext(actx, "rabbitmqctl", "-n", n.Name, "-q", "await_startup", "--timeout", "50").Run()
		acancel()
		if err == nil {
			return n, nil
		}
		wait := time.NewTimer(500 * time.Millisecond)
		select {
		case <-n.proc.Done():
			wait.Stop()
			err := n.proc.ExitErr()
			n.Stop()
			return nil, fmt.Errorf("rabbitmq node %s: %w", n.Name, err)
		case <-ctx.Done():
			wait.Stop()
			tail := strings.Join(n.proc.Tail(), "\n    ")
			n.Stop()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("rabbitmq node %s did not start in %v; last output:\n    %s", n.Name, startWait, tail)
			}
			return nil, ctx.Err()
		case <-wait.C:
		}
	}
}

// Done is closed when the node's process exits.
func (n *Node) Done() <-chan struct{} { return n.proc.Done() }

// Stop stops the node (rabbitmqctl stop, then SIGTERM and SIGKILL) and
// removes its dir if Start made it. Later calls do nothing.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() {
		select {
		case <-n.proc.Done():
		default:
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			exec.CommandContext(ctx, "rabbitmqctl", "-n", n.Name, "stop").Run()
			cancel()
		}
		n.stopErr = n.proc.Stop(10 * time.Second)
		n.cleanup()
	})
	return n.stopErr
}

func (n *Node) cleanup() {
	if n.ownsDir {
		os.RemoveAll(n.Dir)
	}
}

// traversable reports whether every directory from dir up to the root may
// be entered by other users.
func traversable(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for d := abs; ; d = filepath.Dir(d) {
		info, err := os.Stat(d)
		if err == nil && info.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

// freePair picks two free loopback ports below the ephemeral range
// (32768+), where a node's ports must be.
func freePair() (int, int, error) {
	for range 200 {
		p := 20000 + rand.IntN(10000)
		if free(p) && free(p+1) {
			return p, p + 1, nil
		}
	}
	return 0, 0, errors.New("rabbitmq: no two free ports below 30000")
}

func free(p int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}
