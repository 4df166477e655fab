package study

import (
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/stats"
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

// rule: spread at study level is the layered broker study's design: fixed
// rounds (3 unless set), 5 s runs (unless set), no adaptive rounds; rule
// shift (the default) is adaptive up to max_rounds with 250 ms runs.
func TestSpreadRuleDefaults(t *testing.T) {
	study := func(defaults string) string {
		return "version: 1\nname: p\ndefaults: {" + defaults + "}\ntargets:\n  - {name: a, endpoints: {http: \"http://127.0.0.1:1/\"}}\n" +
			"calls:\n  ping: {http: {path: /}}\nscenarios:\n  - {name: free, call: ping, load: {concurrency: 1}}\n" +
			"  - {name: fixed, call: ping, load: {concurrency: 1}, rounds: 5}\n"
	}
	for _, c := range []struct {
		defaults string
		rule     stats.Rule
		rounds   int // the free scenario's
		adaptive bool
		minDur   time.Duration
	}{
		{"rule: spread", stats.RuleSpread, 3, false, 5 * time.Second},
		{"rule: spread, rounds: 4, min_duration: 1s", stats.RuleSpread, 4, false, time.Second},
		{"rule: spread, max_rounds: 50", stats.RuleSpread, 3, false, 5 * time.Second},
		{"warmup: 1s", stats.RuleShift, DefaultMaxRounds, true, 250 * time.Millisecond},
	} {
		s, err := Parse("p.yaml", []byte(study(c.defaults)))
		if err != nil {
			t.Fatalf("%s: %v", c.defaults, err)
		}
		free, fixed := s.Scenarios[0], s.Scenarios[1]
		if p := s.Defaults.Policy(); p.Rule != c.rule || free.Rounds != c.rounds || free.Adaptive != c.adaptive || fixed.Rounds != 5 || fixed.Adaptive ||
			s.Defaults.MinDuration != c.minDur {
			t.Errorf("%s: rule %s, rounds %d (adaptive %v), fixed %d (adaptive %v), min_duration %v; want %s, %d (adaptive %v), 5, %v",
				c.defaults, p.Rule, free.Rounds, free.Adaptive, fixed.Rounds, fixed.Adaptive, s.Defaults.MinDuration, c.rule, c.rounds, c.adaptive, c.minDur)
		}
	}
}
