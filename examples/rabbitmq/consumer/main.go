// Command consumer is a small RabbitMQ consumer of the kind a service
// holds: a handler per message behind a context, acks after the work,
// nack and requeue on failure, a clean stop on SIGTERM. It is the layer
// examples/rabbitmq/study.yaml holds against tandem's raw loop. It reads
// the broker and the queue from the environment tandem gives it:
// TANDEM_AMQP_URL, TANDEM_QUEUE, TANDEM_PREFETCH and TANDEM_ACK.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Handler does the work one message asks for.
type Handler func(ctx context.Context, d amqp.Delivery) error

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	prefetch, err := strconv.Atoi(os.Getenv("TANDEM_PREFETCH"))
	if err != nil || prefetch < 1 {
		log.Fatalf("TANDEM_PREFETCH: want a positive integer, got %q", os.Getenv("TANDEM_PREFETCH"))
	}
	var processed int64
	handle := func(ctx context.Context, d amqp.Delivery) error {
		if err := ctx.Err(); err != nil {
			return err // stopping: leave the message to the broker
		}
		processed++
		return nil
	}
	err = consume(ctx, os.Getenv("TANDEM_AMQP_URL"), os.Getenv("TANDEM_QUEUE"), prefetch, os.Getenv("TANDEM_ACK"), handle)
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "consumer: %d messages processed\n", processed)
}

// consume runs handle on every delivery from queue until ctx ends.
func consume(ctx context.Context, url, queue string, prefetch int, ack string, handle Handler) error {
	conn, err := amqp.Dial(url)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	if err := ch.Qos(prefetch, 0, false); err != nil {
		return fmt.Errorf("qos: %w", err)
	}
	deliveries, err := ch.ConsumeWithContext(ctx, queue, "", ack == "auto", false, false, false, nil)
	if err != nil {
		return fmt.Errorf("consume %s: %w", queue, err)
	}
	batch := max(1, prefetch/2)
	pending := 0
	for d := range deliveries {
		if err := handle(ctx, d); err != nil {
			if ack != "auto" {
				if err := d.Nack(false, true); err != nil {
					return fmt.Errorf("nack: %w", err)
				}
			}
			continue
		}
		switch ack {
		case "auto":
		case "multiple":
			if pending++; pending >= batch {
				pending = 0
				if err := d.Ack(true); err != nil {
					return fmt.Errorf("ack: %w", err)
				}
			}
		default:
			if err := d.Ack(false); err != nil {
				return fmt.Errorf("ack: %w", err)
			}
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.New("the broker closed the channel")
}
