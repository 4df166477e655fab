package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
)

// TestNetworkTable holds that the text report lists each link of a
// target's path with its conditions and measured round trips, and shows
// no network table for a run without links.
func TestNetworkTable(t *testing.T) {
	r := results.New()
	r.Targets = []results.Target{{Name: "plain", Startup: &results.Startup{ReadyNs: 1e6}}}
	var b bytes.Buffer
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Network paths") {
		t.Fatalf("a run without links shows a network table:\n%s", b.String())
	}
	r.Targets = append(r.Targets, results.Target{Name: "far", Startup: &results.Startup{ReadyNs: 1e6}, Network: &results.Network{
		Seed: 1,
		Up:   results.LinkConditions{DelayNs: 25e6, JitterNs: 5e6, Distribution: "normal", Loss: 0.01},
		Down: results.LinkConditions{DelayNs: 25e6, BandwidthBytesPerS: 10e6, ResetAfterBytes: 2048},
		Links: []results.Link{
			{Endpoint: "http", Upstream: "127.0.0.1:8080", Listen: "127.0.0.1:40001", RTTCall: "ping", RTTSamples: 5, RTTNs: 50.3e6, DirectRTTNs: 90e3,
				MeasuredUp:   &results.LinkFlow{Bytes: 1000, Pieces: 10, MeanHeldNs: 25.2e6, MaxHeldNs: 30e6, Lost: 2},
				MeasuredDown: &results.LinkFlow{Bytes: 5000, Pieces: 20, MeanHeldNs: 25.1e6, MaxHeldNs: 29e6}},
			{Endpoint: "admin", Upstream: "127.0.0.1:8081", Listen: "127.0.0.1:40002", Note: "not timed"},
		}}})
	b.Reset()
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Network paths", "127.0.0.1:40001 → 127.0.0.1:8080", "delay 25ms ± 5ms normal, loss 1.0 %",
		"delay 25ms, 10MB/s, reset after 2.00 KiB", "50.3ms (90µs), ping", "127.0.0.1:40002 → 127.0.0.1:8081",
		"held 25.2ms / 25.1ms; lost 2 / 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	// a group's links between its nodes, one through the kernel
	r.Targets = append(r.Targets, results.Target{Name: "net", Startup: &results.Startup{ReadyNs: 1e6}, PeerNetwork: &results.PeerNetwork{
		Seed: 1, Via: "kernel",
		Links: []results.PeerLink{{From: "eu0", To: "us0", Port: "p2p", FromRegion: "eu", ToRegion: "us", Listen: "127.0.0.2:40003", Upstream: "127.0.0.2:26656",
			Up: results.LinkConditions{DelayNs: 50e6, Loss: 0.01}, Down: results.LinkConditions{DelayNs: 50e6},
			MeasuredUp:   &results.LinkFlow{Bytes: 9000, Pieces: 30, MeanHeldNs: 50.4e6, MaxHeldNs: 61e6, Lost: 3, Packets: 300},
			MeasuredDown: &results.LinkFlow{Bytes: 9000, Pieces: 30, MeanHeldNs: 50.2e6, MaxHeldNs: 60e6, Packets: 280}}}}})
	b.Reset()
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	out = b.String()
	for _, want := range []string{"Links between nodes", "eu0 → us0 (eu → us) (via kernel)", "held 50.4ms / 50.2ms; lost 3 / 0 of 300 / 280 packets"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
}
