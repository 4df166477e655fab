// Package amqpdrv measures an AMQP 0-9-1 broker (RabbitMQ) the way a
// consumer sees it: messages published into a queue declared for the run
// and consumed with a prefetch window, each carrying its send time, so
// latency is end to end. The queue is deleted afterwards, whatever
// happens; and every queue tandem declares carries an expiry (x-expires,
// see DefaultExpires), so the broker deletes it by itself should tandem be
// killed before it can.
package amqpdrv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/internal/amqpconf"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
)

// Options describes one run.
type Options struct {
	// URL is amqp://USER:PASS@HOST:PORT/VHOST.
	URL string
	// Queue prefixes the name of the queue declared for the run; default
	// tandem.
	Queue string
	// QueueType is classic (default) or quorum (see amqpconf).
	QueueType string
	// Prefetch is the consumer's window (basic.qos); default
	// amqpconf.DefaultPrefetch.
	Prefetch int
	// Size is each message's body in bytes (at least 8: the send time);
	// default amqpconf.DefaultSize.
	Size int
	// Confirm waits for the broker's publisher confirms (at most Prefetch
	// ×4, at least 256, outstanding).
	Confirm bool
	// Ack is each (default: one ack per message), multiple (one ack per
	// half window) or auto (the broker does not wait for acks).
	Ack string
	// Messages bounds the run by count, Duration by time (publishing
	// stops then); at least one must be set.
	Messages int64
	Duration time.Duration
	// Rate, if positive, paces publishing at this many messages a second
	// on an absolute timetable; default as fast as the broker takes them.
	Rate float64
	// Timeout bounds the wait for the last deliveries; default 10 s.
	Timeout time.Duration
	// Expires is the queue's expiry (x-expires): the broker deletes the
	// queue once it has had no consumer for this long, should tandem be
	// killed before it deletes it; default DefaultExpires. The run's
	// consumer is attached right after the declare, so the queue cannot
	// expire while the run goes on.
	Expires time.Duration
	// Live, if set, counts the run's messages as it goes (for a progress
	// line, or to act once the run is under way): Sent those published,
	// OK those consumed and acked, Errors those that failed; at the end
	// OK and Errors are the sample's ok and failures.
	Live *load.Live
}

// tell adds to the run's live counts, if it keeps them.
func (o *Options) tell(sent, ok, failed int64) {
	if l := o.Live; l != nil {
		l.Sent.Add(sent)
		l.OK.Add(ok)
		l.Errors.Add(failed)
	}
}

func (o *Options) defaults() error {
	var err error
	if o.QueueType, err = amqpconf.QueueType(o.QueueType); err != nil {
		return err
	}
	o.Prefetch, o.Size = amqpconf.Prefetch(o.Prefetch), amqpconf.Size(o.Size)
	if o.Size < 8 {
		return fmt.Errorf("size %d: a message carries its 8-byte send time", o.Size)
	}
	if o.Ack, err = amqpconf.Ack(o.Ack); err != nil {
		return err
	}
	if o.Messages <= 0 && o.Duration <= 0 {
		return errors.New("a run needs a message count or a duration")
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Expires <= 0 {
		o.Expires = DefaultExpires
	}
	return nil
}

// Run publishes and consumes through one fresh queue and returns what it
// measured: ok = consumed and acked; errors = the messages that failed, by
// reason (nack, publish, ack, timeout, closed); requests = ok + errors;
// unfinished = published and neither when ctx cut the run short (an
// interruption is not a failure). Latency from the send time in each
// message to its delivery, throughput over the window from the first
// delivery to the last ack.
func Run(ctx context.Context, o Options) (results.Sample, error) {
	if err := o.defaults(); err != nil {
		return results.Sample{}, err
	}
	conn, err := dial(o.URL)
	if err != nil {
		return results.Sample{}, err
	}
	defer conn.Close()
	pub, err := conn.Channel()
	if err != nil {
		return results.Sample{}, err
	}
	sub, err := conn.Channel()
	if err != nil {
		return results.Sample{}, err
	}
	queue := uniqueName(o.Queue)
	args := queueArgs(o.QueueType, o.Expires)
	if _, err := pub.QueueDeclare(queue, o.QueueType == amqpconf.Quorum, false, false, false, args); err != nil {
		return results.Sample{}, fmt.Errorf("declare %s queue: %w", o.QueueType, err)
	}
	defer func() { // whatever happens, on a channel of its own
		if ch, err := conn.Channel(); err == nil {
			ch.QueueDelete(queue, false, false, false)
			ch.Close()
		}
	}()
	if err := sub.Qos(o.Prefetch, 0, false); err != nil {
		return results.Sample{}, err
	}
	deliveries, err := sub.ConsumeWithContext(ctx, queue, "", o.Ack == amqpconf.AckAuto, false, false, false, nil)
	if err != nil {
		return results.Sample{}, err
	}
	var confirms chan amqp.Confirmation
	if o.Confirm {
		if err := pub.Confirm(false); err != nil {
			return results.Sample{}, err
		}
		confirms = pub.NotifyPublish(make(chan amqp.Confirmation, 1024))
	}
	done := make(chan published, 1)
	go func() { done <- publish(ctx, pub, queue, o, confirms) }()
	s := consume(ctx, deliveries, done, o)
	return s, ctx.Err()
}

// published is what the publisher did: messages the broker took (sent),
// those it refused (nacked, of sent), and why publishing stopped early.
type published struct {
	sent, nacked int64
	err          error
}

// publish is the run's one publisher: o.Messages or for o.Duration, at
// o.Rate if set, waiting for confirms (at most max(256, 4×prefetch)
// outstanding) when confirms is not nil; it stops when ctx ends.
func publish(ctx context.Context, pub *amqp.Channel, queue string, o Options, confirms chan amqp.Confirmation) published {
	var r published
	body := make([]byte, o.Size)
	window := int64(max(256, 4*o.Prefetch))
	var outstanding int64
	start := time.Now()
	end := start.Add(o.Duration)
	for (o.Messages <= 0 || r.sent < o.Messages) && (o.Duration <= 0 || time.Now().Before(end)) && ctx.Err() == nil {
		if o.Rate > 0 {
			due := start.Add(time.Duration(float64(r.sent) / o.Rate * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
		}
		binary.BigEndian.PutUint64(body, uint64(time.Now().UnixNano()))
		if r.err = pub.PublishWithContext(ctx, "", queue, false, false, amqp.Publishing{Body: body}); r.err != nil {
			break
		}
		r.sent++
		o.tell(1, 0, 0)
		if confirms != nil {
			outstanding++
			for outstanding >= window {
				c := <-confirms
				outstanding--
				if !c.Ack {
					r.nacked++
				}
			}
		}
	}
	for ; confirms != nil && outstanding > 0; outstanding-- {
		if c, ok := <-confirms; ok && !c.Ack {
			r.nacked++
		}
	}
	return r
}

// consumption is the consumer's account of a run.
type consumption struct {
	o    Options
	hist *hdrhistogram.Histogram
	s    results.Sample
	// pending are messages delivered and not yet acked (ack multiple),
	// unacked the last of them.
	pending     int64
	unacked     amqp.Delivery
	first, last time.Time
	// closed says the deliveries ended without ctx ending.
	closed bool
}

// consume takes the deliveries until every message the publisher sent
// (and the broker took) is acked, or the rest time out, or the consumer
// is closed, or ctx ends; then it settles the account: every message
// published is ok, failed (by its reason in Errors) or, when ctx cut the
// run short, unfinished. Requests are the finished ones.
func consume(ctx context.Context, deliveries <-chan amqp.Delivery, done <-chan published, o Options) results.Sample {
	c := &consumption{o: o, hist: hdr.New(), s: results.Sample{Unit: "message", Errors: map[string]int64{}}}
	var pr *published
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for pr == nil || c.s.OK+c.failed()+c.pending < pr.sent-pr.nacked {
		if pr != nil {
			timer.Reset(o.Timeout) // publishing ended: the rest must come soon
		}
		select {
		case r := <-done:
			pr = &r
			continue
		case <-timer.C:
			late := pr.sent - pr.nacked - c.s.OK - c.failed() - c.pending
			c.s.Errors["timeout"] += late
			c.o.tell(0, 0, late)
			continue
		case <-ctx.Done():
		case d, ok := <-deliveries:
			if ok {
				c.take(d)
				continue
			}
			c.closed = ctx.Err() == nil // deliveries end with ctx too: that is the cut, not a failure
		}
		break
	}
	if pr == nil {
		r := <-done
		pr = &r
	}
	c.settle(ctx, *pr)
	return c.s
}

// failed counts the messages that failed so far.
func (c *consumption) failed() int64 {
	var n int64
	for _, v := range c.s.Errors {
		n += v
	}
	return n
}

// take records one delivery: its latency from the send time it carries,
// and its ack; a message is ok once acked (with ack multiple, when its
// batch is; with auto ack, when delivered).
func (c *consumption) take(d amqp.Delivery) {
	now := time.Now()
	if c.first.IsZero() {
		c.first = now
	}
	if len(d.Body) >= 8 {
		sent := time.Unix(0, int64(binary.BigEndian.Uint64(d.Body)))
		c.hist.RecordValue(min(max(now.Sub(sent).Nanoseconds(), 1), c.hist.HighestTrackableValue()))
	}
	switch c.o.Ack {
	case amqpconf.AckEach:
		c.acked(d.Ack(false), 1)
	case amqpconf.AckMultiple:
		c.unacked = d
		if c.pending++; c.pending >= int64(amqpconf.AckBatch(c.o.Prefetch)) {
			c.ackPending()
		}
	default:
		c.acked(nil, 1)
	}
}

// ackPending acks the deliveries not yet acked (ack multiple), up to the
// last of them.
func (c *consumption) ackPending() {
	if c.pending > 0 {
		c.acked(c.unacked.Ack(true), c.pending)
		c.pending = 0
	}
}

// acked counts n messages whose ack returned err: ok, or failed (ack).
func (c *consumption) acked(err error, n int64) {
	if err != nil {
		c.s.Errors["ack"] += n
		c.o.tell(0, 0, n)
		return
	}
	c.s.OK += n
	c.o.tell(0, n, 0)
	c.last = time.Now()
}

// settle ends the account once consuming stopped, pr being what the
// publisher did: the last deliveries are acked (ack multiple), unless ctx
// cut the run short; a publish that failed, and what the broker nacked,
// are failures; what is neither ok nor failed was lost when the consumer
// was closed (a failure, closed) or is unfinished when ctx cut the run
// short; then the figures of what finished.
func (c *consumption) settle(ctx context.Context, pr published) {
	s := &c.s
	if ctx.Err() == nil && !c.closed {
		c.ackPending()
	}
	failed := c.failed()
	if pr.nacked > 0 {
		s.Errors["nack"] += pr.nacked
	}
	attempted := pr.sent
	if pr.err != nil && ctx.Err() == nil {
		s.Errors["publish"]++ // the message that could not be published
		attempted++
	}
	switch rest := attempted - s.OK - c.failed(); {
	case rest <= 0:
	case ctx.Err() != nil:
		s.Unfinished = rest
	default:
		s.Errors["closed"] += rest
	}
	c.o.tell(0, 0, c.failed()-failed)
	s.Requests = s.OK + c.failed()
	if !c.first.IsZero() && c.last.After(c.first) {
		s.DurationNs = c.last.Sub(c.first).Nanoseconds()
	}
	if s.DurationNs > 0 {
		s.Throughput = float64(s.OK) / (float64(s.DurationNs) / 1e9)
		s.UnitsPerS, s.AchievedRate = s.Throughput, s.Throughput
	}
	s.LatencyNs = hdr.Distribution(c.hist)
	s.ServiceTimeNs = s.LatencyNs
	if enc, err := hdr.Encode(c.hist); err == nil {
		s.HDR = enc
	}
}
