package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/values"
)

// openValues opens the values of a scenario's call, once for the whole
// scenario: every target's callers share them, so that request i of every
// run gets the same values on each target. It returns nil for a call
// without values, and the most requests a run may send (0: no limit): the
// rows of the call's shortest feeder read once. It says so in the
// progress.
func (r *runner) openValues(ctx context.Context, sc *study.Scenario) (*driver.Values, int64, error) {
	return r.openCallValues(ctx, sc.Name, sc.Call, r.s.Calls[sc.Call])
}

// openCallValues opens the values of call callName, which the scenario
// (or its part) named name sends, as openValues does.
func (r *runner) openCallValues(ctx context.Context, name, callName string, call *study.Call) (*driver.Values, int64, error) {
	if call == nil || !call.HasValues() {
		return nil, 0, nil
	}
	if r.o.Fleet != nil {
		return nil, 0, fmt.Errorf("scenario %s: call %s has values, which a run on workers (--workers) does not carry yet", name, callName)
	}
	set, err := values.Open(ctx, r.s.Seed, call.ValueSpecs)
	if err != nil {
		return nil, 0, fmt.Errorf("scenario %s: call %s: %w", name, callName, err)
	}
	var limit int64
	line := fmt.Sprintf("%s: values %s, request i of every run the same on every target", name, describeValues(call))
	if n, ok := set.Limit(); ok {
		limit = int64(min(n, 1<<62))
		line += fmt.Sprintf("; every run ends after %d requests, the rows of %s (order once)", n, strings.Join(call.OnceFeeders(), ", "))
	}
	r.progress("%s", line)
	return driver.NewValues(set), limit, nil
}

// describeValues names a call's values and their sources, e.g.
// "${height} (zipf), ${users.*} (csv)".
func describeValues(call *study.Call) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(call.ValueSpecs)) {
		switch sp := call.ValueSpecs[name].(type) {
		case values.File:
			parts = append(parts, fmt.Sprintf("${%s.*} (%s, %s)", name, sp.Format, sp.Order))
		default:
			parts = append(parts, fmt.Sprintf("${%s} (%s)", name, sourceKind(sp)))
		}
	}
	return strings.Join(parts, ", ")
}

// sourceKind is a generator's key in a study file.
func sourceKind(sp values.Spec) string {
	switch sp.(type) {
	case values.Seq:
		return "seq"
	case values.Uniform:
		return "uniform"
	case values.Float:
		return "float"
	case values.Choice:
		return "choice"
	case values.Zipf:
		return "zipf"
	case values.Bytes:
		return "bytes"
	case values.Hex:
		return "hex"
	case values.Time:
		return "time"
	case values.Slot:
		return "captured"
	}
	return fmt.Sprintf("%T", sp)
}

// recordValues records the digest of the values the scenario's runs took:
// over the most requests any run rendered, which covers every run, since
// each numbers its requests from 0.
func (r *runner) recordValues(ctx context.Context, sc *study.Scenario, out *results.Scenario, vals *driver.Values) error {
	d, err := vals.Set().Digest(ctx, vals.Requests())
	if err != nil {
		return fmt.Errorf("scenario %s: the digest of its values: %w", sc.Name, err)
	}
	out.Values = &results.ValuesDigest{Requests: d.Requests, SHA256: d.SHA256}
	r.progress("%s: values of %d requests, sha256 %s", out.Name, d.Requests, d.SHA256[:16])
	return r.save()
}
