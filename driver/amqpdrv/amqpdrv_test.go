package amqpdrv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/amqpconf"
	"github.com/tandem-bench/tandem/internal/rabbittest"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
)

// Publish and consume through a private RabbitMQ node, classic and quorum,
// each ack mode: every message counted (as the run went, too), latency
// recorded, queue removed.
func TestRunAgainstRabbitMQ(t *testing.T) {
	node := broker.Node(t)
	url := node.URL
	for _, c := range []Options{
		{QueueType: "classic", Prefetch: 1, Ack: "each", Messages: 500},
		{QueueType: "classic", Prefetch: 512, Ack: "multiple", Confirm: true, Messages: 5000},
		{QueueType: "quorum", Prefetch: 64, Ack: "each", Confirm: true, Messages: 2000},
		{QueueType: "classic", Prefetch: 100, Ack: "auto", Duration: 500 * time.Millisecond},
	} {
		c.URL, c.Live = url, &load.Live{}
		s, err := Run(context.Background(), c)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if c.Live.Sent.Load() != s.Requests || c.Live.OK.Load() != s.OK || c.Live.Errors.Load() != failedCount(s) {
			t.Errorf("%s prefetch %d ack %s: counted live %d published, %d ok, %d failed; the sample %d, %d, %d", c.QueueType, c.Prefetch, c.Ack,
				c.Live.Sent.Load(), c.Live.OK.Load(), c.Live.Errors.Load(), s.Requests, s.OK, failedCount(s))
		}
		if s.OK != s.Requests || s.Requests == 0 || (c.Messages > 0 && s.Requests != c.Messages) || len(s.Errors) != 0 {
			t.Errorf("%s prefetch %d ack %s: published %d, consumed %d, errors %v", c.QueueType, c.Prefetch, c.Ack, s.Requests, s.OK, s.Errors)
		}
		if s.Unit != "message" || s.UnitsPerS <= 0 || s.LatencyNs.P50 <= 0 || s.HDR == "" {
			t.Errorf("%s: unit %s, %v msg/s, p50 %d", c.QueueType, s.Unit, s.UnitsPerS, s.LatencyNs.P50)
		}
	}
	if _, err := Run(context.Background(), Options{URL: "amqp://guest:secret@127.0.0.1:1/", Messages: 1}); err == nil {
		t.Error("a closed port was reached")
	} else if got := err.Error(); strings.Contains(got, "secret") {
		t.Errorf("the error shows the password: %s", got)
	}
	if _, err := Run(context.Background(), Options{URL: url, QueueType: "stream", Messages: 1}); err == nil {
		t.Error("queue type stream was accepted")
	}
	// Ctrl-C in the middle of a run (once a message was consumed): it
	// ends at once with what it counted.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := &load.Live{}
	cancelled := cancelOnce(ctx, cancel, func() bool { return live.OK.Load() > 0 })
	s, err := Run(ctx, Options{URL: url, Prefetch: 8, Rate: 1000, Duration: time.Minute, Live: live})
	if at := <-cancelled; at.IsZero() || !errors.Is(err, context.Canceled) || s.OK == 0 || time.Since(at) > 30*time.Second {
		t.Errorf("interrupted run: %v, %v after the cancel (%v), %d consumed", err, time.Since(at), at, s.OK)
	}
	if left := rabbittest.Queues(t, node); len(left) > 0 {
		t.Errorf("queues left on the broker: %v", left)
	}
}

// cancelOnce calls cancel once ready says so (polled every millisecond,
// for at most a minute) and sends when (zero if it never did) on the
// channel it returns.
func cancelOnce(ctx context.Context, cancel context.CancelFunc, ready func() bool) <-chan time.Time {
	at := make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(time.Minute); ctx.Err() == nil && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if ready() {
				cancel()
				at <- time.Now()
				return
			}
		}
		at <- time.Time{}
	}()
	return at
}

// failedCount adds up a sample's failures.
func failedCount(s results.Sample) int64 {
	var n int64
	for _, v := range s.Errors {
		n += v
	}
	return n
}

// A run cut short (Ctrl-C) while messages are in flight: those are
// unfinished, not failures; every message is ok, failed or unfinished,
// and requests are the finished ones (ok + failed). The publisher (no
// rate, pipelined) outruns a consumer that waits for each ack before its
// next delivery (prefetch 1): the cut comes once a message is consumed
// and a hundred more are published.
func TestInterruptedRunLeavesUnfinished(t *testing.T) {
	url := broker.Node(t).URL
	for _, c := range []Options{
		{Ack: "each", Prefetch: 1},
		{Ack: "each", Prefetch: 1, Confirm: true},
		{Ack: "multiple", Prefetch: 64},
		{Ack: "auto", Prefetch: 1, QueueType: "quorum"},
	} {
		t.Run(fmt.Sprintf("%s/p%d/confirm=%v", c.Ack, c.Prefetch, c.Confirm), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c.URL, c.Messages, c.Duration, c.Live = url, 50_000_000, time.Minute, &load.Live{}
			cancelled := cancelOnce(ctx, cancel, func() bool {
				ok := c.Live.OK.Load()
				return ok > 0 && c.Live.Sent.Load() >= ok+100
			})
			s, err := Run(ctx, c)
			if at := <-cancelled; at.IsZero() || !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, cancelled at %v; want the cancellation once the run was under way", err, at)
			}
			if len(s.Errors) != 0 || s.Requests != s.OK+failedCount(s) {
				t.Errorf("requests %d, ok %d, errors %v: an interruption is no failure, and requests are ok + failed", s.Requests, s.OK, s.Errors)
			}
			if s.Unfinished <= 0 || s.OK < 0 {
				t.Errorf("ok %d, unfinished %d: the messages in flight at the cut are unfinished", s.OK, s.Unfinished)
			}
		})
	}
}

// The watcher's drain window (first delivery to last ack, seen only from
// the queue's ready count) is the raw loop's, for both queue types and the
// ack modes, by what orders them on any machine: both lie within the run;
// the window opens before the loop has acked half the messages; and
// (acking) it closes only after the loop has acked all but its last ack's
// worth (1, or a batch with ack multiple): the broker holds the probes
// until that last ack is sent. How far apart the two clocks read is the
// machine's, logged, not held to a bound.
func TestWatchAgreesWithTheLoop(t *testing.T) {
	url := broker.Node(t).URL
	ctx := context.Background()
	for _, c := range []struct {
		queueType, ack string
		prefetch       int
		n              int64
	}{
		{"classic", "each", 1, 3000},
		{"classic", "each", 512, 30000},
		{"classic", "multiple", 512, 30000},
		{"quorum", "each", 64, 10000},
		{"classic", "auto", 100, 20000},
	} {
		name := fmt.Sprintf("%s/%s/p%d", c.queueType, c.ack, c.prefetch)
		q, err := Declare(url, "watch", c.queueType)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Fill(ctx, c.n, 256); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, err := q.Ready(); err != nil || int64(got) != c.n {
			t.Fatalf("%s: %d ready after the fill (%v); want %d", name, got, err, c.n)
		}
		last := int64(1) // what the loop's last ack covers
		if c.ack == "multiple" {
			last = int64(amqpconf.AckBatch(c.prefetch))
		}
		begun := time.Now()
		// marks: the first ack, half, all but the last ack's worth, all
		raw, err := StartRaw(ctx, url, q.Name, c.prefetch, c.ack, 1, c.n/2, c.n-last, c.n)
		if err != nil {
			t.Fatal(err)
		}
		// a stall limit for a deadlock, not for a broker that a busy
		// machine (the -race suite, side by side) holds up for seconds
		w, err := q.Watch(ctx, c.n, c.prefetch, c.ack == "auto", 30*time.Second, raw)
		watched := time.Now()
		// the loop works through what the broker sent (with auto, the
		// window may close before it has)
		for deadline := time.Now().Add(time.Minute); raw.Acked() < c.n && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		raw.Stop()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if raw.Acked() < c.n {
			t.Fatalf("%s: the loop took %d of %d messages in a minute", name, raw.Acked(), c.n)
		}
		if w.Done != c.n || w.First.IsZero() || !w.Last.After(w.First) || w.First.Before(begun) || w.Last.After(watched) {
			t.Fatalf("%s: watched %+v; want a window within the run (%v to %v)", name, w, begun, watched)
		}
		first, half, most, all := raw.At(0), raw.At(1), raw.At(2), raw.At(3)
		if first.Before(begun) || !half.After(first) || most.Before(half) || all.Before(most) {
			t.Fatalf("%s: the loop's marks %v, %v, %v, %v; want them in order after %v", name, first, half, most, all, begun)
		}
		if !w.First.Before(half) {
			t.Errorf("%s: the watcher opened its window %v after the loop had acked half the messages", name, w.First.Sub(half))
		}
		if c.ack != "auto" && !w.Last.After(most) {
			t.Errorf("%s: the watcher closed its window %v before the loop had acked all but its last %d", name, most.Sub(w.Last), last)
		}
		own, seen := all.Sub(first), w.Last.Sub(w.First)
		t.Logf("%s: watcher %v, loop %v (%+v apart), %.0f msg/s, %d polls", name, seen, own, seen-own, float64(c.n)/seen.Seconds(), w.Polls)
		if err := q.Delete(); err != nil {
			t.Error(err)
		}
	}
}

// idle is a consumer that never consumes, or one that exits at once.
type idle struct {
	done chan struct{}
	err  error
}

func (c *idle) Exited() <-chan struct{} { return c.done }
func (c *idle) Err() error              { return c.err }
func (c *idle) Stop() error             { return nil }

// Drain fills, times and deletes; a consumer that dies or stands still
// fails the run, bounded, and the queue is gone either way.
func TestDrain(t *testing.T) {
	url := broker.Node(t).URL
	ctx := context.Background()
	var queues []string
	// a drain that works has 3 s to show progress (a broker on a busy
	// machine may stand still for a moment); the ones that do not, 300 ms
	o := DrainOptions{URL: url, Queue: "drain", QueueType: "quorum", Prefetch: 128, Size: 100, Messages: 5000, Stall: 3 * time.Second}
	s, err := Drain(ctx, o, func(ctx context.Context, queue string) (Consumer, error) {
		queues = append(queues, queue)
		return StartRaw(ctx, url, queue, 128, "each")
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 5000 || s.OK != 5000 || s.UnitsPerS <= 0 || s.DurationNs <= 0 || s.Unit != "message" {
		t.Errorf("drain: %+v", s)
	}
	o.Stall = 300 * time.Millisecond
	exited := &idle{done: make(chan struct{}), err: errors.New("exit status 3")}
	close(exited.done)
	for _, c := range []struct {
		consumer *idle
		want     string
	}{
		{&idle{done: make(chan struct{})}, "did not move for 300ms: 5000 of 5000"},
		{exited, "consumer: exit status 3"},
	} {
		start := time.Now()
		_, err := Drain(ctx, o, func(ctx context.Context, queue string) (Consumer, error) {
			queues = append(queues, queue)
			return c.consumer, nil
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v; want %q", err, c.want)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("a failed drain took %v", d)
		}
	}
	conn, err := dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, name := range queues {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.QueueDeclarePassive(name, false, false, false, false, nil); err == nil {
			t.Errorf("queue %s is still there", name)
			ch.Close()
		}
	}
}

// The broker stops in the middle of a run and of a drain (once a message
// was consumed): both end, the run with what it counted and the loss
// recorded, the drain with an error; neither hangs.
func TestBrokerStopsMidRun(t *testing.T) {
	for _, drain := range []bool{false, true} {
		node := rabbittest.StartNode(t)
		stopped := make(chan time.Time, 1)
		// stopOnce stops the node once consumed says a message was
		// consumed (polled every millisecond, for at most a minute)
		stopOnce := func(consumed func() bool) {
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if consumed() {
					stopped <- time.Now()
					node.Stop()
					return
				}
			}
			stopped <- time.Time{}
		}
		var s results.Sample
		var err error
		if drain {
			var consumer atomic.Pointer[RawConsumer]
			go stopOnce(func() bool { raw := consumer.Load(); return raw != nil && raw.Acked() > 0 })
			s, err = Drain(context.Background(), DrainOptions{URL: node.URL, Prefetch: 1, Size: 64, Messages: 20000, Stall: 5 * time.Second},
				func(ctx context.Context, queue string) (Consumer, error) {
					raw, err := StartRaw(ctx, node.URL, queue, 1, "each")
					if err == nil {
						consumer.Store(raw)
					}
					return raw, err
				})
			if err == nil {
				t.Errorf("drain: no error when the broker stopped (%+v)", s)
			}
		} else {
			live := &load.Live{}
			go stopOnce(func() bool { return live.OK.Load() > 0 })
			s, err = Run(context.Background(), Options{URL: node.URL, Prefetch: 64, Rate: 2000, Duration: time.Minute, Timeout: 3 * time.Second, Live: live})
			if err == nil && len(s.Errors) == 0 {
				t.Errorf("run: the broker stopped and nothing was recorded: %+v", s)
			}
			if s.Requests == 0 || s.OK == 0 {
				t.Errorf("run: what was done before the stop is lost: %+v", s)
			}
			if s.Requests != s.OK+failedCount(s) || s.Unfinished != 0 {
				t.Errorf("run: requests %d, ok %d, errors %v, unfinished %d: the lost messages are failures (closed), counted in requests",
					s.Requests, s.OK, s.Errors, s.Unfinished)
			}
		}
		at := <-stopped
		if at.IsZero() {
			t.Fatalf("drain %v: nothing was consumed within a minute (%v)", drain, err)
		}
		// a hang guard: stopping the node takes seconds, the run ends
		// within its timeout after that, the drain within its stall
		if d := time.Since(at); d > 90*time.Second {
			t.Errorf("drain %v: ended %v after the broker began to stop", drain, d)
		}
		t.Logf("drain %v: %v; %d published, %d consumed, errors %v", drain, err, s.Requests, s.OK, s.Errors)
	}
}
