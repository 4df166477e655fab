package results

import (
	"strings"
	"testing"
)

// Two runs that replayed different recordings (or at another speed)
// measured different things; a scenario without a replay keeps its
// fingerprint.
func TestReplayFingerprint(t *testing.T) {
	base := Scenario{Call: "replay t.jsonl", Metric: "latency_p50_ns", Load: Load{Model: "open"}}
	plain := base
	plain.Replay = nil
	one := base
	one.Replay = &ReplayedLoad{File: "t.jsonl", SHA256: strings.Repeat("a", 64), Exchanges: 3, Speed: 1}
	other := base
	other.Replay = &ReplayedLoad{File: "t.jsonl", SHA256: strings.Repeat("b", 64), Exchanges: 3, Speed: 1}
	faster := base
	faster.Replay = &ReplayedLoad{File: "t.jsonl", SHA256: strings.Repeat("a", 64), Exchanges: 3, Speed: 2}
	same := base
	same.Replay = &ReplayedLoad{File: "t.jsonl", SHA256: strings.Repeat("a", 64), Exchanges: 3, Speed: 1}
	if one.Fingerprint() == other.Fingerprint() || one.Fingerprint() == faster.Fingerprint() || one.Fingerprint() != same.Fingerprint() ||
		one.Fingerprint() == plain.Fingerprint() {
		t.Errorf("fingerprints: %s %s %s %s %s", one.Fingerprint(), other.Fingerprint(), faster.Fingerprint(), same.Fingerprint(), plain.Fingerprint())
	}
}
