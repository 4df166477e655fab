// Package demo holds the embedded demo study that `tandem demo` runs
// against the two builds of the sample service.
package demo

import (
	_ "embed"
	"slices"

	"github.com/tandem-bench/tandem/study"
)

// File is the name the demo study is reported under.
const File = "demo.yaml"

//go:embed demo.yaml
var source []byte

// Source returns the demo study's YAML.
func Source() []byte { return append([]byte(nil), source...) }

// quickSkips are the scenarios a quick demo leaves out: build b stalls
// ~40 ms on every ping, so the 3 × 200 requests of ping-latency alone would
// take most of the quick demo's time; the stall still shows on getbalance.
// The JSON-RPC write path's mix and flow stall alike on b (the full demo
// runs them).
var quickSkips = []string{"ping-latency", "info-latency", "read-write-mix", "send-then-read"}

// Study parses the demo study. Quick shortens every run and skips
// quickSkips so the whole demo ends well within 90 s on two cores.
func Study(quick bool) (*study.Study, error) {
	s, err := study.Parse(File, source)
	if err != nil {
		return nil, err
	}
	if quick {
		s.Quick()
		s.Scenarios = slices.DeleteFunc(s.Scenarios, func(sc study.Scenario) bool {
			return slices.Contains(quickSkips, sc.Name)
		})
	}
	return s, nil
}
