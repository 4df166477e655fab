// Package finding defines the diagnoses tandem makes on its own (today the
// delayed-ACK stall, docs/methods.md) and words them. A finding keeps its
// figures as data, in its evidence; its summary, the one sentence a
// results file requires beside them, is written here from the same
// figures. The runner that makes a finding stores both, and the reports
// show the stored sentence: nothing is worded twice.
package finding

import (
	"fmt"
	"time"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
)

// DelayedACKStall is the ID of the delayed-ACK stall finding.
const DelayedACKStall = "delayed-ack-stall"

// The delayed-ACK stall: Nagle's algorithm on the server holds the second
// write of a response until the client's delayed ACK, which Linux sends
// after ~40 ms. A latency mode inside the window [StallLo, StallHi] is a
// suspect; a probe with the client ACKing at once confirms it.
const (
	// StallLo and StallHi bound the window of a delayed-ACK stall.
	StallLo = 36 * time.Millisecond
	StallHi = 48 * time.Millisecond
	// SuspectShare is the share of a target's answers inside the window
	// that makes the target a suspect, and its probe a reproduction.
	SuspectShare = 0.20
	// ConfirmedShare is the largest share inside the window that the probe
	// with the client ACKing at once may keep for the stall to be confirmed.
	ConfirmedShare = 0.05
)

// The stall's fix and how it was confirmed, as the evidence and the
// summary give them.
const (
	fix          = "set TCP_NODELAY on accepted sockets (Go does by default); write each response in one write"
	confirmation = "the same call, one client, with TCP_QUICKACK set before every read"
)

// Confirmed reports whether two probes of a suspect confirm a delayed-ACK
// stall: the plain probe reproduces it (SuspectShare of its answers or
// more in the window) and the quick-ACK probe removes it (ConfirmedShare
// or less); else why not, in words.
func Confirmed(plain, quick float64) (bool, string) {
	switch {
	case plain < SuspectShare:
		return false, fmt.Sprintf("the probe answered %.0f%% in %s, under %.0f%%: it does not reproduce the stall", plain*100, Window(), SuspectShare*100)
	case quick > ConfirmedShare:
		return false, fmt.Sprintf("with the client ACKing at once %.0f%% still took %s, over %.0f%%: the stall is not the delayed ACK (or the machine stalls too)",
			quick*100, Window(), ConfirmedShare*100)
	}
	return true, ""
}

// Window is the stall window in words: "36–48 ms".
func Window() string {
	return fmt.Sprintf("%d–%d ms", StallLo.Milliseconds(), StallHi.Milliseconds())
}

// Suspect says that target answers call inside the stall window share of
// the time (a fraction): "b answers balance in 36–48 ms 97% of the time".
func Suspect(target, call string, share float64) string {
	return fmt.Sprintf("%s answers %s in %s %.0f%% of the time", target, call, Window(), share*100)
}

// Probe is one probe of a suspect call: a closed loop of one client.
type Probe struct {
	// Sample is what the probe measured.
	Sample results.Sample
	// Share is the fraction of its answers inside the stall window.
	Share float64
}

// Stall is a confirmed delayed-ACK stall: the target, the call and the
// figures that confirm it.
type Stall struct {
	// Target is the target that stalls.
	Target string
	// Scenario is the scenario whose rounds showed the stall.
	Scenario string
	// Call is the call that stalls, the scenario's.
	Call string
	// Share is the fraction of the target's answers to the call, over the
	// scenario's rounds, inside the stall window.
	Share float64
	// Requests is the number of requests each probe sent at most.
	Requests int
	// Probe is the call as it is; QuickACK the same call with the client
	// acknowledging every segment at once.
	Probe, QuickACK Probe
}

// Summary is the stall in one sentence, with its fix.
func (s Stall) Summary() string {
	return fmt.Sprintf("%s stalls ~40 ms on %s: %.0f%% of its answers take %s, %.0f%% when the client ACKs at once "+
		"(p50 %s → %s): its responses wait for the client's delayed ACK (TCP_NODELAY off). Fix: %s.",
		s.Target, s.Call, s.Probe.Share*100, Window(), s.QuickACK.Share*100,
		human.Duration(float64(s.Probe.Sample.LatencyNs.P50)), human.Duration(float64(s.QuickACK.Sample.LatencyNs.P50)), fix)
}

// Finding is the stall as a results file keeps it: its figures as evidence
// and its Summary.
func (s Stall) Finding() results.Finding {
	p, q := s.Probe.Sample, s.QuickACK.Sample
	return results.Finding{
		ID: DelayedACKStall, Target: s.Target, Scenario: s.Scenario, Summary: s.Summary(),
		Evidence: map[string]string{
			"share_36_48ms":             fmt.Sprintf("%.3f", s.Share),
			"probe_p50_ns":              fmt.Sprint(p.LatencyNs.P50),
			"probe_p99_ns":              fmt.Sprint(p.LatencyNs.P99),
			"probe_share_36_48ms":       fmt.Sprintf("%.3f", s.Probe.Share),
			"quickack_p50_ns":           fmt.Sprint(q.LatencyNs.P50),
			"quickack_p99_ns":           fmt.Sprint(q.LatencyNs.P99),
			"quickack_share_36_48ms":    fmt.Sprintf("%.3f", s.QuickACK.Share),
			"probe_requests":            fmt.Sprint(s.Requests),
			"probe_hdr":                 p.HDR,
			"quickack_hdr":              q.HDR,
			"fix":                       fix,
			"confirmation":              confirmation,
			"delayed_ack_window_ms":     fmt.Sprintf("%d-%d", StallLo.Milliseconds(), StallHi.Milliseconds()),
			"suspect_share_threshold":   fmt.Sprint(SuspectShare),
			"confirmed_share_threshold": fmt.Sprint(ConfirmedShare),
		},
	}
}
