package amqpdrv

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tandem-bench/tandem/internal/amqpconf"
	"github.com/tandem-bench/tandem/results"
)

// DefaultExpires is the expiry (the x-expires argument) of every queue
// tandem declares unless its options give another: the broker deletes a
// queue that has been unused this long, so a tandem that is killed
// (SIGKILL, a crash) before it deletes its queue leaves the queue and its
// messages behind for no longer. It works alike for classic and quorum
// queues (auto-delete and exclusive do not: quorum queues refuse both).
//
// RabbitMQ counts a queue as used while it has a consumer and when it is
// declared or read with basic.get; publishing into it does not count, nor
// (for a quorum queue, as measured on RabbitMQ 3.10) does a passive
// declare, so polling cannot keep a queue alive. A run's consumer is
// attached right after the declare. A drain's queue has none while it is
// filled and until its consumer takes the first message: Drain bounds the
// fill at half the expiry and the wait for the first delivery (its stall
// timeout) at a quarter, so a drain either ends its fill in time or fails
// saying so, and the queue never expires under it. Ten minutes lets a
// drain fill millions of messages and leaves a killed run's queue on the
// broker for ten minutes at most (RabbitMQ deletes it shortly after).
const DefaultExpires = 10 * time.Minute

// defaultStall is how long a drain's queue may stand still before the
// drain fails, unless DrainOptions.Stall says otherwise.
const defaultStall = 10 * time.Second

// Consumer drains the queue it was started on until it is stopped.
type Consumer interface {
	// Exited is closed when the consumer ended on its own.
	Exited() <-chan struct{}
	// Err says why it ended on its own.
	Err() error
	// Stop ends it.
	Stop() error
}

// DrainOptions describes one drain run.
type DrainOptions struct {
	// URL is the broker's amqp:// URL.
	URL string
	// Queue prefixes the queue's name; QueueType is classic or quorum.
	Queue, QueueType string
	// Prefetch is the consumer's window, which the watcher relies on to
	// see the last ack (see Watch).
	Prefetch int
	// AutoAck says the consumer does not ack (the drain ends with the last
	// delivery).
	AutoAck bool
	// Size is each message's body in bytes.
	Size int
	// Messages is how many the queue is filled with.
	Messages int64
	// Stall fails the run when the queue does not move for this long;
	// default 10 s.
	Stall time.Duration
	// Expires is the queue's expiry (x-expires, see DefaultExpires);
	// default DefaultExpires, or four times Stall if that is longer. The
	// fill must end within half of it and Stall be at most a quarter of
	// it, so the queue cannot expire before the consumer takes from it.
	Expires time.Duration
}

// Drain declares a fresh queue, fills it with o.Messages (every one
// confirmed by the broker), starts a consumer on it and times the drain
// from the first delivery to the last ack by watching the queue, so the
// consumer needs no instrumenting. The queue is deleted afterwards,
// whatever happens, and expires (see DefaultExpires) should the process be
// killed first; a fill that takes longer than half the expiry fails the
// drain. The sample counts messages; its window is the drain.
func Drain(ctx context.Context, o DrainOptions, start func(ctx context.Context, queue string) (Consumer, error)) (results.Sample, error) {
	s := results.Sample{Unit: "message", Errors: map[string]int64{}}
	if o.Messages <= 0 {
		return s, errors.New("a drain needs a message count")
	}
	stall := o.Stall
	if stall <= 0 {
		stall = defaultStall
	}
	expires := o.Expires
	if expires <= 0 {
		expires = max(DefaultExpires, 4*stall)
	}
	if stall > expires/4 {
		return s, fmt.Errorf("drain: stall %v is more than a quarter of the queue's expiry %v: the queue could expire before the consumer takes from it", stall, expires)
	}
	q, err := DeclareExpiring(o.URL, o.Queue, o.QueueType, expires)
	if err != nil {
		return s, err
	}
	defer q.Delete()
	// Publishing does not keep the queue alive: the fill must end well
	// before the queue could expire.
	fillCtx, cancel := context.WithTimeout(ctx, expires/2)
	err = q.Fill(fillCtx, o.Messages, o.Size)
	cancel()
	if err != nil {
		if ctx.Err() == nil && fillCtx.Err() != nil {
			return s, fmt.Errorf("drain: filling %d messages took longer than %v, half the queue's expiry (x-expires %v), which a queue without a consumer must not reach; drain fewer messages: %w",
				o.Messages, expires/2, expires, err)
		}
		return s, err
	}
	s.Requests = o.Messages
	c, err := start(ctx, q.Name)
	if err != nil {
		return s, err
	}
	w, werr := q.Watch(ctx, o.Messages, o.Prefetch, o.AutoAck, stall, c)
	if err := c.Stop(); err != nil && werr == nil {
		werr = err
	}
	if werr != nil {
		s.OK = w.Done
		return s, werr
	}
	s.OK = o.Messages
	s.DurationNs = w.Last.Sub(w.First).Nanoseconds()
	if s.DurationNs > 0 {
		s.Throughput = float64(s.OK) / (float64(s.DurationNs) / 1e9)
		s.UnitsPerS, s.AchievedRate = s.Throughput, s.Throughput
	}
	return s, nil
}

// Watched is what watching a drain saw.
type Watched struct {
	// First is when the queue first held fewer than all its messages (the
	// first delivery), Last when the last was acked.
	First, Last time.Time
	// Done is how many messages left the queue.
	Done int64
	// Polls is how many times the queue was asked.
	Polls int
}

// Watch times the drain of a queue holding n messages by asking the broker
// how many are ready: often at the edges (1 ms), less in between (20 ms,
// so the watcher does not load the broker it measures). The window opens
// at the first poll that sees fewer than n. When none is ready, up to
// prefetch are still delivered and not acked, which a passive declare does
// not see; so the watcher then publishes prefetch more messages (and waits
// for their confirms): each is delivered only when an ack frees a slot in
// the consumer's window, so the last of them leaves the queue with the ack
// of the last original message (for a consumer that acks in order, as a
// single consumer does; if every original was acked before the probes
// were confirmed, the window closes at the first poll after the confirms). With
// autoAck the window closes when none is ready. A consumer that exits, a
// queue that stands still for stall, or ctx ends the watch with an error.
func (q *Queue) Watch(ctx context.Context, n int64, prefetch int, autoAck bool, stall time.Duration, c Consumer) (Watched, error) {
	var w Watched
	if stall <= 0 {
		stall = defaultStall
	}
	const fast, slow = time.Millisecond, 20 * time.Millisecond
	var (
		ready  = n
		moved  = time.Now()
		probed bool
	)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return w, ctx.Err()
		case <-c.Exited():
			err := c.Err()
			if err == nil {
				err = errors.New("the consumer exited")
			}
			return w, fmt.Errorf("consumer: %w (%d of %d messages left the queue)", err, w.Done, n)
		case <-timer.C:
		}
		got, err := q.Ready()
		now := time.Now()
		w.Polls++
		if err != nil {
			return w, err
		}
		if int64(got) != ready {
			ready, moved = int64(got), now
		}
		if !probed {
			w.Done = n - ready
			if ready < n && w.First.IsZero() {
				w.First = now
			}
		}
		switch {
		case probed && ready == 0:
			w.Last = now
			return w, nil
		case !probed && ready == 0 && autoAck:
			w.Last = now
			return w, nil
		case !probed && ready == 0:
			if prefetch > 0 {
				if err := q.probe(ctx, prefetch); err != nil {
					return w, err
				}
				ready = int64(prefetch)
			}
			probed = true
			if prefetch <= 0 {
				w.Last = now
				return w, nil
			}
		case now.Sub(moved) > stall:
			return w, fmt.Errorf("the queue did not move for %v: %d of %d messages ready", stall, ready, n)
		}
		next := fast
		if !w.First.IsZero() && !probed {
			// time to empty at the rate so far
			rate := float64(n-ready) / now.Sub(w.First).Seconds()
			if rate > 0 && time.Duration(float64(ready)/rate*float64(time.Second)) > 5*slow {
				next = slow
			}
		}
		timer.Reset(next)
	}
}

// probe publishes k empty messages and waits for the broker's confirms:
// until then a count may not include them (a quorum queue enqueues through
// its log), and the watcher would see an empty queue too soon.
func (q *Queue) probe(ctx context.Context, k int) error { return q.Fill(ctx, int64(k), 0) }

// ConsumeEnv runs the raw loop as a consumer command does: on the broker
// and queue that getenv names (TANDEM_AMQP_URL, TANDEM_QUEUE,
// TANDEM_PREFETCH, TANDEM_ACK), until ctx ends (nil) or the loop fails.
// `tandem consume` is this, so the raw loop runs in a process of its own
// like any consumer it is compared with.
func ConsumeEnv(ctx context.Context, getenv func(string) string) error {
	url, queue := getenv("TANDEM_AMQP_URL"), getenv("TANDEM_QUEUE")
	if url == "" || queue == "" {
		return errors.New("consume: TANDEM_AMQP_URL and TANDEM_QUEUE must name the broker and the queue")
	}
	prefetch, err := strconv.Atoi(getenv("TANDEM_PREFETCH"))
	if err != nil || prefetch < 1 {
		return fmt.Errorf("consume: TANDEM_PREFETCH %q: want a positive integer", getenv("TANDEM_PREFETCH"))
	}
	ack, err := amqpconf.Ack(getenv("TANDEM_ACK"))
	if err != nil {
		return fmt.Errorf("consume: TANDEM_ACK: %w", err)
	}
	c, err := StartRaw(ctx, url, queue, prefetch, ack)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return c.Stop()
	case <-c.Exited():
		c.Stop()
		return c.Err()
	}
}
