// Package veth is a TCP path through the kernel for the conditions a
// user-space proxy can only imitate: two network namespaces of tandem's
// own, joined by a veth pair, with a token-bucket rate cap (the tbf qdisc)
// on each end's way out and random packet loss (an nftables numgen rule)
// on each end's way in. A connection dialled through a Path is a socket in
// the first namespace; its packets cross the pair to a relay listening in
// the second, which forwards the bytes to the upstream address in the
// namespace tandem runs in. The kernel's own TCP then meets real drops
// (retransmissions, fast retransmit, congestion control) and a real queue.
//
// It needs Linux, the right to make network namespaces, veth pairs,
// qdiscs and nftables rules (root, or CAP_SYS_ADMIN and CAP_NET_ADMIN),
// and a kernel with veth, tbf and nf_tables' numgen; Probe says whether
// this process has them and, if not, why. Nothing outside the two
// namespaces is touched, and Close removes them.
package veth

import (
	"fmt"
	"time"
)

// Shape is what the kernel does to one direction of a Path.
type Shape struct {
	// Loss is the chance, in [0, 1), that a TCP packet (a segment or an
	// acknowledgement; never a reset) is dropped as it arrives.
	Loss float64
	// Bandwidth caps the direction, in bytes of the stream per second (0:
	// no cap); the qdisc's rate is of frames, headers included, and is
	// set that much higher.
	Bandwidth int64
	// Burst is the token bucket's depth in bytes (0: 20 ms of the rate,
	// at least 3,028 bytes: two full frames).
	Burst int64
}

// Validate says what is wrong with a shape, if anything.
func (s Shape) Validate() error {
	switch {
	case s.Loss < 0 || s.Loss >= 1:
		return fmt.Errorf("loss %v: want a fraction from 0 to below 1", s.Loss)
	case s.Bandwidth < 0:
		return fmt.Errorf("bandwidth %d B/s: want 0 (no cap) or more", s.Bandwidth)
	case s.Burst < 0:
		return fmt.Errorf("burst %d bytes: want 0 (the default) or more", s.Burst)
	}
	return nil
}

// burst is the bucket's depth: Burst, else 20 ms of the rate, at least two
// full frames (the qdisc cannot pass a frame larger than its bucket).
func (s Shape) burst() int64 {
	if s.Burst > 0 {
		return max(s.Burst, minBurst)
	}
	return max(s.Bandwidth*int64(20*time.Millisecond)/int64(time.Second), minBurst)
}

// minBurst is two 1,514-byte Ethernet frames.
const minBurst = 2 * 1514

// Options say where a Path leads and what it does to each direction.
type Options struct {
	// Upstream is the address the relay forwards every connection to,
	// dialled from the namespace tandem runs in.
	Upstream string
	// Up is what happens to packets towards the upstream; Down, to those
	// back.
	Up, Down Shape
	// DialTimeout bounds the relay's dial of the upstream (0: 5 s).
	DialTimeout time.Duration
}

// Stats count what crossed a Path.
type Stats struct {
	Up, Down Flow
	// DialErrors counts connections the relay reset because the upstream
	// could not be dialled.
	DialErrors int64
}

// Flow counts one direction's TCP packets: those that arrived at the far
// end, those the loss rule dropped there, and those the rate cap's queue
// dropped on the way out because it was full (Overflow).
type Flow struct {
	Packets, Dropped, Overflow int64
}
