package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/internal/redact"
	"github.com/tandem-bench/tandem/rabbitnode"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/target"
)

// service is a running piece of shared infrastructure.
type service struct {
	spec *study.Service
	node *rabbitnode.Node
	proc *target.Process
}

// startServices starts the study's services, in order, before the
// targets. One that does not come up ends the run (exit 3): the targets
// need it.
func (r *runner) startServices(ctx context.Context, cpus []int) error {
	for i := range r.s.Services {
		sv := &r.s.Services[i]
		res := results.Service{Name: sv.Name}
		t0 := time.Now()
		endpoints, err := r.startService(ctx, sv, &res, cpus)
		res.StartNs = int64(time.Since(t0))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			err = fmt.Errorf("service %s: %w", sv.Name, err)
			res.Error = err.Error()
			r.res.Services = append(r.res.Services, res)
			r.progress("service %s failed: %v", sv.Name, err)
			return &TargetError{err}
		}
		r.serviceEndpoints[sv.Name] = endpoints
		res.Endpoints = map[string]string{}
		for k, v := range endpoints {
			res.Endpoints[k] = redact.URLs(v)
		}
		r.res.Services = append(r.res.Services, res)
		r.progress("service %s (%s): up in %v at %v", sv.Name, res.Kind, time.Duration(res.StartNs).Round(time.Millisecond), res.Endpoints)
	}
	return nil
}

// startService starts one service, pinned to cpus (the targets' cores)
// unless its start says otherwise.
func (r *runner) startService(ctx context.Context, sv *study.Service, res *results.Service, cpus []int) (map[string]string, error) {
	if rb := sv.RabbitMQ; rb != nil {
		if rb.URLEnv != "" {
			if u := os.Getenv(rb.URLEnv); u != "" {
				res.Kind = "external"
				return map[string]string{"amqp": u}, nil
			}
		}
		res.Kind = "rabbitmq"
		r.progress("service %s: starting a private RabbitMQ node", sv.Name)
		node, err := rabbitnode.Start(ctx, rabbitnode.Options{Dir: filepath.Join(r.o.Out, "work", "services", sv.Name), CPUs: cpus})
		if err != nil {
			return nil, err
		}
		r.services = append(r.services, &service{spec: sv, node: node})
		return map[string]string{"amqp": node.URL}, nil
	}
	res.Kind = "command"
	e := r.newExpander(filepath.Join(r.o.Out, "work", "services", sv.Name))
	e.services = nil // a service cannot name another's endpoints (validated)
	endpoints := map[string]string{}
	for name, ep := range sv.Endpoints {
		v, err := e.expand(ep)
		if err != nil {
			return nil, fmt.Errorf("endpoint %s: %w", name, err)
		}
		endpoints[name] = v
	}
	spec, err := r.startSpec(e, "service "+sv.Name, sv.Start)
	if err != nil {
		return nil, err
	}
	if sv.Start.CPUs == "" {
		spec.CPUs = cpus
	}
	if sv.Ready.Log != "" {
		spec.ReadyLine = regexp.MustCompile(sv.Ready.Log) // validated
	}
	r.progress("service %s: starting %s", sv.Name, e.redact(strings.Join(spec.Command, " ")))
	proc, err := target.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	r.services = append(r.services, &service{spec: sv, proc: proc})
	ctx, cancel := context.WithTimeout(ctx, sv.Ready.Timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if sv.Ready.Log == "" && anyOpen(endpoints) {
			return endpoints, nil
		}
		select {
		case <-proc.LineSeen():
			if sv.Ready.Log != "" {
				return endpoints, nil
			}
		case <-proc.Done():
			return nil, proc.ExitErr()
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("not up after %v; last output:\n    %s", sv.Ready.Timeout, strings.Join(proc.Tail(), "\n    "))
			}
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// stopServices stops the services tandem started, last first.
func (r *runner) stopServices() {
	for i := len(r.services) - 1; i >= 0; i-- {
		sv := r.services[i]
		var err error
		if sv.node != nil {
			err = sv.node.Stop()
		} else {
			err = sv.proc.Stop(r.o.StopGrace)
		}
		if err != nil {
			r.warn(fmt.Sprintf("service %s: %v", sv.spec.Name, err))
		}
	}
	r.services = nil
}
