package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/internal/redact"
	"github.com/tandem-bench/tandem/load"
)

// probeRTT times each target's round trip (see rttRequests) and, for a
// target with an amqp endpoint, its broker's.
func (r *runner) probeRTT(ctx context.Context) {
	for _, l := range r.live {
		fa := l.spec.Ready.FirstAnswer
		if name, ok := r.brokerCall(l); ok && l.err == nil && fa == nil {
			r.probeBroker(ctx, l, name)
			continue
		}
		if l.err != nil || fa == nil {
			continue
		}
		c, err := r.caller(ctx, l, fa.Call, nil) // a readiness call has no values
		if err != nil {
			continue
		}
		closed := load.Spec{Kind: load.KindClosed, Clients: 1, Timeout: r.s.Defaults.Timeout}
		closed.Requests, closed.Duration = rttWarmup, rttBound
		if _, err := closed.Run(ctx, c); err != nil {
			continue
		}
		closed.Requests = rttRequests
		s, err := closed.Run(ctx, c)
		if err != nil || s.OK == 0 {
			continue
		}
		l.res.RTTNs = s.LatencyNs.P50
		l.res.RTTCall = fa.Call
		r.progress("target %s: round trip of %s %v (median of %d)", l.spec.Name, fa.Call, time.Duration(s.LatencyNs.P50), s.OK)
	}
}

// brokerCall is the first of the study's broker calls (by name) that
// target l serves: its broker is the one its RTT probe times.
func (r *runner) brokerCall(l *live) (string, bool) {
	for _, name := range slices.Sorted(maps.Keys(r.s.Calls)) {
		call := r.s.Calls[name]
		if !driver.IsBroker(call) {
			continue
		}
		if ep, err := call.EndpointName(l.spec); err == nil && l.endpoints[ep] != "" {
			return name, true
		}
	}
	return "", false
}

// probeBroker times the broker behind a target's broker call, once per
// broker (by its endpoint).
func (r *runner) probeBroker(ctx context.Context, l *live, callName string) {
	ep, _ := r.s.Calls[callName].EndpointName(l.spec)
	url := l.endpoints[ep]
	rtt, ok := r.brokerRTT[url]
	if !ok {
		b, err := r.broker(l, callName)
		if err == nil {
			rtt, err = b.RTT(ctx, brokerRTTWarmup, brokerRTTCalls)
		}
		if err != nil {
			if ctx.Err() == nil {
				r.warn(fmt.Sprintf("target %s: the broker's round trip (basic.qos) could not be timed: %v", l.spec.Name, err))
			}
			return
		}
		r.brokerRTT[url] = rtt
		r.progress("broker %s: round trip of basic.qos %v (median of %d)", redact.URLs(url), rtt, brokerRTTCalls)
	}
	l.res.RTTNs, l.res.RTTCall = int64(rtt), "basic.qos"
}

// The broker's RTT probe (the layered broker study): basic.qos, the cheapest request a
// broker answers, timed brokerRTTCalls times after brokerRTTWarmup.
const (
	brokerRTTWarmup = 2000
	brokerRTTCalls  = 20000
)

// RTT probe (docs/methods.md): outside the rounds, the cheapest request a target
// answers (its ready.first_answer call) is timed in a closed loop of one
// client after a warm-up; its median is the round trip.
const (
	rttWarmup   = 200
	rttRequests = 2000
	rttBound    = 2 * time.Second
)
