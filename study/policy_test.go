package study

import (
	"strings"
	"testing"
)

// The verdict policy's thresholds: an absent key takes the default, an
// explicit 0 stands (strict), and client_bound must be above 0.
func TestDefaultsPolicy(t *testing.T) {
	study := func(defaults string) string {
		return "version: 1\nname: p\ndefaults: {" + defaults + "}\ntargets:\n  - {name: a, endpoints: {http: \"http://127.0.0.1:1/\"}}\ncalls:\n  ping: {http: {path: /}}\n"
	}
	s, err := Parse("p.yaml", []byte(study("rounds: 3")))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Defaults.Policy(); p.NoiseFloor != 0.02 || p.MaxErrorShareDiff != 0.01 || p.MaxShortfall != 0.01 || p.ClientBoundUse != 0.9 {
		t.Errorf("defaults: policy %+v", p)
	}
	s, err = Parse("p.yaml", []byte(study("noise_floor: 0, max_error_share_diff: 0, max_rate_shortfall: 0, client_bound: 100")))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Defaults.Policy(); p.NoiseFloor != 0 || p.MaxErrorShareDiff != 0 || p.MaxShortfall != 0 || p.ClientBoundUse != 1 {
		t.Errorf("explicit zeros: policy %+v; want them kept", p)
	}
	for _, bad := range []string{"client_bound: 0", "client_bound: 101", "max_error_share_diff: 100", "max_rate_shortfall: -1"} {
		if _, err := Parse("p.yaml", []byte(study(bad))); err == nil || !strings.Contains(err.Error(), "p.yaml:3:") {
			t.Errorf("%s: %v; want a located error", bad, err)
		}
	}
}
