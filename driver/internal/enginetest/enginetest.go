// Package enginetest runs one load on both of load's engines, for the
// tests that hold the event loop to the worker engine's counts.
package enginetest

import (
	"context"
	"testing"

	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
)

// RunBoth runs c against d on the event loop, then on the workers, and
// returns their samples; it fails the test if d offers the loop no wire
// or a run fails or runs on another engine.
func RunBoth(t testing.TB, d load.Dialer, c load.Closed) (loop, workers results.Sample) {
	t.Helper()
	if wd, ok := d.(load.Wired); !ok {
		t.Fatalf("%T offers the event loop nothing", d)
	} else if _, ok := wd.Wire(); !ok {
		t.Fatalf("%T: no wire for the event loop", d)
	}
	for _, e := range []string{load.EngineLoop, load.EngineWorkers} {
		c.Engine = e
		s, err := c.Run(context.Background(), d)
		if err != nil {
			t.Fatalf("engine %s: %v", e, err)
		}
		if s.Engine != e {
			t.Fatalf("engine %s ran on %q", e, s.Engine)
		}
		if e == load.EngineLoop {
			loop = s
		} else {
			workers = s
		}
	}
	return loop, workers
}
