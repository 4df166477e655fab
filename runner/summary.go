package runner

import (
	"fmt"
	"time"

	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/verdict"
)

// serverBound says whether the baseline's run at a level was spent waiting
// for round trips: (RTT ÷ in-flight window) ≥ ½ × its time per request of
// the scenario's own call (per message for a drain), from its median
// round. The mark is judged only where it can be false: the RTT must be of
// the scenario's own transport (the same protocol and endpoint), and a
// closed loop of one client is left unmarked, since its every request
// waits one round trip by construction. why says why it was not judged.
func (r *runner) serverBound(sc *study.Scenario, out *results.Scenario, level int) (bound bool, why string) {
	var base *live
	for _, l := range r.live {
		if l.spec.Name == r.s.Baseline {
			base = l
		}
	}
	if base == nil || base.res.RTTNs == 0 {
		return false, ""
	}
	drain := out.Load.Model == results.ModelDrain
	window := float64(level)
	switch {
	case out.Load.Prefetch > 0:
		window = float64(out.Load.Prefetch) // a consumer's deliveries in flight
	case out.Load.Model != results.ModelClosed:
		window = float64(max(out.Load.Connections, 1))
	case level <= 1:
		return false, "server-bound not judged: at one client every request waits a round trip by construction"
	}
	call := sc.Call
	switch {
	case sc.IsFlow():
		return false, "server-bound not judged: a flow's request is a pass of several round trips"
	case sc.IsMix():
		call = sc.Calls[0].Call // every call of a mix goes over one transport
	}
	if !drain && !sameTransport(r.s.Calls[base.res.RTTCall], r.s.Calls[call], base.spec) {
		return false, fmt.Sprintf("server-bound not judged: the round trip was probed with %s, another transport than %s", base.res.RTTCall, call)
	}
	var perRequest []float64
	for _, rd := range out.Rounds {
		if rd.Target != r.s.Baseline || rd.Concurrency != level || rd.Failed || rd.DurationNs <= 0 {
			continue
		}
		n := rd.Requests // per request of the call, also for a stream of messages
		if drain {
			n = int64(rd.UnitsPerS * time.Duration(rd.DurationNs).Seconds()) // per message drained
		}
		if n > 0 {
			perRequest = append(perRequest, float64(rd.DurationNs)/float64(n))
		}
	}
	if len(perRequest) == 0 {
		return false, ""
	}
	return float64(base.res.RTTNs)/window >= 0.5*stats.Summarize(perRequest, false).Median, ""
}

// sameTransport reports whether two calls reach a target over the same
// protocol and endpoint.
func sameTransport(a, b *study.Call, t *study.Target) bool {
	if a == nil || b == nil || a.Protocol() != b.Protocol() {
		return false
	}
	ea, errA := a.EndpointName(t)
	eb, errB := b.EndpointName(t)
	return errA == nil && errB == nil && ea == eb
}

// generatorCapacity is the cores the engine that ran a sample can use: one
// for the event loop, which runs on one thread, else the generator's cores.
func (r *runner) generatorCapacity(engine string) float64 {
	if engine == load.EngineLoop {
		return 1
	}
	return float64(r.generatorCores)
}

// summarize judges the level by the study's verdict policy and marks each
// comparison server-bound where the baseline's run was spent on round trips.
func (r *runner) summarize(sc *study.Scenario, out *results.Scenario, ls []*live, level int, d stats.Design) {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.spec.Name
	}
	first := len(out.Comparisons)
	verdict.Level(r.policy, out, level, names, r.s.Baseline, r.s.AA, d)
	bound, why := r.serverBound(sc, out, level)
	for i := first; i < len(out.Comparisons); i++ {
		c := &out.Comparisons[i]
		if c.Verdict == stats.NoiseReference {
			continue
		}
		c.ServerBound = bound
		if why != "" && (c.Verdict.Speed() || c.Verdict == stats.Indistinguishable || c.Verdict == stats.Inconclusive) {
			c.Reason += "; " + why
		}
		b, cand := out.Side(c.Base, level).Summary, out.Side(c.Candidate, level).Summary
		if out.Load.Model == results.ModelDrain && c.Verdict.Speed() && cand.Best > 0 && b.Best > 0 {
			// a layer's overhead: the time per message it adds to the baseline's
			c.Reason += fmt.Sprintf("; %+.2f µs per message against %s", 1e6/cand.Best-1e6/b.Best, c.Base)
		}
	}
}
