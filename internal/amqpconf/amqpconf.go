// Package amqpconf is the one home of an AMQP call's settings: the queue
// types and ack modes there are, and the defaults of a call that is silent.
// The study format validates against it, and the AMQP driver, the drain
// runner and `tandem load` apply it. It imports nothing of tandem's, so
// every one of them can.
package amqpconf

import "fmt"

// Queue types: a queue declared for a run is one of these.
const (
	Classic = "classic"
	Quorum  = "quorum"
)

// Ack modes: an ack per message, one per half prefetch window, or none
// (the broker does not wait for acks).
const (
	AckEach     = "each"
	AckMultiple = "multiple"
	AckAuto     = "auto"
)

// Defaults where a call is silent.
const (
	DefaultQueueType = Classic
	DefaultAck       = AckEach
	// DefaultPrefetch is the consumer's window (basic.qos).
	DefaultPrefetch = 1
	// DefaultSize is a message body's size in bytes.
	DefaultSize = 1024
)

// QueueTypes and AckModes name the allowed values, for messages.
const (
	QueueTypes = Classic + " or " + Quorum
	AckModes   = AckEach + ", " + AckMultiple + " or " + AckAuto
)

// QueueType resolves a queue type: DefaultQueueType for "", t itself if
// it is one, else an error.
func QueueType(t string) (string, error) {
	switch t {
	case "":
		return DefaultQueueType, nil
	case Classic, Quorum:
		return t, nil
	}
	return "", fmt.Errorf("queue type %q: want %s", t, QueueTypes)
}

// Ack resolves an ack mode: DefaultAck for "", a itself if it is one,
// else an error.
func Ack(a string) (string, error) {
	switch a {
	case "":
		return DefaultAck, nil
	case AckEach, AckMultiple, AckAuto:
		return a, nil
	}
	return "", fmt.Errorf("ack %q: want %s", a, AckModes)
}

// Prefetch is the consumer's window: n, or DefaultPrefetch if n is not
// positive.
func Prefetch(n int) int {
	if n <= 0 {
		return DefaultPrefetch
	}
	return n
}

// Size is a message body's size in bytes: n, or DefaultSize if n is not
// positive.
func Size(n int) int {
	if n <= 0 {
		return DefaultSize
	}
	return n
}

// AckBatch is how many deliveries one ack of mode multiple covers: half
// the prefetch window, at least one.
func AckBatch(prefetch int) int { return max(1, prefetch/2) }
