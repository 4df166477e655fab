package amqpdrv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/tandem-bench/tandem/internal/rabbittest"
	"github.com/tandem-bench/tandem/rabbitnode"
)

// killedExpires is the queues' expiry in the processes
// TestQueuesExpireWhenTandemIsKilled kills.
const killedExpires = 4 * time.Second

// brokerQueue is a queue as rabbitmqctl lists it.
type brokerQueue struct {
	args                string
	messages, consumers int
}

// listQueues asks the node for its queues with rabbitmqctl, which (unlike
// a passive declare) does not count as a use that would renew a queue's
// expiry.
func listQueues(t *testing.T, node *rabbitnode.Node) map[string]brokerQueue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "rabbitmqctl", "-n", node.Name, "-q", "list_queues", "name", "arguments", "messages", "consumers").Output()
	if err != nil {
		t.Fatalf("list_queues: %v", err)
	}
	qs := map[string]brokerQueue{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || f[0] == "name" {
			continue
		}
		messages, _ := strconv.Atoi(f[2])
		consumers, _ := strconv.Atoi(f[3])
		qs[f[0]] = brokerQueue{args: f[1], messages: messages, consumers: consumers}
	}
	return qs
}

// slowConsumer acks one message at a time, pause apart: a drain that goes
// on long enough to be killed in the middle.
type slowConsumer struct {
	conn   *amqp.Connection
	cancel context.CancelFunc
	done   chan struct{}
}

func startSlow(ctx context.Context, url, queue string, pause time.Duration) (*slowConsumer, error) {
	conn, ch, err := dialChannel(url)
	if err != nil {
		return nil, err
	}
	if err := ch.Qos(1, 0, false); err != nil {
		conn.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	deliveries, err := ch.ConsumeWithContext(ctx, queue, "", false, false, false, false, nil)
	if err != nil {
		cancel()
		conn.Close()
		return nil, err
	}
	c := &slowConsumer{conn: conn, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for d := range deliveries {
			time.Sleep(pause)
			if d.Ack(false) != nil {
				return
			}
		}
	}()
	return c, nil
}

func (c *slowConsumer) Exited() <-chan struct{} { return c.done }
func (c *slowConsumer) Err() error              { return errors.New("the slow consumer ended") }
func (c *slowConsumer) Stop() error {
	c.cancel()
	c.conn.Close()
	<-c.done
	return nil
}

// TestKilledHelper is not a test of its own: it is the process that
// TestQueuesExpireWhenTandemIsKilled starts and kills, a run or a drain
// whose queue expires after killedExpires unused.
func TestKilledHelper(t *testing.T) {
	mode := os.Getenv("TANDEM_KILLED_MODE")
	if mode == "" {
		t.Skip("the process TestQueuesExpireWhenTandemIsKilled kills")
	}
	url, queueType, prefix := os.Getenv("TANDEM_KILLED_URL"), os.Getenv("TANDEM_KILLED_QUEUE_TYPE"), os.Getenv("TANDEM_KILLED_PREFIX")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // it is killed long before
	defer cancel()
	var err error
	switch mode {
	case "run":
		_, err = Run(ctx, Options{URL: url, Queue: prefix, QueueType: queueType, Prefetch: 8, Size: 64, Rate: 200,
			Duration: time.Minute, Expires: killedExpires})
	case "drain":
		// a drain's queue as Drain makes it (declared expiring, filled,
		// then consumed slowly), without Drain's watcher, whose stall
		// limit a starved broker could reach before the kill
		var q *Queue
		if q, err = DeclareExpiring(url, prefix, queueType, killedExpires); err == nil {
			if err = q.Fill(ctx, 500, 64); err == nil {
				if _, err = startSlow(ctx, url, q.Name, 100*time.Millisecond); err == nil { // 50 s of draining
					<-ctx.Done()
					err = ctx.Err()
				}
			}
		}
	}
	t.Fatalf("%s: ended before it was killed: %v", mode, err)
}

// tandem killed (SIGKILL) in the middle of a run and of a drain, on
// classic and quorum queues: tandem cannot delete its queues, and the broker
// deletes them by itself once they have been unused for their expiry
// (x-expires, declared on every queue); while tandem is alive its consumer
// keeps them. A drain whose fill would outlast half the expiry fails
// saying so.
func TestQueuesExpireWhenTandemIsKilled(t *testing.T) {
	node := broker.Node(t)
	type child struct {
		mode, queueType, prefix, queue string
		cmd                            *exec.Cmd
		out                            bytes.Buffer
		done                           chan struct{}
	}
	var children []*child
	for _, mode := range []string{"run", "drain"} {
		for _, qt := range []string{"classic", "quorum"} {
			c := &child{mode: mode, queueType: qt, prefix: "killed-" + mode + "-" + qt, done: make(chan struct{})}
			c.cmd = exec.Command(os.Args[0], "-test.run=^TestKilledHelper$", "-test.count=1", "-test.timeout=2m")
			c.cmd.Env = append(os.Environ(), "TANDEM_KILLED_MODE="+mode, "TANDEM_KILLED_URL="+node.URL,
				"TANDEM_KILLED_QUEUE_TYPE="+qt, "TANDEM_KILLED_PREFIX="+c.prefix)
			c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
			if err := c.cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { c.cmd.Wait(); close(c.done) }()
			t.Cleanup(func() { c.cmd.Process.Kill(); <-c.done })
			children = append(children, c)
		}
	}
	name := func(c *child) string { return c.mode + " on a " + c.queueType + " queue" }
	alive := func(c *child) {
		t.Helper()
		select {
		case <-c.done:
			t.Fatalf("%s: the process ended before it was killed:\n%s", name(c), c.out.String())
		default:
		}
	}
	// Each process has declared its queue, with its expiry, and consumes.
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		qs := listQueues(t, node)
		ready := 0
		for _, c := range children {
			alive(c)
			for q, bq := range qs {
				if strings.HasPrefix(q, c.prefix+"-") && bq.consumers > 0 {
					c.queue = q
					ready++
				}
			}
		}
		if ready == len(children) {
			for _, c := range children {
				args := qs[c.queue].args
				want := fmt.Sprintf(`{"x-expires",%d}`, killedExpires.Milliseconds())
				if !strings.Contains(args, want) || !strings.Contains(args, `{"x-queue-type","`+c.queueType+`"}`) {
					t.Errorf("%s: queue %s declared with %s; want %s and its type", name(c), c.queue, args, want)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 90 s, queues %v", qs)
		}
	}
	// Longer than the expiry with a consumer attached: every queue stays.
	time.Sleep(3 * killedExpires)
	qs := listQueues(t, node)
	for _, c := range children {
		alive(c)
		if bq, ok := qs[c.queue]; !ok || bq.consumers == 0 {
			t.Fatalf("%s: queue %s gone or without a consumer while tandem was alive: %+v", name(c), c.queue, qs)
		} else if c.mode == "drain" && bq.messages == 0 {
			t.Errorf("%s: the drain of %s ended before it was killed", name(c), c.queue)
		}
	}
	for _, c := range children {
		c.cmd.Process.Kill()
		<-c.done
	}
	// The broker deletes them by itself: at once for a classic queue, within
	// a few seconds for a quorum queue, which checks its expiry on a timer.
	start := time.Now()
	for deadline := start.Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		qs := listQueues(t, node)
		var left []string
		for _, c := range children {
			if bq, ok := qs[c.queue]; ok {
				left = append(left, fmt.Sprintf("%s (%s, %d messages)", c.queue, name(c), bq.messages))
			}
		}
		if len(left) == 0 {
			t.Logf("every queue gone %v after the kill", time.Since(start).Round(100*time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after tandem was killed, queues left on the broker: %v", left)
		}
	}

	// The fill must end within half the expiry: 200,000 messages do not go
	// into a queue in 100 ms, and the drain says why it failed instead of
	// filling a queue the broker deletes under it.
	started := false
	_, err := Drain(context.Background(), DrainOptions{URL: node.URL, Queue: "outlived", Prefetch: 1, Size: 1024, Messages: 200_000,
		Stall: 50 * time.Millisecond, Expires: 200 * time.Millisecond}, func(context.Context, string) (Consumer, error) {
		started = true
		return nil, errors.New("started")
	})
	if err == nil || !strings.Contains(err.Error(), "half the queue's expiry") || started {
		t.Errorf("a fill longer than half the expiry: %v (consumer started: %v)", err, started)
	}
	_, err = Drain(context.Background(), DrainOptions{URL: node.URL, Messages: 1, Stall: time.Minute, Expires: time.Minute}, nil)
	if err == nil || !strings.Contains(err.Error(), "quarter of the queue's expiry") {
		t.Errorf("a stall longer than a quarter of the expiry: %v", err)
	}
	if left := rabbittest.Queues(t, node); len(left) > 0 {
		t.Errorf("queues left on the broker: %v", left)
	}
}
