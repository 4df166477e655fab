// Package fleet runs one load over many workers, on several machines or
// one: a coordinator and workers that talk over NATS (an embeddable
// messaging system) for control, time and data. Workers join, the
// coordinator measures each one's clock against its own over several
// round trips, hands each its share of the load, waits at a barrier until
// every worker has its connections open, and names a common start time in
// the near future. While the load runs each worker streams what it
// recorded every second (load.Tally: counts and HdrHistograms, never
// percentiles) into a JetStream stream, deduplicated by message id, and
// heartbeats; the coordinator adds the tallies up into the results one
// machine would have written. A worker silent for Suspect is suspect, for
// Lost lost; a worker that hears nothing from its coordinator for its
// Lease stops its load by itself.
package fleet

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
)

// Defaults of the failure detector and the protocol's timing.
const (
	// DefaultSuspect is how long a worker may be silent before it is
	// suspect.
	DefaultSuspect = 5 * time.Second
	// DefaultLost is how long a worker may be silent before it is lost:
	// twenty heartbeats, so that a busy machine's stalls (5 s were seen
	// under a race-enabled test suite beside other work) write no live
	// worker off.
	DefaultLost = 10 * time.Second
	// DefaultLease is how long a worker keeps its load going without a
	// word from its coordinator: less than DefaultLost, so that a worker
	// cut off from its coordinator has stopped before it is written off.
	DefaultLease = 8 * time.Second
	// beatEvery is the heartbeat period, both ways.
	beatEvery = 500 * time.Millisecond
	// snapEvery is how often a worker takes and sends its tally.
	snapEvery = time.Second
	// clockSamples is the round trips that measure a worker's clock.
	clockSamples = 8
	// clockWait bounds one clock reading, asked again every retryAfter: a
	// slow reading is kept only if none is faster, so a busy machine's
	// slow answers cost precision, never the run.
	clockWait = 30 * time.Second
	// retryAfter is how long an idempotent request waits before it asks
	// again.
	retryAfter = 250 * time.Millisecond
)

// subjects names the NATS subjects of one fleet and run.
type subjects struct{ fleet, run string }

func (s subjects) join() string { return "tandem." + s.fleet + ".join" }
func (s subjects) worker(id, what string) string {
	return fmt.Sprintf("tandem.%s.%s.w.%s.%s", s.fleet, s.run, id, what)
}
func (s subjects) beat() string        { return "tandem." + s.fleet + "." + s.run + ".beat" }
func (s subjects) stop() string        { return "tandem." + s.fleet + "." + s.run + ".stop" }
func (s subjects) workerBeats() string { return "tandem." + s.fleet + "." + s.run + ".w.*.beat" }
func (s subjects) done() string        { return "tandem." + s.fleet + "." + s.run + ".done" }
func (s subjects) snaps() string       { return "tandem." + s.fleet + "." + s.run + ".snap.>" }
func (s subjects) snap(part int, id string) string {
	return fmt.Sprintf("tandem.%s.%s.snap.%d.%s", s.fleet, s.run, part, id)
}
func (s subjects) partSnaps(part int) string {
	return fmt.Sprintf("tandem.%s.%s.snap.%d.*", s.fleet, s.run, part)
}
func (s subjects) stream() string { return "TANDEM_" + s.fleet + "_" + s.run }

// joinRequest is a worker's request to join the next run.
type joinRequest struct {
	ID    string `json:"id"`
	Host  string `json:"host"`
	Cores int    `json:"cores"`
	// Version is the worker's tandem version: a fleet runs one version.
	Version string `json:"version"`
	// Nonce is the worker process's own: a join asked again (its reply
	// was lost) gets the same answer.
	Nonce string `json:"nonce"`
	// Key is the worker's curve public key for the run: what the
	// coordinator sends it is sealed to it, what it sends is sealed by it.
	Key string `json:"key"`
}

// joinReply accepts a worker into a run, or refuses it.
type joinReply struct {
	Refused string `json:"refused,omitempty"`
	Run     string `json:"run,omitempty"`
	Index   int    `json:"index"`
	Count   int    `json:"count"`
	LeaseNs int64  `json:"lease_ns"`
	// Key is the coordinator's curve public key for the run.
	Key string `json:"key,omitempty"`
}

// clockRequest asks a worker for its clock; sealed, it proves the
// coordinator asks.
type clockRequest struct {
	Run string `json:"run"`
}

// clockReply is a worker's clock, read when the request came.
type clockReply struct {
	UnixNs int64 `json:"unix_ns"`
}

// Assignment is a worker's part of one load of the run: the Index-th of
// Count, and the spec of the whole load, which the worker's Job splits. A
// run (a session) may hold many loads, numbered by Part from 1.
type Assignment struct {
	Run   string          `json:"run"`
	Part  int             `json:"part"`
	Index int             `json:"index"`
	Count int             `json:"count"`
	Spec  json.RawMessage `json:"spec"`
	// BarrierNs bounds the wait from ready to the start.
	BarrierNs int64 `json:"barrier_ns"`
}

// readyReply answers an assignment once the worker's connections are
// open, or says why it cannot run its part.
type readyReply struct {
	Err   string `json:"err,omitempty"`
	Share string `json:"share,omitempty"`
}

// startMsg is the agreed start of a part, on the worker's own clock.
type startMsg struct {
	Part     int   `json:"part"`
	AtUnixNs int64 `json:"at_unix_ns"`
}

// stopMsg stops every worker's load (or Worker's only): of one part, or
// (Part 0) the run.
type stopMsg struct {
	Part   int    `json:"part"`
	Worker string `json:"worker,omitempty"`
	Reason string `json:"reason"`
}

// beat is a worker's heartbeat: the part it runs (0: none) and the
// requests it has counted in it so far.
type beat struct {
	Part   int   `json:"part"`
	Sent   int64 `json:"sent"`
	OK     int64 `json:"ok"`
	Errors int64 `json:"errors"`
}

// snapshot is one tally a worker sent; Seq counts from 1, and the final
// one carries the worker's own report of its part.
type snapshot struct {
	Worker string     `json:"worker"`
	Part   int        `json:"part"`
	Seq    int64      `json:"seq"`
	Tally  load.Tally `json:"tally"`
	Final  *Report    `json:"final,omitempty"`
}

// Report is a worker's own account of its part, sent with its last tally.
type Report struct {
	// Share says what part of the load the worker ran.
	Share string `json:"share"`
	// Sample is the worker's own sample of its part, as a single machine
	// would have written it.
	Sample results.Sample `json:"sample"`
	// Warnings are the worker's own diagnoses (a busy generator, …).
	Warnings []string `json:"warnings,omitempty"`
	// StartedUnixNs is when its load started, on its own clock.
	StartedUnixNs int64 `json:"started_unix_ns"`
	// CPUNs is the CPU time the worker's process spent on its part.
	CPUNs int64 `json:"cpu_ns"`
	// Err is why the part failed, if it did.
	Err string `json:"err,omitempty"`
	// Snapshots is how many tallies the worker sent, this one included.
	Snapshots int64 `json:"snapshots"`
	// Stopped says why the part stopped early, if it did.
	Stopped string `json:"stopped,omitempty"`
}
