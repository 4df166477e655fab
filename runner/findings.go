package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/driver/quickack"
	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
)

// The delayed-ACK stall (docs/methods.md): Nagle's algorithm on the server holds
// the second write of a response until the client's delayed ACK, which
// Linux sends after ~40 ms. A latency mode inside this window is a suspect.
const (
	stallLo        = 36 * time.Millisecond
	stallHi        = 48 * time.Millisecond
	suspectShare   = 0.20 // of a target's answers inside the window
	confirmedShare = 0.05 // at most, with the client ACKing at once
	probeRequests  = 100
)

// diagnose looks for the delayed-ACK stall in every scenario's rounds and
// confirms each suspect with a probe that makes the client ACK at once: if
// the stall vanishes, the finding is reported with both distributions and
// the fix. A healthy target gives no finding.
func (r *runner) diagnose(ctx context.Context) {
	type key struct{ target, call string }
	done := map[key]bool{}
	for _, sc := range r.res.Scenarios {
		for _, l := range r.live {
			k := key{l.spec.Name, sc.Call}
			if l.err != nil || done[k] {
				continue
			}
			var hdrs []string
			for _, rd := range sc.Rounds {
				if rd.Target == l.spec.Name && !rd.Failed && rd.HDR != "" {
					hdrs = append(hdrs, rd.HDR)
				}
			}
			h, err := hdr.Merge(hdrs...)
			if err != nil || h.TotalCount() == 0 {
				continue
			}
			share := hdr.Fraction(h, stallLo, stallHi)
			if share < suspectShare {
				continue
			}
			done[k] = true
			if !quickack.Supported {
				r.warn(fmt.Sprintf("%s answers %s in 36–48 ms %.0f%% of the time, the mark of a delayed-ACK stall; confirming it needs TCP_QUICKACK, which only Linux has", l.spec.Name, sc.Call, share*100))
				continue
			}
			r.progress("diagnosis: %s answers %s in 36–48 ms %.0f%% of the time; probing with TCP_QUICKACK", l.spec.Name, sc.Call, share*100)
			if f, ok := r.confirmStall(ctx, l, sc, share); ok {
				r.res.Findings = append(r.res.Findings, f)
				r.progress("finding %s on %s: %s", f.ID, l.spec.Name, f.Summary)
			}
		}
	}
}

// confirmStall probes call on l twice, as it is and with the client ACKing
// at once, in a closed loop of one client.
func (r *runner) confirmStall(ctx context.Context, l *live, sc results.Scenario, share float64) (results.Finding, bool) {
	call := r.s.Calls[sc.Call]
	ep, err := call.EndpointName(l.spec)
	if err != nil {
		return results.Finding{}, false
	}
	probe := func(quick bool) (results.Sample, float64, error) {
		c, err := driver.New(ctx, call, l.endpoints[ep], driver.Options{Timeout: r.s.Defaults.Timeout, QuickACK: quick})
		if err != nil {
			return results.Sample{}, 0, err
		}
		s, err := load.Closed{Concurrency: 1, Requests: probeRequests, Duration: 20 * time.Second, Timeout: r.s.Defaults.Timeout}.Run(ctx, c)
		if err != nil {
			return s, 0, err
		}
		h, err := hdr.Merge(s.HDR)
		if err != nil {
			return s, 0, err
		}
		return s, hdr.Fraction(h, stallLo, stallHi), nil
	}
	plain, plainShare, err := probe(false)
	if err != nil || plainShare < suspectShare {
		return results.Finding{}, false // the probe does not reproduce the stall
	}
	quick, quickShare, err := probe(true)
	if err != nil || quickShare > confirmedShare {
		return results.Finding{}, false // the stall is not the delayed ACK
	}
	return results.Finding{
		ID: "delayed-ack-stall", Target: l.spec.Name, Scenario: sc.Name,
		Summary: fmt.Sprintf("%s stalls ~40 ms on %s: %.0f%% of its answers take 36–48 ms, %.0f%% when the client ACKs at once "+
			"(p50 %s → %s): its responses wait for the client's delayed ACK (TCP_NODELAY off). "+
			"Fix: set TCP_NODELAY on accepted sockets, and write each response in one write.",
			l.spec.Name, sc.Call, plainShare*100, quickShare*100,
			human.Duration(float64(plain.LatencyNs.P50)), human.Duration(float64(quick.LatencyNs.P50))),
		Evidence: map[string]string{
			"share_36_48ms":             fmt.Sprintf("%.3f", share),
			"probe_p50_ns":              fmt.Sprint(plain.LatencyNs.P50),
			"probe_p99_ns":              fmt.Sprint(plain.LatencyNs.P99),
			"probe_share_36_48ms":       fmt.Sprintf("%.3f", plainShare),
			"quickack_p50_ns":           fmt.Sprint(quick.LatencyNs.P50),
			"quickack_p99_ns":           fmt.Sprint(quick.LatencyNs.P99),
			"quickack_share_36_48ms":    fmt.Sprintf("%.3f", quickShare),
			"probe_requests":            fmt.Sprint(probeRequests),
			"probe_hdr":                 plain.HDR,
			"quickack_hdr":              quick.HDR,
			"fix":                       "set TCP_NODELAY on accepted sockets (Go does by default); write each response in one write",
			"confirmation":              "the same call, one client, with TCP_QUICKACK set before every read",
			"delayed_ack_window_ms":     "36-48",
			"suspect_share_threshold":   fmt.Sprint(suspectShare),
			"confirmed_share_threshold": fmt.Sprint(confirmedShare),
		},
	}, true
}
