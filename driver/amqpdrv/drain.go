package amqpdrv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/tandem-bench/tandem/internal/amqpconf"
	"github.com/tandem-bench/tandem/internal/redact"
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

// queueArgs are the arguments tandem declares a queue with: its type and
// its expiry in milliseconds.
func queueArgs(queueType string, expires time.Duration) amqp.Table {
	return amqp.Table{"x-queue-type": queueType, "x-expires": max(expires.Milliseconds(), 1)}
}

// Queue is a queue declared for one run, with the connection that
// declared it; Delete removes both.
type Queue struct {
	// Name is the queue's unique name.
	Name string
	// Expires is the queue's expiry (x-expires): the broker deletes it
	// once it has been unused this long.
	Expires time.Duration
	conn    *amqp.Connection
	ch      *amqp.Channel
}

// dial connects with a bounded dial and names the broker (without its
// password) in errors.
func dial(url string) (*amqp.Connection, error) {
	// 30 s, as the client library's own default: a broker on a busy
	// machine can take seconds to answer a handshake
	conn, err := amqp.DialConfig(url, amqp.Config{Dial: amqp.DefaultDial(30 * time.Second)})
	if err != nil {
		return nil, fmt.Errorf("amqp %s: %w", redact.URLs(url), err)
	}
	return conn, nil
}

// dialChannel connects and opens one channel.
func dialChannel(url string) (*amqp.Connection, *amqp.Channel, error) {
	conn, err := dial(url)
	if err != nil {
		return nil, nil, err
	}
	ch, err := conn.Channel()
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, ch, nil
}

// uniqueName is prefix (default tandem) and a random suffix.
func uniqueName(prefix string) string {
	var suffix [6]byte
	rand.Read(suffix[:])
	if prefix == "" {
		prefix = "tandem"
	}
	return prefix + "-" + hex.EncodeToString(suffix[:])
}

// Declare connects to url and declares a fresh queue of the type (classic
// or quorum) whose name is prefix plus a unique suffix, expiring after
// DefaultExpires unused.
func Declare(url, prefix, queueType string) (*Queue, error) {
	return DeclareExpiring(url, prefix, queueType, DefaultExpires)
}

// DeclareExpiring is Declare with the queue's expiry (x-expires): the
// broker deletes the queue once it has been unused (no consumer, no
// basic.get, no declare) this long; zero or less means DefaultExpires.
func DeclareExpiring(url, prefix, queueType string, expires time.Duration) (*Queue, error) {
	if expires <= 0 {
		expires = DefaultExpires
	}
	queueType, err := amqpconf.QueueType(queueType)
	if err != nil {
		return nil, err
	}
	conn, ch, err := dialChannel(url)
	if err != nil {
		return nil, err
	}
	q := &Queue{Name: uniqueName(prefix), Expires: expires, conn: conn, ch: ch}
	if _, err := ch.QueueDeclare(q.Name, queueType == amqpconf.Quorum, false, false, false, queueArgs(queueType, expires)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("declare %s queue: %w", queueType, err)
	}
	return q, nil
}

// Delete deletes the queue (on a fresh channel, whatever state the old one
// is in) and closes the connection.
func (q *Queue) Delete() error {
	defer q.conn.Close()
	ch, err := q.conn.Channel()
	if err != nil {
		return fmt.Errorf("delete queue %s: %w", q.Name, err)
	}
	defer ch.Close()
	if _, err := ch.QueueDelete(q.Name, false, false, false); err != nil {
		return fmt.Errorf("delete queue %s: %w", q.Name, err)
	}
	return nil
}

// Ready is the number of messages ready for delivery (a passive declare:
// neither those delivered and not yet acked nor those in flight count).
func (q *Queue) Ready() (int, error) {
	st, err := q.ch.QueueDeclarePassive(q.Name, false, false, false, false, nil)
	if err != nil {
		return 0, fmt.Errorf("queue %s: %w", q.Name, err)
	}
	return st.Messages, nil
}

// Fill publishes n messages of size bytes and returns when the broker has
// confirmed every one; a nack is an error.
func (q *Queue) Fill(ctx context.Context, n int64, size int) error {
	ch, err := q.conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		return err
	}
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, 4096))
	body := make([]byte, max(size, 0))
	const window = 2048
	var outstanding, nacked int64
	wait := func() error {
		select {
		case c, ok := <-confirms:
			if !ok {
				return fmt.Errorf("fill queue %s: the channel closed", q.Name)
			}
			outstanding--
			if !c.Ack {
				nacked++
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for i := int64(0); i < n; i++ {
		if err := ch.PublishWithContext(ctx, "", q.Name, false, false, amqp.Publishing{Body: body}); err != nil {
			return fmt.Errorf("fill queue %s: %w", q.Name, err)
		}
		for outstanding++; outstanding >= window; {
			if err := wait(); err != nil {
				return err
			}
		}
	}
	for outstanding > 0 {
		if err := wait(); err != nil {
			return err
		}
	}
	if nacked > 0 {
		return fmt.Errorf("fill queue %s: the broker refused %d of %d messages", q.Name, nacked, n)
	}
	return nil
}

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

// RawConsumer is tandem's own consumer: the raw client in a hand-written
// loop, one connection, one channel, a prefetch window, an ack per message
// (or one per half window with multiple, none with auto).
type RawConsumer struct {
	conn   *amqp.Connection
	cancel context.CancelFunc
	done   chan struct{}
	err    error

	mu sync.Mutex
	// acked counts acked (or, with auto, delivered) messages; at is when
	// each count in marks was reached.
	acked int64
	marks []int64
	at    []time.Time
}

// StartRaw starts the raw loop on queue. marks are counts whose times
// At reports afterwards (to check the watcher against the loop's own
// clock).
func StartRaw(ctx context.Context, url, queue string, prefetch int, ack string, marks ...int64) (*RawConsumer, error) {
	conn, ch, err := dialChannel(url)
	if err != nil {
		return nil, err
	}
	if err := ch.Qos(amqpconf.Prefetch(prefetch), 0, false); err != nil {
		conn.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	deliveries, err := ch.ConsumeWithContext(ctx, queue, "", ack == amqpconf.AckAuto, false, false, false, nil)
	if err != nil {
		cancel()
		conn.Close()
		return nil, err
	}
	c := &RawConsumer{conn: conn, cancel: cancel, done: make(chan struct{}), marks: slices.Clone(marks), at: make([]time.Time, len(marks))}
	go func() {
		defer close(c.done)
		batch := amqpconf.AckBatch(prefetch)
		unacked := 0
		for d := range deliveries {
			switch ack {
			case amqpconf.AckAuto:
			case amqpconf.AckMultiple:
				if unacked++; unacked < batch {
					continue
				}
				unacked = 0
				if c.err = d.Ack(true); c.err != nil {
					return
				}
				c.count(int64(batch))
				continue
			default:
				if c.err = d.Ack(false); c.err != nil {
					return
				}
			}
			c.count(1)
		}
		if ctx.Err() == nil {
			c.err = errors.New("the broker closed the consumer's channel")
		}
	}()
	return c, nil
}

func (c *RawConsumer) count(k int64) {
	now := time.Now()
	c.mu.Lock()
	before := c.acked
	c.acked += k
	for i, m := range c.marks {
		if before < m && c.acked >= m {
			c.at[i] = now
		}
	}
	c.mu.Unlock()
}

// Exited is closed when the loop ends.
func (c *RawConsumer) Exited() <-chan struct{} { return c.done }

// Err says why the loop ended on its own.
func (c *RawConsumer) Err() error { return c.err }

// Stop ends the loop and closes its connection.
func (c *RawConsumer) Stop() error {
	c.cancel()
	c.conn.Close()
	<-c.done
	return nil
}

// At is when the loop had acked marks[i] messages (zero if it did not).
func (c *RawConsumer) At(i int) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at[i]
}

// Acked is how many messages the loop acked.
func (c *RawConsumer) Acked() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.acked
}

// ProbeRTT times the cheapest request a broker answers, basic.qos, over n
// calls after warmup, on a connection of its own, and returns the median.
func ProbeRTT(ctx context.Context, url string, warmup, n int) (time.Duration, error) {
	conn, err := dial(url)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return 0, err
	}
	rtts := make([]time.Duration, 0, n)
	for i := range warmup + n {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		t0 := time.Now()
		if err := ch.Qos(1, 0, false); err != nil {
			return 0, fmt.Errorf("basic.qos: %w", err)
		}
		if i >= warmup {
			rtts = append(rtts, time.Since(t0))
		}
	}
	if len(rtts) == 0 {
		return 0, errors.New("no round trips timed")
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2], nil
}

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
