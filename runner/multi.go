package runner

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/values"
	"github.com/tandem-bench/tandem/verdict"
)

// multi is what a scenario of several calls (a mix or a flow) has beside
// one call's: the values of each part's call, opened once for the
// scenario and shared by every target's callers, and the part scenarios
// its runs' parts are recorded in, which follow it in the results.
type multi struct {
	sc   *study.Scenario
	kind string
	// calls are the parts' calls as they are sent (a flow's step's with a
	// slot for each capture it uses), names their names.
	calls []*study.Call
	names []string
	vals  []*driver.Values
	// drawn says which parts' values are drawn (not a flow's captures
	// alone): those a digest is recorded of.
	drawn []bool
}

// newMulti describes a mix or a flow; nil for a scenario of one call.
func (r *runner) newMulti(sc *study.Scenario) (*multi, error) {
	m := &multi{sc: sc}
	switch {
	case sc.IsMix():
		m.kind = results.KindMix
		for _, mc := range sc.Calls {
			m.calls, m.names = append(m.calls, r.s.Calls[mc.Call]), append(m.names, mc.Call)
		}
	case sc.IsFlow():
		m.kind = results.KindFlow
		for k, st := range sc.Flow {
			c, err := r.s.StepCall(sc, k)
			if err != nil {
				return nil, err
			}
			m.calls, m.names = append(m.calls, c), append(m.names, st.Call)
		}
	default:
		return nil, nil
	}
	if r.o.Fleet != nil {
		return nil, fmt.Errorf("scenario %s: a %s, which a run on workers (--workers) does not carry yet", sc.Name, m.kind)
	}
	return m, nil
}

// partName is the name of part k's scenario: the scenario's, a slash and
// the call's (a flow's step's with its number, since two steps may send
// one call).
func (m *multi) partName(k int) string {
	if m.kind == results.KindFlow {
		return fmt.Sprintf("%s/%d.%s", m.sc.Name, k+1, m.names[k])
	}
	return m.sc.Name + "/" + m.names[k]
}

// open opens each part's values, and returns the most requests a run may
// send (0: no limit), the fewest rows of any part's feeders read once.
func (m *multi) open(ctx context.Context, r *runner) (int64, error) {
	var limit int64
	m.vals, m.drawn = make([]*driver.Values, len(m.calls)), make([]bool, len(m.calls))
	for k, c := range m.calls {
		m.drawn[k] = slices.ContainsFunc(slices.Collect(maps.Values(c.ValueSpecs)), func(sp values.Spec) bool {
			_, captured := sp.(values.Slot)
			return !captured
		})
		v, n, err := r.openCallValues(ctx, m.partName(k), m.names[k], c)
		if err != nil {
			m.close()
			return 0, err
		}
		m.vals[k] = v
		if n > 0 && (limit == 0 || n < limit) {
			limit = n
		}
	}
	return limit, nil
}

// close closes the parts' values.
func (m *multi) close() {
	for _, v := range m.vals {
		if v != nil {
			v.Set().Close()
		}
	}
	m.vals = nil
}

// caller builds the mix's or the flow's Caller for target l.
func (m *multi) caller(ctx context.Context, r *runner, l *live) (driver.Caller, error) {
	parts := make([]driver.Caller, len(m.calls))
	for k, c := range m.calls {
		var err error
		if parts[k], err = r.callerOf(ctx, l, m.names[k], c, m.vals[k]); err != nil {
			return nil, err
		}
	}
	if m.kind == results.KindMix {
		calls := make([]driver.MixCall, len(parts))
		for k, mc := range m.sc.Calls {
			calls[k] = driver.MixCall{Name: mc.Call, Weight: mc.Weight, Caller: parts[k]}
		}
		return driver.NewMix(r.s.Seed, m.sc.Name, calls)
	}
	steps := make([]driver.FlowStep, len(parts))
	for k, st := range m.sc.Flow {
		var err error
		if steps[k], err = driver.NewFlowStep(st, m.calls[k], parts[k]); err != nil {
			return nil, fmt.Errorf("scenario %s: step %d: %w", m.sc.Name, k+1, err)
		}
	}
	return driver.NewFlow(steps)
}

// scenarios are the part scenarios of the scenario recorded as whole:
// each its part's call, the whole's metric and load.
func (m *multi) scenarios(whole results.Scenario) []results.Scenario {
	total := 0.0
	for _, mc := range m.sc.Calls {
		total += mc.Weight
	}
	out := make([]results.Scenario, len(m.calls))
	for k := range m.calls {
		p := results.Scenario{Name: m.partName(k), Call: m.names[k], Metric: whole.Metric, Direction: whole.Direction, Unit: whole.Unit,
			Load: whole.Load, Rounds: []results.Round{}, Summary: []results.Summary{}, Comparisons: []results.Comparison{},
			Part: &results.Part{Of: whole.Name, Index: k}}
		if p.Metric == "recovery_ns" { // a fault's recovery is the whole load's
			p.Metric = "latency_p50_ns"
		}
		if m.kind == results.KindMix {
			p.Part.Weight = m.sc.Calls[k].Weight
			p.Part.Share = m.sc.Calls[k].Weight / total
		}
		out[k] = p
	}
	return out
}

// describe is the progress line of a mix or a flow.
func (m *multi) describe() string {
	var what []string
	for k, name := range m.names {
		if m.kind == results.KindMix {
			what = append(what, fmt.Sprintf("%s (weight %g)", name, m.sc.Calls[k].Weight))
		} else {
			what = append(what, name)
		}
	}
	if m.kind == results.KindMix {
		return fmt.Sprintf("%s: a mix of %s, drawn from the seed: the same calls in the same order to every target", m.sc.Name, strings.Join(what, ", "))
	}
	return fmt.Sprintf("%s: a flow of %s, each client its own captures; a request is one pass", m.sc.Name, strings.Join(what, " → "))
}

// partRounds records round rd's parts (its sample's, in order) as rounds
// of the part scenarios: a round that failed fails every part, a part
// without a successful answer fails alone.
func partRounds(rd results.Round, parts []*results.Scenario) {
	for k, p := range parts {
		prd := results.Round{Round: rd.Round, Order: rd.Order, Target: rd.Target, Concurrency: rd.Concurrency,
			GeneratorCPUNs: rd.GeneratorCPUNs, GeneratorCPUUse: rd.GeneratorCPUUse, Failed: rd.Failed, Error: rd.Error}
		if k < len(rd.Parts) {
			prd.Sample = rd.Parts[k]
		}
		if prd.Errors == nil {
			prd.Errors = map[string]int64{}
		}
		if !prd.Failed {
			prd.Headline = headline(prd.Sample, p.Direction == results.Higher)
			if math.IsNaN(prd.Headline) {
				prd.Failed, prd.Error, prd.Headline = true, "no successful "+p.Unit, 0
			}
		}
		p.Rounds = append(p.Rounds, prd)
	}
}

// judgeParts judges each part scenario's level as the whole's: by the
// study's policy, in the run's family.
func (r *runner) judgeParts(parts []*results.Scenario, whole *results.Scenario, ls []*live, level int, d stats.Design) {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.spec.Name
	}
	for _, p := range parts {
		p.Requests, p.DurationNs = whole.Requests, whole.DurationNs
		verdict.Level(r.policy, p, level, names, r.s.Baseline, r.s.AA, d)
	}
}

// recordPicks records the digest of a mix's picks: over the most
// requests any target's runs sent, which covers every run.
func (r *runner) recordPicks(sc *study.Scenario, out *results.Scenario, callers map[string]load.Dialer) error {
	var most *driver.Mix
	for _, c := range callers {
		if mx, ok := c.(*driver.Mix); ok && (most == nil || mx.Requests() > most.Requests()) {
			most = mx
		}
	}
	if most == nil {
		return nil
	}
	d := most.Sequence()
	out.Picks = &results.ValuesDigest{Requests: d.Requests, SHA256: d.SHA256}
	r.progress("%s: the mix's calls of %d requests, sha256 %s", sc.Name, d.Requests, d.SHA256[:16])
	return r.save()
}
