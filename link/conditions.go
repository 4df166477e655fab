package link

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// SegmentSize is the size of the pieces that Conditions.Loss draws for: a
// TCP segment's payload on a 1500-byte MTU with timestamps (1500 − 20 IP −
// 32 TCP).
const SegmentSize = 1448

// MinRTO is the least retransmission timeout a lost segment waits (Linux's
// TCP_RTO_MIN); MaxRTO is the most any one wait lasts (TCP_RTO_MAX).
const (
	MinRTO = 200 * time.Millisecond
	MaxRTO = 120 * time.Second
)

// maxRetransmits bounds how often one segment can be lost again (Linux's
// tcp_retries2 is 15).
const maxRetransmits = 15

// Distribution is how a jitter spreads a delay.
type Distribution uint8

const (
	// Uniform draws a chunk's delay evenly from [Delay−Jitter, Delay+Jitter].
	Uniform Distribution = iota
	// Normal draws a chunk's delay from a normal law of mean Delay and
	// standard deviation Jitter.
	Normal
)

var distributionNames = [...]string{Uniform: "uniform", Normal: "normal"}

// String is the distribution's name in a study file.
func (d Distribution) String() string {
	if int(d) < len(distributionNames) {
		return distributionNames[d]
	}
	return fmt.Sprintf("Distribution(%d)", uint8(d))
}

// ParseDistribution reads a distribution's name: "uniform" or "normal".
func ParseDistribution(s string) (Distribution, error) {
	for d, name := range distributionNames {
		if s == name {
			return Distribution(d), nil
		}
	}
	return 0, fmt.Errorf("link: distribution %q: want one of %s", s, strings.Join(distributionNames[:], ", "))
}

// Conditions are what one direction of a link does to the bytes crossing
// it. The zero value passes them untouched. docs/network.md says what each
// field means exactly.
type Conditions struct {
	// Delay is the one-way delay added to every chunk read from the sender,
	// counted from when it was read (after Bandwidth let it through).
	Delay time.Duration
	// Jitter spreads each chunk's delay around Delay, by Distribution; a
	// draw below zero counts as zero, and a chunk never overtakes the one
	// before it (it waits for it instead).
	Jitter time.Duration
	// Distribution is how Jitter spreads the delay (Uniform by default).
	Distribution Distribution
	// Loss is the chance, in [0, 1), that a segment (SegmentSize bytes) is
	// lost. A lost segment, and every byte behind it, is held for a
	// retransmission timeout (MinRTO plus both directions' Delay), doubled
	// each time the same segment is lost again: what a loss costs a TCP
	// stream that has no later segments to trigger a fast retransmit.
	Loss float64
	// Bandwidth caps the direction at this many bytes per second, shared
	// by every connection of the link: a token bucket (0: no cap).
	Bandwidth int64
	// Burst is the token bucket's size in bytes (0: 20 ms of Bandwidth,
	// at least 1 KiB). Only with Bandwidth.
	Burst int64
	// ResetAfter resets each connection (RST to both ends) this long after
	// the link accepted it; the shorter of the two directions' values
	// applies, as set when the connection was accepted (0: never).
	ResetAfter time.Duration
	// ResetAfterBytes resets a connection once this many bytes have
	// crossed this direction: those bytes are delivered, then RST to both
	// ends (0: never).
	ResetAfterBytes int64
}

// Validate says which field is out of range and what it should be.
func (c Conditions) Validate() error {
	var errs []error
	bad := func(field string, v any, want string) {
		errs = append(errs, fmt.Errorf("%s %v: want %s", field, v, want))
	}
	if c.Delay < 0 {
		bad("delay", c.Delay, "0 or more")
	}
	if c.Jitter < 0 {
		bad("jitter", c.Jitter, "0 or more")
	}
	if int(c.Distribution) >= len(distributionNames) {
		bad("distribution", c.Distribution, strings.Join(distributionNames[:], " or "))
	}
	if !(c.Loss >= 0 && c.Loss < 1) { // also refuses NaN
		bad("loss", c.Loss, "a fraction in [0, 1) (a link that loses everything is a partition)")
	}
	if c.Bandwidth < 0 {
		bad("bandwidth", c.Bandwidth, "0 (no cap) or more bytes/s")
	}
	if c.Burst < 0 || (c.Burst > 0 && c.Bandwidth == 0) {
		bad("burst", c.Burst, "0, or more bytes with a bandwidth")
	}
	if c.Burst > math.MaxInt32 {
		bad("burst", c.Burst, fmt.Sprintf("at most %d bytes", math.MaxInt32))
	}
	if c.ResetAfter < 0 {
		bad("reset after", c.ResetAfter, "0 (never) or more")
	}
	if c.ResetAfterBytes < 0 {
		bad("reset after bytes", c.ResetAfterBytes, "0 (never) or more")
	}
	return errors.Join(errs...)
}

// burst is the token bucket's size: Burst, or 20 ms of Bandwidth (at least
// 1 KiB, at most what a rate.Limiter holds).
func (c *Conditions) burst() int {
	if c.Burst > 0 {
		return int(c.Burst)
	}
	return int(min(max(c.Bandwidth/50, 1024), math.MaxInt32))
}

// delay draws one chunk's one-way delay; it is never negative.
func (c *Conditions) delay(r *rand.Rand) time.Duration {
	if c.Jitter == 0 {
		return c.Delay
	}
	var d float64
	switch c.Distribution {
	case Normal:
		d = float64(c.Delay) + r.NormFloat64()*float64(c.Jitter)
	default:
		d = float64(c.Delay) + (2*r.Float64()-1)*float64(c.Jitter)
	}
	switch {
	case d <= 0:
		return 0
	case d >= math.MaxInt64:
		return math.MaxInt64
	}
	return time.Duration(d)
}

// stall draws whether a segment is lost and, if so, how long it is held:
// the retransmission timeouts it waits (rto, doubled after each loss of the
// same segment, each wait at most MaxRTO) and how many times it was lost.
func stall(r *rand.Rand, loss float64, rto time.Duration) (time.Duration, int) {
	var held time.Duration
	n := 0
	for n < maxRetransmits && loss > 0 && r.Float64() < loss {
		held += min(rto<<n, MaxRTO)
		n++
	}
	return held, n
}
