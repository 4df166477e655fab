package study

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/golden"
)

// goldenLimits is the machine the error cases are checked against, so that
// their goldens do not depend on this one's open-file limit.
var goldenLimits = limits{openFiles: 20000, kernelPath: func() error {
	return errors.New("veth: a network namespace: operation not permitted")
}}

func TestErrorsGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/errors/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no error cases: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := read(f, goldenLimits)
			if err == nil {
				t.Fatalf("Read(%s) = %+v; want errors", f, s)
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Read(%s) error %T %v; want an ErrorList", f, err, err)
			}
			for _, e := range list {
				// an error is in the study, or in a recording it names
				inRecording := filepath.Dir(e.File) == filepath.Dir(f) && strings.HasSuffix(e.File, ".jsonl")
				if e.Line < 1 || e.Col < 1 || e.File != f && !inRecording {
					t.Errorf("error without a position: %q", e.Error())
				}
			}
			golden.Check(t, strings.TrimSuffix(f, ".yaml")+".golden", []byte(err.Error()+"\n"))
		})
	}
}

func TestValidStudy(t *testing.T) {
	s, err := Read("testdata/valid/full.yaml")
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"name", s.Name, "full study"},
		{"seed", s.Seed, uint64(7)},
		{"baseline", s.Baseline, "b"},
		{"rounds", s.Defaults.Rounds, 5},
		{"warmup", s.Defaults.Warmup, 2 * time.Second},
		{"targets", len(s.Targets), 2},
		{"command[0]", s.Targets[0].Start.Command[0], "${tandem}"},
		{"ready timeout", s.Targets[0].Ready.Timeout, 30 * time.Second},
		{"default ready timeout", s.Targets[1].Ready.Timeout, DefaultReadyTimeout},
		{"condition equals", s.Targets[0].Ready.Condition.Equals.V, true},
		{"calls", len(s.Calls), 7},
		{"protocol", s.Calls["bal"].Protocol(), ProtoJSONRPC},
		{"request", s.Calls["block"].GRPC.Request.V, map[string]any{"height": "${HEIGHT}"}},
		{"scale levels", len(s.Scenarios[1].Load.Concurrency), 2},
		{"scale rounds", s.Scenarios[1].Rounds, 2},
		{"lat rounds inherit", s.Scenarios[0].Rounds, 5},
		{"lat metric default", s.Scenarios[0].Metric, "latency"},
		{"lat targets default", strings.Join(s.Scenarios[0].Targets, ","), "a,b"},
		{"open connections", s.Scenarios[2].Load.Connections, 4},
		{"compat reference", s.Compat.Reference, "a"},
		{"vary", s.Compat.Cases[0].Vary["HEIGHT"].V, []any{int64(0), int64(1), int64(2)}},
		{"sha256 length", len(s.SHA256), 64},
		{"ramp model", s.Scenarios[4].Load.Model(), "open"},
		{"steps model", s.Scenarios[5].Load.Model(), "open"},
		{"batch model", s.Scenarios[6].Load.Model(), "batched"},
		{"batch period default", s.Scenarios[6].Load.Batch.Period, time.Second},
		{"batch connections", s.Scenarios[6].Load.Connections, 4},
		{"steps connections default", s.Scenarios[5].Load.Connections, 1},
		{"closed model", s.Scenarios[0].Load.Model(), "closed"},
	}
	for _, c := range checks {
		if !equal(c.got, c.want) {
			t.Errorf("%s = %#v; want %#v", c.name, c.got, c.want)
		}
	}
}

func equal(a, b any) bool { return strings.EqualFold(sprint(a), sprint(b)) }

func sprint(v any) string { return strings.TrimSpace(strings.ReplaceAll(fmtAny(v), "\n", "")) }

func TestEndpointName(t *testing.T) {
	tg := &Target{Name: "t", Endpoints: map[string]string{"grpc": "g", "http": "h"}}
	one := &Target{Name: "one", Endpoints: map[string]string{"main": "m"}}
	cases := []struct {
		call    *Call
		target  *Target
		want    string
		wantErr bool
	}{
		{&Call{GRPC: &GRPCCall{}}, tg, "grpc", false},
		{&Call{JSONRPC: &JSONRPCCall{}}, tg, "http", false},
		{&Call{HTTP: &HTTPCall{}, Endpoint: "grpc"}, tg, "grpc", false},
		{&Call{HTTP: &HTTPCall{}, Endpoint: "nope"}, tg, "", true},
		{&Call{WS: &WSCall{}}, tg, "", true},
		{&Call{WS: &WSCall{}}, one, "main", false},
	}
	for _, c := range cases {
		got, err := c.call.EndpointName(c.target)
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("EndpointName(%s on %s) = %q, %v; want %q (error %v)", c.call.Protocol(), c.target.Name, got, err, c.want, c.wantErr)
		}
	}
}

func TestSchemaGolden(t *testing.T) {
	golden.Check(t, "../docs/study.schema.json", Schema())
}

// A scenario's kind is decided from its load shape, its call and its
// targets.
func TestKind(t *testing.T) {
	src := `version: 1
name: kinds
services:
  - name: broker
    rabbitmq: {}
targets:
  - {name: a, endpoints: {http: "http://127.0.0.1:1/", amqp: "${services.broker.amqp}"}}
  - {name: c, endpoints: {amqp: "${services.broker.amqp}"}, consumer: {raw: true}}
calls:
  ping: {http: {path: /}}
  queue: {amqp: {prefetch: 8}}
scenarios:
  - {name: closed, call: ping, load: {concurrency: 1}, targets: [a]}
  - {name: open, call: ping, load: {rate: 10}, duration: 1s, targets: [a]}
  - {name: ramp, call: ping, load: {ramp: {from: 1, to: 10}}, duration: 1s, targets: [a]}
  - {name: batched, call: ping, load: {batch: {per_period: 2}}, duration: 1s, targets: [a]}
  - {name: broker, call: queue, load: {concurrency: 1}, targets: [a]}
  - {name: drain, call: queue, targets: [c]}
`
	s, err := Parse("kinds.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Kind{KindClosed, KindOpen, KindOpen, KindBatched, KindBroker, KindDrain}
	for i := range s.Scenarios {
		if got := s.Kind(&s.Scenarios[i]); got != want[i] {
			t.Errorf("scenario %s: kind %s, want %s", s.Scenarios[i].Name, got, want[i])
		}
	}
}
