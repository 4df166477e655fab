package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// Broker runs a broker protocol's call whole: a broker is not asked
// request by request. Run publishes and consumes through one queue of its
// own; Drain fills a queue and times a consumer target's drain of it; RTT
// times the broker's cheapest round trip. A broker protocol is a package
// of its own and an entry in the protocol table (brokerProtocol).
type Broker interface {
	Asker
	// Run publishes and consumes the run's messages until its count or
	// its duration, whichever comes first, and measures each from send to
	// consume.
	Run(ctx context.Context, r BrokerRun) (results.Sample, error)
	// Drain fills a fresh queue with d.Messages, starts a consumer on it
	// with start and times the drain.
	Drain(ctx context.Context, d DrainRun, start StartConsumer) (results.Sample, error)
	// RTT is the median of calls round trips of the broker's cheapest
	// request, after warmup of them.
	RTT(ctx context.Context, warmup, calls int) (time.Duration, error)
	// Prefetch is the consumer's prefetch window the call sets, as the
	// results record it.
	Prefetch() int
}

// BrokerRun bounds a broker's run: Messages (0: none) and Duration (0:
// none; one of them is needed), and the rate to publish at (0: as fast as
// the broker takes them).
type BrokerRun struct {
	Messages int64
	Duration time.Duration
	Rate     float64
}

// DrainRun is a drain: Messages in a fresh queue named from Queue, and
// Stall, how long the queue may stand still before the drain fails.
type DrainRun struct {
	Messages int64
	Queue    string
	Stall    time.Duration
}

// Consumer is a consumer target's process as a drain watches it.
type Consumer interface {
	// Exited is closed when the consumer ended on its own.
	Exited() <-chan struct{}
	// Err says why it ended on its own.
	Err() error
	// Stop ends it.
	Stop() error
}

// StartConsumer starts a consumer target on the queue env names (its
// broker, queue and settings, as environment variables NAME=VALUE).
type StartConsumer func(ctx context.Context, env []string) (Consumer, error)

// brokerProtocol is what the protocol table knows of a broker protocol.
type brokerProtocol struct {
	// new is the Broker of a call at endpoint.
	new func(call *study.Call, endpoint string, o Options) Broker
	// prefetch is the call's prefetch window, as the results record it.
	prefetch func(call *study.Call) int
	// consume runs tandem's own consumer loop on the queue the
	// environment names (what a consumer {raw: true} target runs).
	consume func(ctx context.Context, getenv func(string) string) error
	// fromURL is the call a `tandem load` target URL and its options
	// describe, with its endpoint; schemes are the URL's.
	schemes []string
	fromURL func(target string, o BrokerURLOptions) *study.Call
}

// BrokerURLOptions are tandem load's options of a broker's load.
type BrokerURLOptions struct {
	QueueType, Ack string
	Prefetch, Size int
	Confirm        bool
}

// brokerOf is the broker protocol of call, if it is one's.
func brokerOf(call *study.Call) (*brokerProtocol, bool) {
	key := call.Protocol()
	for _, p := range protocols() {
		if p.key == key && p.broker != nil {
			return p.broker, true
		}
	}
	return nil, false
}

// IsBroker says call runs whole through a broker (NewBroker), not request
// by request (New).
func IsBroker(call *study.Call) bool {
	_, ok := brokerOf(call)
	return ok
}

// NewBroker returns the Broker of a broker's call at endpoint.
func NewBroker(call *study.Call, endpoint string, o Options) (Broker, error) {
	b, ok := brokerOf(call)
	if !ok {
		return nil, fmt.Errorf("a %s call is not run through a broker", call.Protocol())
	}
	return b.new(call, endpoint, o), nil
}

// Prefetch is a broker call's prefetch window as the results record it; 0
// for any other call.
func Prefetch(call *study.Call) int {
	if b, ok := brokerOf(call); ok {
		return b.prefetch(call)
	}
	return 0
}

// BrokerEnv names the broker protocol in a consumer's environment, for
// Consume.
const BrokerEnv = "TANDEM_BROKER"

// Consume runs tandem's own consumer loop (`tandem consume`) for the
// broker protocol the environment names (BrokerEnv; amqp if unset), on
// the queue the environment names, until ctx ends.
func Consume(ctx context.Context, getenv func(string) string) error {
	key := getenv(BrokerEnv)
	if key == "" {
		key = study.ProtoAMQP
	}
	for _, p := range protocols() {
		if p.key == key && p.broker != nil && p.broker.consume != nil {
			return p.broker.consume(ctx, getenv)
		}
	}
	return fmt.Errorf("consume: %s %q: no broker protocol of that name has a consumer loop", BrokerEnv, key)
}

// BrokerAt is the Broker of a `tandem load` target URL whose scheme names
// a broker protocol (ok false for any other URL), with o's options and
// timeout.
func BrokerAt(target, scheme string, bo BrokerURLOptions, o Options) (b Broker, ok bool) {
	for _, p := range protocols() {
		if p.broker == nil || p.broker.fromURL == nil {
			continue
		}
		for _, sc := range p.broker.schemes {
			if sc == scheme {
				return p.broker.new(p.broker.fromURL(target, bo), target, o), true
			}
		}
	}
	return nil, false
}

// askOnce publishes and consumes one message through b: a broker's Ask.
func askOnce(ctx context.Context, b Broker) ([][]byte, load.Result, error) {
	s, err := b.Run(ctx, BrokerRun{Messages: 1})
	if err != nil {
		return nil, load.Result{}, err
	}
	if s.OK != 1 {
		return nil, load.Result{Status: "amqp"}, nil
	}
	return [][]byte{[]byte("{}")}, load.Result{Units: 1}, nil
}
