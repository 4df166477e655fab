package adhoc

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/results"
)

// Broker is the broker a target URL names (an amqp:// URL: publish into
// and consume from a queue declared for the run), with the options' queue
// settings; ok is false for a URL of a request/response protocol.
func Broker(target string, o Options) (b driver.Broker, ok bool) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, false
	}
	return driver.BrokerAt(target, u.Scheme, driver.BrokerURLOptions{QueueType: o.QueueType, Ack: o.Ack, Prefetch: o.Prefetch,
		Size: o.Size, Confirm: o.Confirm}, driver.Options{Timeout: o.Timeout})
}

// RunBroker runs the options' load through b: its messages (Requests),
// its duration (10 s without either) and its rate (one, in messages per
// second), and returns what it measured. An error after ctx was cancelled
// comes with what was measured before.
func RunBroker(ctx context.Context, b driver.Broker, o Options) (results.Sample, error) {
	if o.Requests <= 0 && o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	var r float64
	if o.Rate != "" {
		var err error
		if r, err = strconv.ParseFloat(o.Rate, 64); err != nil || r <= 0 {
			return results.Sample{}, fmt.Errorf("--rate %q: an AMQP run takes one rate in messages per second", o.Rate)
		}
	}
	s, err := b.Run(ctx, driver.BrokerRun{Messages: o.Requests, Duration: o.Duration, Rate: r})
	if r > 0 {
		s.OfferedRate = r
	}
	return s, err
}
