package study

import (
	"testing"
	"time"

	"github.com/tandem-bench/tandem/link"
)

const networkStudy = `version: 1
name: paths
targets:
  - name: slow
    endpoints: {http: "http://127.0.0.1:8080/", amqp: "amqp://localhost/"}
    network:
      delay: 25ms
      jitter: 5ms
      distribution: normal
      loss: 0.01
      bandwidth: 100Mbit/s
      seed: 9
      up: {delay: 10ms, reset_after_bytes: 1000}
      down: {bandwidth: 1MB/s, reset_after: 2s}
  - name: cut
    endpoints: {grpc: "127.0.0.1:9000"}
  - name: plain
    endpoints: {http: "http://127.0.0.1:8081/"}
calls:
  ping: {http: {path: /}}
scenarios:
  - name: s
    call: ping
    targets: [slow, plain]
    load: {rate: 10}
    duration: 2s
  - name: faults
    call: ping
    targets: [cut]
    load: {rate: 10}
    duration: 2s
    perturbations:
      - {at: 1s, action: degrade, for: 200ms, network: {loss: 0.5, down: {delay: 1ms}}}
`

// TestNetworkConditions holds that a target's network lays the shorthand
// on both directions and up and down over it, that a degrade lays its keys
// over the target's, and that a network perturbation gives a target a link.
func TestNetworkConditions(t *testing.T) {
	s, err := Parse("paths.yaml", []byte(networkStudy))
	if err != nil {
		t.Fatal(err)
	}
	up, down, err := s.Targets[0].Network.Conditions()
	if err != nil {
		t.Fatal(err)
	}
	wantUp := link.Conditions{Delay: 10 * time.Millisecond, Jitter: 5 * time.Millisecond, Distribution: link.Normal,
		Loss: 0.01, Bandwidth: 12_500_000, ResetAfterBytes: 1000}
	wantDown := link.Conditions{Delay: 25 * time.Millisecond, Jitter: 5 * time.Millisecond, Distribution: link.Normal,
		Loss: 0.01, Bandwidth: 1_000_000, ResetAfter: 2 * time.Second}
	if up != wantUp || down != wantDown {
		t.Errorf("conditions\n up   %+v\n down %+v\nwant\n up   %+v\n down %+v", up, down, wantUp, wantDown)
	}
	if s.Targets[0].Network.Seed != 9 {
		t.Errorf("seed %d, want 9", s.Targets[0].Network.Seed)
	}
	// a degrade over the slow target's conditions
	dUp, dDown := up, down
	if err := s.Scenarios[1].Perturbations[0].Network.Apply(&dUp, &dDown); err != nil {
		t.Fatal(err)
	}
	if dUp.Loss != 0.5 || dDown.Loss != 0.5 || dDown.Delay != time.Millisecond || dUp.Delay != 10*time.Millisecond ||
		dDown.Bandwidth != 1_000_000 {
		t.Errorf("degraded\n up   %+v\n down %+v", dUp, dDown)
	}
	for i, want := range []bool{true, true, false} {
		if got := s.NeedsLink(&s.Targets[i]); got != want {
			t.Errorf("NeedsLink(%s) = %v, want %v", s.Targets[i].Name, got, want)
		}
	}
}

func TestEndpointAddress(t *testing.T) {
	for _, c := range []struct {
		ep, host, port string
		ok             bool
	}{
		{"http://127.0.0.1:8080/x", "127.0.0.1", "8080", true},
		{"https://localhost/", "localhost", "443", true},
		{"wss://[::1]:9/ws", "::1", "9", true},
		{"amqps://u:p@127.0.0.1/vh", "127.0.0.1", "5671", true},
		{"127.0.0.1:9000", "127.0.0.1", "9000", true},
		{"unix:///tmp/s", "", "", false},
		{"unix:/tmp/s", "", "", false},
		{"127.0.0.1:0", "", "", false},
		{"127.0.0.1:http", "", "", false},
		{"grpc://127.0.0.1:1", "", "", false},
		{"http:///path", "", "", false},
	} {
		host, port, err := EndpointAddress(c.ep)
		if (err == nil) != c.ok || host != c.host || port != c.port {
			t.Errorf("EndpointAddress(%q) = %q, %q, %v; want %q, %q, ok %v", c.ep, host, port, err, c.host, c.port, c.ok)
		}
	}
}
