package amqpdrv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/tandem-bench/tandem/internal/amqpconf"
	"github.com/tandem-bench/tandem/internal/redact"
)

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
