package amqpdrv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/rabbittest"
	"github.com/tandem-bench/tandem/results"
)

// Publish and consume through a private RabbitMQ node, classic and quorum,
// each ack mode: every message counted, latency recorded, queue removed.
func TestRunAgainstRabbitMQ(t *testing.T) {
	node := broker.Node(t)
	url := node.URL
	for _, c := range []Options{
		{QueueType: "classic", Prefetch: 1, Ack: "each", Messages: 500},
		{QueueType: "classic", Prefetch: 512, Ack: "multiple", Confirm: true, Messages: 5000},
		{QueueType: "quorum", Prefetch: 64, Ack: "each", Confirm: true, Messages: 2000},
		{QueueType: "classic", Prefetch: 100, Ack: "auto", Duration: 500 * time.Millisecond},
	} {
		c.URL = url
		s, err := Run(context.Background(), c)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
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
	// Ctrl-C in the middle of a run: it ends at once with what it counted.
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	start := time.Now()
	s, err := Run(ctx, Options{URL: url, Prefetch: 8, Rate: 1000, Duration: time.Minute})
	if err == nil || s.OK == 0 || time.Since(start) > 5*time.Second {
		t.Errorf("interrupted run: %v after %v, %d consumed", err, time.Since(start), s.OK)
	}
	if left := rabbittest.Queues(t, node); len(left) > 0 {
		t.Errorf("queues left on the broker: %v", left)
	}
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
// next delivery (prefetch 1), so messages are in flight at the cut.
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
			time.AfterFunc(400*time.Millisecond, cancel)
			c.URL, c.Messages, c.Duration = url, 50_000_000, 30*time.Second
			s, err := Run(ctx, c)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v; want the cancellation", err)
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
// the queue's ready count) agrees with the raw loop's own clock, for both
// queue types and the ack modes.
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
		raw, err := StartRaw(ctx, url, q.Name, c.prefetch, c.ack, 1, c.n)
		if err != nil {
			t.Fatal(err)
		}
		// a stall limit for a deadlock, not for a broker that a busy
		// machine (the -race suite, side by side) holds up for seconds
		w, err := q.Watch(ctx, c.n, c.prefetch, c.ack == "auto", 30*time.Second, raw)
		for deadline := time.Now().Add(5 * time.Second); c.ack == "auto" && raw.Acked() < c.n && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond) // the loop works through what the broker sent
		}
		raw.Stop()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if w.Done != c.n || w.First.IsZero() || !w.Last.After(w.First) {
			t.Fatalf("%s: watched %+v", name, w)
		}
		own := raw.At(1).Sub(raw.At(0))
		seen := w.Last.Sub(w.First)
		// The watcher polls every 1 ms at the edges and waits for its probes'
		// confirms: a few ms apart, plus 5 % for round trips on a machine
		// the whole test suite shares.
		d := (seen - own).Abs()
		if c.ack == "auto" {
			// without acks the window closes with the last delivery, which
			// may come before the loop has worked through its buffer
			d = max(seen-own, 0)
		}
		if d > 10*time.Millisecond+own*5/100 {
			t.Errorf("%s: the watcher saw %v, the loop %v (%d polls)", name, seen, own, w.Polls)
		}
		t.Logf("%s: watcher %v, loop %v, %.0f msg/s, %d polls", name, seen, own, float64(c.n)/seen.Seconds(), w.Polls)
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

// The broker stops in the middle of a run and of a drain: both end soon,
// the run with what it counted and the loss recorded, the drain with an
// error; neither hangs.
func TestBrokerStopsMidRun(t *testing.T) {
	for _, drain := range []bool{false, true} {
		node := rabbittest.StartNode(t)
		time.AfterFunc(1500*time.Millisecond, func() { node.Stop() })
		start := time.Now()
		var s results.Sample
		var err error
		if drain {
			s, err = Drain(context.Background(), DrainOptions{URL: node.URL, Prefetch: 1, Size: 64, Messages: 20000, Stall: 5 * time.Second},
				func(ctx context.Context, queue string) (Consumer, error) {
					return StartRaw(ctx, node.URL, queue, 1, "each")
				})
			if err == nil {
				t.Errorf("drain: no error when the broker stopped (%+v)", s)
			}
		} else {
			s, err = Run(context.Background(), Options{URL: node.URL, Prefetch: 64, Rate: 2000, Duration: 20 * time.Second, Timeout: 3 * time.Second})
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
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("drain %v: took %v after the broker stopped at 1.5 s", drain, d)
		}
		t.Logf("drain %v: %v; %d published, %d consumed, errors %v", drain, err, s.Requests, s.OK, s.Errors)
	}
}
