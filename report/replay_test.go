package report

import (
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
)

// A replayed scenario's table says which recording it replayed, and how.
func TestReplayNote(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for _, c := range []struct {
		model string
		rp    results.ReplayedLoad
		want  string
	}{
		{"open", results.ReplayedLoad{File: "t.jsonl", SHA256: sum, Exchanges: 12, Speed: 2, Loop: true},
			"replays t.jsonl (12 recorded requests, sha256 abababababab…) on the recorded timetable ×2, looped, open loop, lower is better"},
		{"open", results.ReplayedLoad{File: "t.jsonl", SHA256: sum, Exchanges: 3, Speed: 1},
			"replays t.jsonl (3 recorded requests, sha256 abababababab…) on the recorded timetable, open loop"},
		{"closed", results.ReplayedLoad{File: "t.jsonl", SHA256: sum, Exchanges: 3, Speed: 1},
			"replays t.jsonl (3 recorded requests, sha256 abababababab…) in order, as fast as the clients go, closed loop"},
	} {
		rp := c.rp
		sc := &results.Scenario{Name: "s", Call: "replay t.jsonl", Direction: "lower", Unit: "request", Load: results.Load{Model: results.Model(c.model)}, Replay: &rp}
		if note := scenarioTable(sc).Note; !strings.HasPrefix(note, c.want) {
			t.Errorf("note %q; want %q", note, c.want)
		}
	}
}
