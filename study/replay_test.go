package study

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/record"
)

func TestReplayScenario(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "rec"), 0o755)
	w, err := record.Create(filepath.Join(dir, "rec", "traffic.jsonl"), record.Header{Upstream: "http://127.0.0.1:1", Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []record.Protocol{record.JSONRPC, record.GRPC, record.HTTP1} {
		ex := record.Exchange{Offset: time.Duration(9-i) * time.Millisecond, Protocol: p, Method: "POST", Path: "/p.S/Info"}
		if err := w.Write(&ex); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	path := filepath.Join(dir, "study.yaml")
	os.WriteFile(path, []byte(`version: 1
name: replays
targets:
  - {name: a, endpoints: {grpc: "127.0.0.1:1", http: "http://127.0.0.1:2/"}}
  - {name: b, endpoints: {grpc: "127.0.0.1:3", http: "http://127.0.0.1:4/"}}
calls:
  info: {grpc: {method: p.S/Info}}
scenarios:
  - {name: open, replay: {recording: rec/traffic.jsonl, speed: 2}}
  - {name: closed, replay: {recording: rec/traffic.jsonl, loop: true}, load: {concurrency: [1, 4]}, duration: 1s}
  - {name: call, call: info, load: {concurrency: 1}}
`), 0o644)
	s, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "rec", "traffic.jsonl"))
	sum := sha256.Sum256(data)
	open, closed := s.Scenarios[0], s.Scenarios[1]
	rp := open.Replay
	if rp.Path != filepath.Join(dir, "rec", "traffic.jsonl") || rp.Exchanges != 3 || rp.SHA256 != hex.EncodeToString(sum[:]) || rp.Speed != 2 ||
		!slices.Equal(rp.Protocols, []record.Protocol{record.JSONRPC, record.GRPC, record.HTTP1}) || rp.Span != 2*time.Millisecond {
		t.Errorf("replay %+v", rp)
	}
	if s.Kind(&open) != KindOpen || open.Load.Connections != 1 || s.Kind(&closed) != KindClosed || closed.Replay.Speed != 1 || closed.Load.Connections != 0 {
		t.Errorf("kinds %s (connections %d), %s (speed %v, connections %d); want open over 1 connection, closed at speed 1",
			s.Kind(&open), open.Load.Connections, s.Kind(&closed), closed.Replay.Speed, closed.Load.Connections)
	}
	for p, want := range map[record.Protocol]string{record.GRPC: "grpc", record.JSONRPC: "http", record.HTTP1: "http"} {
		if got, err := ReplayEndpoint(&s.Targets[1], rp, p); got != want || err != nil {
			t.Errorf("%s exchanges go to %q, %v; want %q", p, got, err, want)
		}
	}
	s.Quick()
	if s.Scenarios[0].Duration != time.Second || s.Scenarios[1].Duration != time.Second {
		t.Errorf("--quick: durations %v and %v; want a second of each recording", s.Scenarios[0].Duration, s.Scenarios[1].Duration)
	}
}
