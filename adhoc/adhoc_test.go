package adhoc_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/adhoc"
	"github.com/tandem-bench/tandem/load"
)

// The options make one load: a closed loop by default, an open loop with a
// rate (its schedule parsed), a batched one with a batch; what cannot run
// is an error named by its flag.
func TestSpec(t *testing.T) {
	for _, c := range []struct {
		name  string
		o     adhoc.Options
		kind  load.Kind
		sched string
		err   string
	}{
		{"closed", adhoc.Options{Concurrency: 4, Connections: 1, Duration: time.Second}, load.KindClosed, "", ""},
		{"ramp", adhoc.Options{Rate: "100-200", Connections: 2, Duration: 10 * time.Second}, load.KindOpen, "ramp 100→200/s over 10s", ""},
		{"steps", adhoc.Options{Rate: "5,10", Step: time.Second, Connections: 2}, load.KindOpen, "steps 5/s for 1s, 10/s for 1s", ""},
		{"batched", adhoc.Options{Batch: 50, Period: time.Second, Connections: 3, Duration: time.Second}, load.KindBatched, "", ""},
		{"batch without a duration", adhoc.Options{Batch: 50, Period: time.Second, Connections: 3}, "", "", "--batch needs --duration"},
		{"a rate that does not parse", adhoc.Options{Rate: "fast", Connections: 1, Duration: time.Second}, "", "", "--rate"},
	} {
		spec, err := c.o.Spec()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v; want one naming %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || spec.Kind != c.kind || c.sched != "" && (spec.Schedule == nil || spec.Schedule.String() != c.sched) {
			t.Errorf("%s: %+v, %v; want a %s loop of %q", c.name, spec, err, c.kind, c.sched)
		}
	}
}

// Check names each value a run cannot honour by its flag, with the value.
func TestCheck(t *testing.T) {
	ok := adhoc.Options{Concurrency: 1, Connections: 1, Timeout: time.Second, Period: time.Second}
	if err := adhoc.Check(ok); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	bad := ok
	bad.Concurrency, bad.Timeout, bad.Requests = 0, 0, -1
	err := adhoc.Check(bad)
	for _, want := range []string{"--concurrency 0", "--timeout 0s", "--requests -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v; want %q in it", err, want)
		}
	}
}

// Open refuses two shapes at once and gives a load without a bound 10 s.
func TestOpen(t *testing.T) {
	if _, err := adhoc.Open(context.Background(), adhoc.Options{Rate: "10", Batch: 5}, io.Discard); err == nil {
		t.Error("a rate and a batch together: no error")
	}
	l, err := adhoc.Open(context.Background(), adhoc.Options{Concurrency: 2, Connections: 1}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if d := l.Options().Duration; d != 10*time.Second {
		t.Errorf("duration %v; want 10s", d)
	}
	if l.Carriers() != 2 || l.Parts() != nil {
		t.Errorf("carriers %d, parts %v; want 2 clients and no parts", l.Carriers(), l.Parts())
	}
}

// A ramp over a run, as tandem load --rate 100-1000 --duration 20s
// --connections 8 describes it.
func ExampleOptions_Spec() {
	spec, err := adhoc.Options{Rate: "100-1000", Duration: 20 * time.Second, Connections: 8}.Spec()
	if err != nil {
		panic(err)
	}
	fmt.Println(spec.Kind, spec.Connections, spec.Schedule)
	// Output: open 8 ramp 100→1000/s over 20s
}

// What a fleet cannot take is refused before anything starts: values (a
// run on one machine), an engine or a quantum no call runs with the
// shape.
func TestFleetPartRefuses(t *testing.T) {
	for _, c := range []struct {
		o    adhoc.Options
		want string
	}{
		{adhoc.Options{Concurrency: 1, Connections: 1, ValuesFile: "v.yaml"}, "--values"},
		{adhoc.Options{Batch: 5, Period: time.Second, Duration: time.Second, Connections: 1, Engine: "loop"}, "--engine loop"},
		{adhoc.Options{Concurrency: 1, Connections: 1, Engine: "fast"}, "--engine fast"},
		{adhoc.Options{Concurrency: 1, Connections: 1, Quantum: -time.Millisecond}, "--quantum"},
	} {
		if err := adhoc.OneMachine(c.o); c.want == "--values" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%+v: %v; want an error naming %s", c.o, err, c.want)
			}
			continue
		}
		l, err := adhoc.Open(context.Background(), c.o, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.FleetPart("http://127.0.0.1:1/")
		l.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error naming %s", c.o, err, c.want)
		}
	}
}
