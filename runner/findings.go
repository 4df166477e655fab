package runner

import (
	"context"
	"errors"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/driver/quickack"
	"github.com/tandem-bench/tandem/finding"
	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
)

// probeRequests is the most requests each probe of a suspect call sends.
const probeRequests = 100

// diagnose looks for the delayed-ACK stall in every scenario's rounds and
// confirms each suspect with a probe that makes the client ACK at once: if
// the stall vanishes, the finding is reported with both distributions and
// the fix. A healthy target gives no finding.
func (r *runner) diagnose(ctx context.Context) {
	type key struct{ target, call string }
	done := map[key]bool{}
	for _, sc := range r.res.Scenarios {
		if !r.probeable(sc) {
			continue
		}
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
			share := hdr.Fraction(h, finding.StallLo, finding.StallHi)
			if share < finding.SuspectShare {
				continue
			}
			done[k] = true
			if !quickack.Supported {
				r.warn(finding.Suspect(l.spec.Name, sc.Call, share) + ", the mark of a delayed-ACK stall; confirming it needs TCP_QUICKACK, which only Linux has")
				continue
			}
			r.progress("diagnosis: %s; probing with TCP_QUICKACK", finding.Suspect(l.spec.Name, sc.Call, share))
			if f, ok := r.confirmStall(ctx, l, sc, share); ok {
				r.res.Findings = append(r.res.Findings, f)
				r.progress("finding %s on %s: %s", f.ID, l.spec.Name, f.Summary)
			}
		}
	}
}

// probeable reports whether a scenario's call can be probed alone: a
// study's call as it is, not a replay, a mix or a flow, nor a flow's step (which
// takes captures).
func (r *runner) probeable(sc results.Scenario) bool {
	if r.s.Calls[sc.Call] == nil || sc.Kind != "" || sc.Replay != nil {
		return false
	}
	for _, o := range r.res.Scenarios {
		if sc.Part != nil && o.Name == sc.Part.Of && o.Kind == results.KindFlow {
			return false
		}
	}
	return true
}

// confirmStall probes call on l in a closed loop of one client, as it is
// and with the client ACKing at once, in interleaved blocks (so that the
// machine's own stalls fall on both alike), and makes the finding when
// finding.Confirmed says so; else it says why not.
func (r *runner) confirmStall(ctx context.Context, l *live, sc results.Scenario, share float64) (results.Finding, bool) {
	call := r.s.Calls[sc.Call]
	ep, err := call.EndpointName(l.spec)
	if err != nil {
		return results.Finding{}, false
	}
	block := func(quick bool) (results.Sample, error) {
		c, err := driver.New(ctx, call, l.endpoints[ep], driver.Options{Timeout: r.s.Defaults.Timeout, QuickACK: quick})
		if err != nil {
			return results.Sample{}, err
		}
		// both probes on the workers: the loop does not speak QuickACK, and
		// the two must differ in that alone
		return load.Spec{Kind: load.KindClosed, Clients: 1, Requests: probeRequests / probeBlocks, Duration: 20 * time.Second / probeBlocks,
			Timeout: r.s.Defaults.Timeout, Engine: load.EngineWorkers}.Run(ctx, c)
	}
	var plainS, quickS []results.Sample
	for range probeBlocks {
		for _, quick := range []bool{false, true} {
			s, err := block(quick)
			if err != nil {
				r.progress("diagnosis: %s's %s not probed: %v", l.spec.Name, sc.Call, err)
				return results.Finding{}, false
			}
			if quick {
				quickS = append(quickS, s)
			} else {
				plainS = append(plainS, s)
			}
		}
	}
	plain, err := probeOf(plainS)
	if err == nil && plain.Sample.OK == 0 {
		err = errors.New("the probe got no answer")
	}
	if err != nil {
		r.progress("diagnosis: no finding on %s's %s: %v", l.spec.Name, sc.Call, err)
		return results.Finding{}, false
	}
	quick, err := probeOf(quickS)
	if err == nil && quick.Sample.OK == 0 {
		err = errors.New("the probe with TCP_QUICKACK got no answer")
	}
	if err != nil {
		r.progress("diagnosis: no finding on %s's %s: %v", l.spec.Name, sc.Call, err)
		return results.Finding{}, false
	}
	if ok, why := finding.Confirmed(plain.Share, quick.Share); !ok {
		r.progress("diagnosis: no finding on %s's %s: %s", l.spec.Name, sc.Call, why)
		return results.Finding{}, false
	}
	return finding.Stall{Target: l.spec.Name, Scenario: sc.Name, Call: sc.Call, Share: share, Requests: probeRequests,
		Probe: plain, QuickACK: quick}.Finding(), true
}

// probeBlocks is how many blocks each probe is sent in, interleaved with
// the other's. Each block is a connection of its own, whose first answers
// Linux acknowledges at once (its quick-ACK start): more blocks would
// dilute the plain probe's share.
const probeBlocks = 2

// probeOf adds a probe's blocks up: their answers' latencies merged (its
// sample's requests, answers, distribution and histogram), and the share
// of them inside the stall window.
func probeOf(blocks []results.Sample) (finding.Probe, error) {
	var s results.Sample
	encoded := make([]string, 0, len(blocks))
	for _, b := range blocks {
		s.Requests += b.Requests
		s.OK += b.OK
		s.DurationNs += b.DurationNs
		if b.HDR != "" {
			encoded = append(encoded, b.HDR)
		}
	}
	h, err := hdr.Merge(encoded...)
	if err != nil {
		return finding.Probe{}, err
	}
	if s.HDR, err = hdr.Encode(h); err != nil {
		return finding.Probe{}, err
	}
	s.LatencyNs = hdr.Distribution(h)
	return finding.Probe{Sample: s, Share: hdr.Fraction(h, finding.StallLo, finding.StallHi)}, nil
}
