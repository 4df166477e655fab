package runner

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/internal/redact"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/target"
)

// drainWarmup is the message count of a drain's warm-up run.
const drainWarmup = 2000

// buildConsumer runs a consumer target's build commands once, before its
// first run.
func (r *runner) buildConsumer(ctx context.Context, l *live, e *expander) error {
	c := l.spec.Consumer
	name := l.spec.Name
	spec, err := r.consumerSpec(l, e)
	if err != nil {
		return err
	}
	for _, bc := range c.Build {
		argv, err := e.all(bc)
		if err != nil {
			return fmt.Errorf("target %s: build: %w", name, err)
		}
		r.progress("target %s: build: %s", name, e.redact(strings.Join(argv, " ")))
		b := spec
		b.Name = "target " + name + ": build"
		if err := target.RunOnce(ctx, b, argv); err != nil {
			return err
		}
	}
	l.res.Command = spec.Command
	if !c.Raw {
		l.res.Command = e.shown(c.Command, spec.Command)
	}
	var on []string
	for _, ep := range slices.Sorted(maps.Keys(l.endpoints)) {
		on = append(on, redact.URLs(l.endpoints[ep]))
	}
	r.progress("target %s: consumer %s on %s", name, strings.Join(l.res.Command, " "), strings.Join(on, ", "))
	return nil
}

// consumerSpec is a consumer command's process spec, without the run's
// queue.
func (r *runner) consumerSpec(l *live, e *expander) (target.Spec, error) {
	c := l.spec.Consumer
	what := "target " + l.spec.Name
	spec := target.Spec{Name: l.spec.Name, Redact: e.redact}
	var err error
	if c.Raw {
		// tandem's loop in a process of its own, like the consumers it is
		// held against (same CPUs, its own runtime)
		if r.o.Self == "" {
			return spec, fmt.Errorf("%s: the raw loop runs tandem's own binary, which is unknown", what)
		}
		spec.Command = []string{r.o.Self, "consume"}
	} else if spec.Command, err = e.all(c.Command); err != nil {
		return spec, fmt.Errorf("%s: command: %w", what, err)
	}
	if spec.Dir, err = e.expand(c.Dir); err != nil {
		return spec, fmt.Errorf("%s: dir: %w", what, err)
	}
	if spec.Env, err = expandEnv(e, what, c.Env); err != nil {
		return spec, err
	}
	if err := os.MkdirAll(e.workdir, 0o755); err != nil {
		return spec, fmt.Errorf("%s: %w", what, err)
	}
	return spec, nil
}

// drainRun is one run of a drain scenario on a consumer target: a fresh
// queue filled with n messages, the consumer started on it, the drain
// timed by watching the queue (driver.Broker.Drain).
func (r *runner) drainRun(ctx context.Context, l *live, callName string, n int64) (results.Sample, error) {
	if n <= 0 {
		n = drainWarmup
	}
	b, err := r.broker(l, callName)
	if err != nil {
		return results.Sample{}, err
	}
	d := driver.DrainRun{Messages: n, Queue: "tandem-" + l.spec.Name, Stall: r.s.Defaults.Timeout}
	return b.Drain(ctx, d, func(ctx context.Context, env []string) (driver.Consumer, error) {
		spec, err := r.consumerSpec(l, r.expanders[l.spec.Name])
		if err != nil {
			return nil, err
		}
		spec.Env = append(spec.Env, env...)
		p, err := target.Start(ctx, spec)
		if err != nil {
			return nil, err
		}
		p.StopSampling()
		return &consumerProc{p: p, grace: r.o.StopGrace}, nil
	})
}

// consumerProc is a consumer command as a driver.Consumer.
type consumerProc struct {
	p     *target.Process
	grace time.Duration
}

func (c *consumerProc) Exited() <-chan struct{} { return c.p.Done() }

func (c *consumerProc) Err() error {
	if err := c.p.ExitErr(); err != nil {
		return err
	}
	return nil
}

// Stop ends the consumer; that it then exits (on SIGTERM) is expected.
func (c *consumerProc) Stop() error {
	select {
	case <-c.p.Done():
		return nil // exited on its own, which Watch reports
	default:
	}
	return c.p.Stop(c.grace)
}
