package amqpdrv_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tandem-bench/tandem/driver/amqpdrv"
)

// Time how fast tandem's raw loop drains 10,000 messages from a classic
// queue with a prefetch window of 64.
func ExampleDrain() {
	url := "amqp://guest:guest@127.0.0.1:5672/"
	o := amqpdrv.DrainOptions{URL: url, QueueType: "classic", Prefetch: 64, Size: 1024, Messages: 10000}
	s, err := amqpdrv.Drain(context.Background(), o, func(ctx context.Context, queue string) (amqpdrv.Consumer, error) {
		return amqpdrv.StartRaw(ctx, url, queue, 64, "each")
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.0f messages/s\n", s.UnitsPerS)
}
