package adhoc

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/tandem-bench/tandem/driver/amqpdrv"
	"github.com/tandem-bench/tandem/results"
)

// RunAMQP publishes into and consumes from a queue declared for the run
// at target (amqpdrv.Run), with the options' queue, messages (Requests),
// duration (10 s without either) and rate, and returns what it measured.
// An error after ctx was cancelled comes with what was measured before.
func RunAMQP(ctx context.Context, target string, o Options) (results.Sample, error) {
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
	s, err := amqpdrv.Run(ctx, amqpdrv.Options{URL: target, QueueType: o.QueueType, Prefetch: o.Prefetch, Size: o.Size,
		Confirm: o.Confirm, Ack: o.Ack, Messages: o.Requests, Duration: o.Duration, Timeout: o.Timeout, Rate: r})
	if r > 0 {
		s.OfferedRate = r
	}
	return s, err
}
