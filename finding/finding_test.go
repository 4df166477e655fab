package finding_test

import (
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/finding"
	"github.com/tandem-bench/tandem/results"
)

// stall is the demo's stall on b's balance call (report/testdata/demo-results.json).
func stall() finding.Stall {
	probe := func(p50, p99 int64, hdr string, share float64) finding.Probe {
		return finding.Probe{Sample: results.Sample{LatencyNs: results.Distribution{P50: p50, P99: p99}, HDR: hdr}, Share: share}
	}
	return finding.Stall{Target: "b", Scenario: "getbalance-jsonrpc-latency", Call: "balance", Share: 0.9137, Requests: 100,
		Probe: probe(44007423, 48267263, "PROBE", 0.97), QuickACK: probe(217087, 1742847, "QUICK", 0)}
}

// The evidence keeps every figure the summary gives, and the summary is
// written from the same figures.
func TestStallFinding(t *testing.T) {
	f := stall().Finding()
	if f.ID != finding.DelayedACKStall || f.Target != "b" || f.Scenario != "getbalance-jsonrpc-latency" {
		t.Errorf("finding %q on %q (%q)", f.ID, f.Target, f.Scenario)
	}
	for _, c := range []struct{ key, want string }{
		{"share_36_48ms", "0.914"},
		{"probe_p50_ns", "44007423"},
		{"probe_p99_ns", "48267263"},
		{"probe_share_36_48ms", "0.970"},
		{"quickack_p50_ns", "217087"},
		{"quickack_p99_ns", "1742847"},
		{"quickack_share_36_48ms", "0.000"},
		{"probe_requests", "100"},
		{"probe_hdr", "PROBE"},
		{"quickack_hdr", "QUICK"},
		{"fix", "set TCP_NODELAY on accepted sockets (Go does by default); write each response in one write"},
		{"confirmation", "the same call, one client, with TCP_QUICKACK set before every read"},
		{"delayed_ack_window_ms", "36-48"},
		{"suspect_share_threshold", "0.2"},
		{"confirmed_share_threshold", "0.05"},
	} {
		if got := f.Evidence[c.key]; got != c.want {
			t.Errorf("evidence %s = %q; want %q", c.key, got, c.want)
		}
	}
	if len(f.Evidence) != 15 {
		t.Errorf("%d evidence entries; want 15", len(f.Evidence))
	}
	for _, want := range []string{"b stalls ~40 ms on balance: 97% of its answers take 36–48 ms, 0% when the client ACKs at once",
		"(p50 44ms → 217µs)", "Fix: " + f.Evidence["fix"] + "."} {
		if !strings.Contains(f.Summary, want) {
			t.Errorf("summary %q lacks %q", f.Summary, want)
		}
	}
}

func TestSuspect(t *testing.T) {
	for _, c := range []struct {
		share float64
		want  string
	}{
		{0.2, "b answers balance in 36–48 ms 20% of the time"},
		{0.974, "b answers balance in 36–48 ms 97% of the time"},
		{1, "b answers balance in 36–48 ms 100% of the time"},
	} {
		if got := finding.Suspect("b", "balance", c.share); got != c.want {
			t.Errorf("Suspect(%v) = %q; want %q", c.share, got, c.want)
		}
	}
}

// A stall is confirmed exactly when the plain probe reproduces it and the
// quick-ACK probe removes it; otherwise the reason names the figure.
func TestConfirmed(t *testing.T) {
	for _, tc := range []struct {
		plain, quick float64
		ok           bool
		why          string
	}{
		{0.97, 0, true, ""},
		{finding.SuspectShare, finding.ConfirmedShare, true, ""},
		{0.19, 0, false, "does not reproduce"},
		{0.97, 0.06, false, "not the delayed ACK"},
		{0.1, 0.5, false, "does not reproduce"},
	} {
		ok, why := finding.Confirmed(tc.plain, tc.quick)
		if ok != tc.ok || !strings.Contains(why, tc.why) || ok && why != "" {
			t.Errorf("Confirmed(%v, %v) = %v, %q; want %v, %q", tc.plain, tc.quick, ok, why, tc.ok, tc.why)
		}
	}
}
