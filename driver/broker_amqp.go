package driver

import (
	"context"
	"strconv"
	"time"

	"github.com/tandem-bench/tandem/driver/amqpdrv"
	"github.com/tandem-bench/tandem/internal/amqpconf"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// amqpBrokers is AMQP 0-9-1 in the protocol table (package amqpdrv).
func amqpBrokers() *brokerProtocol {
	return &brokerProtocol{
		new: func(call *study.Call, endpoint string, o Options) Broker {
			return &amqpBroker{call: call.AMQP, url: endpoint, timeout: o.Timeout}
		},
		prefetch: func(call *study.Call) int { return amqpconf.Prefetch(call.AMQP.Prefetch) },
		consume:  amqpdrv.ConsumeEnv,
		schemes:  []string{"amqp", "amqps"},
		fromURL: func(_ string, o BrokerURLOptions) *study.Call {
			return &study.Call{AMQP: &study.AMQPCall{QueueType: o.QueueType, Prefetch: o.Prefetch, Size: o.Size, Confirm: o.Confirm, Ack: o.Ack}}
		},
	}
}

// amqpBroker runs an amqp call at an amqp:// URL.
type amqpBroker struct {
	call    *study.AMQPCall
	url     string
	timeout time.Duration
}

// Ask publishes and consumes one message.
func (a *amqpBroker) Ask(ctx context.Context) ([][]byte, load.Result, error) { return askOnce(ctx, a) }

// Run publishes and consumes messages through a queue declared for the
// run, until the count or the duration, whichever comes first.
func (a *amqpBroker) Run(ctx context.Context, r BrokerRun) (results.Sample, error) {
	c := a.call
	o := amqpdrv.Options{URL: a.url, Queue: c.Queue, QueueType: c.QueueType, Prefetch: c.Prefetch, Size: c.Size, Confirm: c.Confirm,
		Ack: c.Ack, Timeout: a.timeout, Messages: r.Messages, Duration: r.Duration, Rate: r.Rate}
	return amqpdrv.Run(ctx, o)
}

// Drain fills a fresh queue and times a consumer's drain of it; the
// consumer's environment names the broker, the queue and the call's
// settings (TANDEM_AMQP_URL, TANDEM_QUEUE, TANDEM_QUEUE_TYPE,
// TANDEM_PREFETCH, TANDEM_ACK, TANDEM_MESSAGES, TANDEM_SIZE).
func (a *amqpBroker) Drain(ctx context.Context, d DrainRun, start StartConsumer) (results.Sample, error) {
	// the study is validated: its queue type and ack mode are known ones
	qt, _ := amqpconf.QueueType(a.call.QueueType)
	ack, _ := amqpconf.Ack(a.call.Ack)
	prefetch, size := amqpconf.Prefetch(a.call.Prefetch), amqpconf.Size(a.call.Size)
	o := amqpdrv.DrainOptions{URL: a.url, Queue: a.call.Queue, QueueType: qt, Prefetch: prefetch, AutoAck: ack == amqpconf.AckAuto,
		Size: size, Messages: d.Messages, Stall: d.Stall}
	if o.Queue == "" {
		o.Queue = d.Queue
	}
	return amqpdrv.Drain(ctx, o, func(ctx context.Context, queue string) (amqpdrv.Consumer, error) {
		return start(ctx, []string{BrokerEnv + "=" + study.ProtoAMQP, "TANDEM_AMQP_URL=" + a.url, "TANDEM_QUEUE=" + queue,
			"TANDEM_QUEUE_TYPE=" + qt, "TANDEM_PREFETCH=" + strconv.Itoa(prefetch), "TANDEM_ACK=" + ack,
			"TANDEM_MESSAGES=" + strconv.FormatInt(d.Messages, 10), "TANDEM_SIZE=" + strconv.Itoa(size)})
	})
}

// RTT times basic.qos, the cheapest request a broker answers.
func (a *amqpBroker) RTT(ctx context.Context, warmup, calls int) (time.Duration, error) {
	return amqpdrv.ProbeRTT(ctx, a.url, warmup, calls)
}

// Prefetch is the consumer's prefetch window.
func (a *amqpBroker) Prefetch() int { return amqpconf.Prefetch(a.call.Prefetch) }
