package demo

import (
	"slices"
	"testing"

	"github.com/tandem-bench/tandem/study"
)

func TestQuickSkipsOnlyNamedScenarios(t *testing.T) {
	full, err := Study(false)
	if err != nil {
		t.Fatal(err)
	}
	quick, err := Study(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range quickSkips {
		if !slices.ContainsFunc(full.Scenarios, func(sc study.Scenario) bool { return sc.Name == name }) {
			t.Errorf("quickSkips names %q, which is not a demo scenario", name)
		}
	}
	if got, want := len(quick.Scenarios), len(full.Scenarios)-len(quickSkips); got != want {
		t.Errorf("quick demo has %d scenarios; want %d", got, want)
	}
	if quick.Startup.Runs != 1 || full.Startup.Runs != 3 {
		t.Errorf("startup runs: quick %d, full %d; want 1 and 3", quick.Startup.Runs, full.Startup.Runs)
	}
}
