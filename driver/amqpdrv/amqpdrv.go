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

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/internal/amqpconf"
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
// measured: requests = published, ok = consumed and acked, latency from
// the send time in each message to its delivery, throughput over the
// window from the first delivery to the last ack.
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
	type pubResult struct {
		sent, nacked int64
		err          error
	}
	done := make(chan pubResult, 1)
	go func() { // the one publisher
		var r pubResult
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
		done <- r
	}()
	hist := hdr.New()
	var s results.Sample
	s.Unit, s.Errors = "message", map[string]int64{}
	var first, last time.Time
	var pr *pubResult
	unacked := 0
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for pr == nil || s.OK < pr.sent-pr.nacked {
		if pr != nil {
			timer.Reset(o.Timeout) // publishing ended: the rest must come soon
		}
		select {
		case r := <-done:
			pr = &r
			continue
		case <-timer.C:
			s.Errors["timeout"] += pr.sent - pr.nacked - s.OK
			pr.nacked = pr.sent - s.OK // stop waiting
			continue
		case <-ctx.Done():
		case d, ok := <-deliveries:
			if !ok {
				s.Errors["closed"]++
				break
			}
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			if len(d.Body) >= 8 {
				sent := time.Unix(0, int64(binary.BigEndian.Uint64(d.Body)))
				hist.RecordValue(min(max(now.Sub(sent).Nanoseconds(), 1), hist.HighestTrackableValue()))
			}
			switch o.Ack {
			case amqpconf.AckEach:
				if err := d.Ack(false); err != nil {
					s.Errors["ack"]++
					continue
				}
			case amqpconf.AckMultiple:
				if unacked++; unacked >= amqpconf.AckBatch(o.Prefetch) {
					if err := d.Ack(true); err != nil {
						s.Errors["ack"]++
					}
					unacked = 0
				}
			}
			s.OK++
			last = time.Now()
			continue
		}
		break
	}
	if pr == nil {
		r := <-done
		pr = &r
	}
	if pr.err != nil && ctx.Err() == nil {
		s.Errors["publish"]++
	}
	if pr.nacked > 0 {
		s.Errors["nack"] += pr.nacked
	}
	s.Requests = pr.sent
	if !first.IsZero() {
		s.DurationNs = last.Sub(first).Nanoseconds()
	}
	if s.DurationNs > 0 {
		s.Throughput = float64(s.OK) / (float64(s.DurationNs) / 1e9)
		s.UnitsPerS, s.AchievedRate = s.Throughput, s.Throughput
	}
	s.LatencyNs = hdr.Distribution(hist)
	s.ServiceTimeNs = s.LatencyNs
	if enc, err := hdr.Encode(hist); err == nil {
		s.HDR = enc
	}
	return s, ctx.Err()
}
