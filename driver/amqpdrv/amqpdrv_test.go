package amqpdrv

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/rabbittest"
)

// Publish and consume through a private RabbitMQ node, classic and quorum,
// each ack mode: every message counted, latency recorded, queue removed.
func TestRunAgainstRabbitMQ(t *testing.T) {
	url := rabbittest.Start(t)
	for _, c := range []Options{
		{QueueType: "classic", Prefetch: 1, Ack: "each", Messages: 500},
		{QueueType: "classic", Prefetch: 512, Ack: "multiple", Confirm: true, Messages: 5000},
		{QueueType: "quorum", Prefetch: 64, Ack: "each", Confirm: true, Messages: 2000},
		{QueueType: "classic", Prefetch: 100, Ack: "auto", Duration: 500 * time.Millisecond},
	} {
		c.URL = url
		s, err := Run(context.Background(), c)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if s.OK != s.Requests || s.Requests == 0 || (c.Messages > 0 && s.Requests != c.Messages) || len(s.Errors) != 0 {
			t.Errorf("%s prefetch %d ack %s: published %d, consumed %d, errors %v", c.QueueType, c.Prefetch, c.Ack, s.Requests, s.OK, s.Errors)
		}
		if s.Unit != "message" || s.UnitsPerS <= 0 || s.LatencyNs.P50 <= 0 || s.HDR == "" {
			t.Errorf("%s: unit %s, %v msg/s, p50 %d", c.QueueType, s.Unit, s.UnitsPerS, s.LatencyNs.P50)
		}
	}
	if _, err := Run(context.Background(), Options{URL: "amqp://guest:secret@127.0.0.1:1/", Messages: 1}); err == nil {
		t.Error("a closed port was reached")
	} else if got := err.Error(); strings.Contains(got, "secret") {
		t.Errorf("the error shows the password: %s", got)
	}
	if _, err := Run(context.Background(), Options{URL: url, QueueType: "stream", Messages: 1}); err == nil {
		t.Error("queue type stream was accepted")
	}
}
