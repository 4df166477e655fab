package amqpdrv

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/tandem-bench/tandem/internal/amqpconf"
)

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
