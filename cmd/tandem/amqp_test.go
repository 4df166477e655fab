package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/internal/rabbittest"
)

func TestLoadAMQP(t *testing.T) {
	t.Parallel() // child processes and waits; asserts outcomes, not speed
	url := rabbittest.Start(t)
	code, out, stderr := tandem(t, "load", url, "--queue-type", "quorum", "--prefetch", "64", "--size", "256",
		"--confirm", "--requests", "2000", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Requests, OK int64
		Unit         string
		UnitsPerS    float64             `json:"units_per_s"`
		LatencyNs    struct{ P50 int64 } `json:"latency_ns"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Requests != 2000 || got.OK != 2000 || got.Unit != "message" || got.UnitsPerS <= 0 || got.LatencyNs.P50 <= 0 {
		t.Errorf("json: %+v", got)
	}
	code, out, _ = tandem(t, "load", url, "--rate", "500", "--duration", "1s")
	if code != exitOK || !strings.Contains(out, "message") {
		t.Errorf("paced: exit %d\n%s", code, out)
	}
	if code, _, stderr := tandem(t, "load", "amqp://guest:guest@127.0.0.1:1/", "--requests", "1"); code != exitBadInput || !strings.Contains(stderr, "amqp") {
		t.Errorf("closed port: exit %d, %q", code, stderr)
	}
	bad := strings.Replace(url, "guest:guest", "guest:wrong-secret", 1)
	if code, _, stderr := tandem(t, "load", bad, "--requests", "1"); code != exitBadInput || !strings.Contains(stderr, "password not allowed") || strings.Contains(stderr, "wrong-secret") {
		t.Errorf("bad credentials: exit %d, %q", code, stderr)
	}
	if code, _, stderr := tandem(t, "load", "amqp://guest:guest@127.0.0.1:99999/", "--requests", "1"); code != exitBadInput || strings.Count(stderr, "\n") > 1 {
		t.Errorf("bad URL: exit %d, %q", code, stderr)
	}
	if code, _, _ := tandem(t, "load", url, "--queue-type", "stream", "--requests", "1"); code != exitBadInput {
		t.Errorf("--queue-type stream: exit %d", code)
	}
}
