package drains_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/tandem-bench/tandem/internal/rabbittest"
	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/runner"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/study"
)

// The example study, quick, on a broker named by TANDEM_AMQP_URL: tandem's
// raw loop and the example's Go consumer drain a classic queue at prefetch
// 1 and a quorum queue at prefetch 512; every run drains all it
// was filled with, every comparison carries the broker-bound mark by its
// rule (on the figures measured: not whether a prefetch is broker-bound
// on this machine), and no queue is left on the broker.
func TestRabbitMQExample(t *testing.T) {
	node := broker.Node(t)
	t.Setenv("TANDEM_AMQP_URL", node.URL)
	s, err := study.Read("../../examples/rabbitmq/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Quick()
	s.Defaults.MinDuration = 200 * time.Millisecond // the rule, not the figures, is what this checks
	// classic-p1 is calibrated (a drain's calibration is tested here); the
	// quorum queue's is the slow one and proves nothing more, so its count
	// is given
	for i := range s.Scenarios {
		if s.Scenarios[i].Name == "quorum-p512" {
			s.Scenarios[i].Requests = 1000
		}
	}
	o := options(t, nil)
	o.Rounds = 2
	// both queue types and both prefetches; every scenario is the
	// amqpdrv package's to test
	o.Only = []string{"classic-p1", "quorum-p512"}
	if _, err := runner.Run(context.Background(), s, o); err != nil {
		t.Fatal(err)
	}
	res := readResults(t, o.Out)
	if len(res.Services) != 1 || res.Services[0].Kind != "external" || strings.Contains(res.Services[0].Endpoints["amqp"], "guest:guest") {
		t.Errorf("services: %+v", res.Services)
	}
	if len(res.Scenarios) != 2 {
		t.Fatalf("%d scenarios", len(res.Scenarios))
	}
	var rtt int64 // the baseline's: the rule's round trip
	for _, tg := range res.Targets {
		if tg.RTTCall != "basic.qos" || tg.RTTNs <= 0 {
			t.Errorf("target %s: round trip %d ns of %q", tg.Name, tg.RTTNs, tg.RTTCall)
		}
		if tg.Name == s.Baseline {
			rtt = tg.RTTNs
		}
	}
	for _, sc := range res.Scenarios {
		if sc.Load.Model != "drain" || sc.Unit != "message" || sc.Direction != "higher" || sc.Requests < 200 {
			t.Errorf("%s: load %+v, unit %s, direction %s, %d per run", sc.Name, sc.Load, sc.Unit, sc.Direction, sc.Requests)
		}
		if len(sc.Rounds) != 6 {
			t.Errorf("%s: %d rounds; want 2 per target", sc.Name, len(sc.Rounds))
		}
		var rawPerMsg []float64 // the baseline's time per message in each round
		for _, rd := range sc.Rounds {
			if rd.Failed || rd.OK != sc.Requests || rd.Requests != sc.Requests || rd.UnitsPerS <= 0 || rd.DurationNs <= 0 {
				t.Errorf("%s round %d %s: %+v", sc.Name, rd.Round, rd.Target, rd.Sample)
			}
			// messages drained, as the runner counts them from the round
			if n := int64(rd.UnitsPerS * time.Duration(rd.DurationNs).Seconds()); rd.Target == s.Baseline && n > 0 {
				rawPerMsg = append(rawPerMsg, float64(rd.DurationNs)/float64(n))
			}
		}
		if len(sc.Comparisons) != 2 {
			t.Fatalf("%s: %d comparisons", sc.Name, len(sc.Comparisons))
		}
		// The rule: the baseline's RTT / prefetch ≥ ½ × its median time per
		// message (the raw loop's; of two rounds, their mean).
		if s.Baseline != "raw" || len(rawPerMsg) != 2 {
			t.Fatalf("%s: baseline %q with %d rounds", sc.Name, s.Baseline, len(rawPerMsg))
		}
		med := (rawPerMsg[0] + rawPerMsg[1]) / 2
		want := float64(rtt)/float64(sc.Load.Prefetch) >= 0.5*med
		for _, c := range sc.Comparisons {
			if c.Verdict == stats.NoiseReference {
				// the A/A twin measures noise: never marked
				if c.ServerBound {
					t.Errorf("%s %s: the noise reference is marked server-bound", sc.Name, c.Candidate)
				}
				continue
			}
			// whether the mark is set depends on the round trip and the
			// time per message this machine measured (a busy one's round
			// trip, over 512, can reach half a message's time): the mark
			// follows the rule on those figures, whatever they are
			if c.ServerBound != want {
				t.Errorf("%s %s: server_bound %v; the rule says %v (rtt %v, prefetch %d, %v per message)", sc.Name, c.Candidate, c.ServerBound, want, time.Duration(rtt), sc.Load.Prefetch, time.Duration(med))
			}
		}
	}
	if left := rabbittest.Queues(t, node); len(left) > 0 {
		t.Errorf("queues left on the broker: %v", left)
	}
}

// A study that starts its own RabbitMQ node: a consumer that exits and one
// that never consumes fail, bounded, with what happened; the raw loop goes
// on; the node is stopped at the end. The queue may stand still for 10 s
// before a consumer fails (1 s failed tandem's own raw loop once, on a
// machine running three test suites at once, and 3 s twice beside a second
// suite: the raw loop is this race-built test binary, started afresh).
func TestDrainFailures(t *testing.T) {
	tooltest.Need(t, "TANDEM_REQUIRE_RABBITMQ", "rabbitmq-server") // the study starts its own node
	s := runtest.Parse(t, `
version: 1
name: failures
defaults: {rounds: 1, warmup: 100ms, timeout: 10s}
services:
  - {name: broker, rabbitmq: {}}
targets:
  - {name: raw, endpoints: {amqp: "${services.broker.amqp}"}, consumer: {raw: true}}
  - name: quitter
    endpoints: {amqp: "${services.broker.amqp}"}
    consumer: {command: [sh, -c, "echo queue $TANDEM_QUEUE prefetch $TANDEM_PREFETCH; exit 3"]}
  - name: idle
    endpoints: {amqp: "${services.broker.amqp}"}
    consumer: {command: [sleep, "60"]}
calls:
  drain: {amqp: {prefetch: 16}, unit: message}
scenarios:
  - {name: drain, call: drain, requests: 3000}
`)
	o := options(t, nil)
	start := time.Now()
	_, err := runner.Run(context.Background(), s, o)
	if err == nil {
		t.Error("two failed consumers and no error")
	} else {
		t.Log(err)
	}
	if d := time.Since(start); d > 10*time.Minute { // a hang guard: 5m6s beside a second suite
		t.Errorf("the run took %v", d)
	}
	res := readResults(t, o.Out)
	if len(res.Services) != 1 || res.Services[0].Kind != "rabbitmq" || res.Services[0].StartNs <= 0 {
		t.Fatalf("services: %+v", res.Services)
	}
	for _, c := range []struct{ target, want string }{
		{"quitter", "exit status 3"},
		{"quitter", "prefetch 16"},
		{"idle", "did not move for 10s"},
	} {
		var got string
		for _, tg := range res.Targets {
			if tg.Name == c.target {
				got = tg.Error
			}
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("target %s: error %q; want %q", c.target, got, c.want)
		}
	}
	sc := res.Scenarios[0]
	if len(sc.Rounds) != 1 || sc.Rounds[0].Target != "raw" || sc.Rounds[0].OK != 3000 {
		t.Errorf("rounds: %+v", sc.Rounds)
	}
	// The node is gone.
	if conn, err := amqp.Dial(strings.Replace(res.Services[0].Endpoints["amqp"], "xxx", "guest", 1)); err == nil {
		conn.Close()
		t.Error("the study's node still answers after the run")
	}
}

// Ctrl-C in the middle of a drain: the run ends at once, its results say
// interrupted, and the queue is deleted.
func TestDrainInterrupted(t *testing.T) {
	node := broker.Node(t)
	s := runtest.Parse(t, fmt.Sprintf(`
version: 1
name: interrupted
defaults: {rounds: 1, warmup: 100ms}
targets:
  - {name: raw, endpoints: {amqp: %q}, consumer: {raw: true}}
calls:
  drain: {amqp: {prefetch: 1, size: 256}, unit: message}
scenarios:
  - {name: drain, call: drain, requests: 30000}
`, node.URL))
	o := options(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	buf := &runtest.Progress{OnLog: func(line string) {
		if strings.Contains(line, "round 1/1") || strings.Contains(line, "warm-up") {
			once.Do(func() { time.AfterFunc(3*time.Second, cancel) })
		}
	}}
	o.Progress = buf
	start := time.Now()
	_, err := runner.Run(ctx, s, o)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v; want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Minute { // a hang guard: beside a second suite it took 71 s and 124 s
		t.Errorf("the interrupted run took %v", d)
	}
	if res := readResults(t, o.Out); !res.Interrupted {
		t.Error("results not marked interrupted")
	}
	if left := rabbittest.Queues(t, node); len(left) > 0 {
		t.Errorf("queues left on the broker: %v", left)
	}
}

// A scenario with an amqp call measures the broker run by run (one
// publisher, one consumer, a queue per run), calibrated like any other.
func TestAMQPScenario(t *testing.T) {
	url := broker.Node(t).URL
	s := runtest.Parse(t, fmt.Sprintf(`
version: 1
name: broker
defaults: {rounds: 2, warmup: 100ms, min_duration: 300ms}
targets: [{name: rabbit, endpoints: {amqp: %q}}]
calls:
  classic: {amqp: {queue_type: classic, prefetch: 256, ack: multiple, size: 512}, unit: message}
  quorum: {amqp: {queue_type: quorum, prefetch: 64, confirm: true}, unit: message}
scenarios:
  - {name: classic, call: classic, metric: throughput, load: {concurrency: 1}}
  - {name: quorum, call: quorum, metric: throughput, load: {concurrency: 1}, requests: 1000}
`, url))
	o := options(t, nil)
	if _, err := runner.Run(context.Background(), s, o); err != nil {
		t.Fatal(err)
	}
	res := readResults(t, o.Out)
	for _, sc := range res.Scenarios {
		if len(sc.Rounds) != 2 {
			t.Fatalf("%s: %d rounds", sc.Name, len(sc.Rounds))
		}
		for _, rd := range sc.Rounds {
			if rd.Failed || rd.OK != rd.Requests || rd.OK < 200 || rd.UnitsPerS <= 0 {
				t.Errorf("%s round %d: %+v", sc.Name, rd.Round, rd.Sample)
			}
		}
	}
	if q := res.Scenarios[1]; q.Rounds[0].OK != 1000 {
		t.Errorf("quorum: %d messages; want the 1000 asked for", q.Rounds[0].OK)
	}
}
