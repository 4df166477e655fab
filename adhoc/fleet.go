package adhoc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tandem-bench/tandem/fleet"
	"github.com/tandem-bench/tandem/results"
)

// FleetRun is what a load run on a fleet measured: the workers' tallies
// added up (fleet.Outcome.Sample), what is said of them, and, if the run
// ended short of the load asked for (a worker lost or failing), why.
type FleetRun struct {
	Sample   results.Sample
	Warnings []string
	// Short, if not nil, says why the figures miss a share of the load:
	// the run stopped, or went on without a lost worker's share.
	Short error
}

// RunFleet runs the load on the fleet fo names, split exactly between
// its workers (Spec.Split) and started together; say hears what the
// fleet waits for. An error is one that kept the run from starting or
// from measuring anything (a split that leaves a worker nothing, no
// fleet, no workers).
func (l *Load) RunFleet(ctx context.Context, target string, fo fleet.Options, version string, say func(string)) (FleetRun, error) {
	if err := fo.Check(); err != nil {
		return FleetRun{}, err
	}
	part, err := l.FleetPart(target)
	if err != nil {
		return FleetRun{}, err
	}
	n := fo.Count()
	for i := range n { // refuse a split that leaves a worker nothing, before anything starts
		if _, _, err := part.Spec.Split(i, n); err != nil {
			return FleetRun{}, fmt.Errorf("%s: %w", l.o.ShareFlag(), err)
		}
	}
	spec, err := json.Marshal(part)
	if err != nil {
		return FleetRun{}, err
	}
	m, err := fleet.Meet(fo, say)
	if err != nil {
		return FleetRun{}, err
	}
	defer m.Close()
	co := m.Coordinator(version)
	co.Spec = spec
	out, runErr := co.Run(ctx)
	if out == nil {
		return FleetRun{}, m.Explain(runErr)
	}
	r := FleetRun{Short: runErr}
	r.Sample, r.Warnings = out.Sample(m.Where, fo.OnLoss)
	// with --on-worker-loss continue too: the run went on, but what it
	// measured is not the load asked for (docs/distributed.md, Failures)
	if why := out.Failed(); r.Short == nil && why != "" && ctx.Err() == nil {
		r.Short = errors.New("the run is not whole: " + why)
	}
	return r, nil
}
