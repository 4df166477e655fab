package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/target"
)

// startOnFreshPorts starts a target, and once more on fresh ports when
// the first start lost a bind race (the target said "address already in
// use": a port tandem chose free was taken before the target bound it),
// which the results' warnings then say.
func (r *runner) startOnFreshPorts(ctx context.Context, l *live, cpus []int) error {
	err := r.startTarget(ctx, l, cpus)
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "address already in use") {
		return err
	}
	r.stopNodes(l)
	r.warn(fmt.Sprintf("target %s: a port was taken before it could bind it (address already in use): started again on fresh ports", l.spec.Name))
	return r.startTarget(ctx, l, cpus)
}

// medianStartup is the per-figure median of several starts.
func medianStartup(runs []results.Startup) *results.Startup {
	med := func(get func(results.Startup) int64) int64 {
		vs := make([]float64, len(runs))
		for i, s := range runs {
			vs[i] = float64(get(s))
		}
		return int64(stats.Summarize(vs, false).Median)
	}
	return &results.Startup{
		FirstAnswerNs:     med(func(s results.Startup) int64 { return s.FirstAnswerNs }),
		ReadyNs:           med(func(s results.Startup) int64 { return s.ReadyNs }),
		CPUNs:             med(func(s results.Startup) int64 { return s.CPUNs }),
		PeakRSSBytes:      med(func(s results.Startup) int64 { return s.PeakRSSBytes }),
		DiskBytes:         med(func(s results.Startup) int64 { return s.DiskBytes }),
		DiskApparentBytes: med(func(s results.Startup) int64 { return s.DiskApparentBytes }),
	}
}

func (r *runner) startTarget(ctx context.Context, l *live, cpus []int) error {
	t := l.spec
	if t.Group != nil {
		if err := r.startGroup(ctx, l, cpus); err != nil {
			return err
		}
		return r.openLinks(ctx, l)
	}
	e := r.newExpander(filepath.Join(r.o.Out, "work", t.Name))
	r.expanders[t.Name] = e // the latest start's, for what is resolved later
	l.endpoints = map[string]string{}
	for name, ep := range t.Endpoints {
		v, err := e.expand(ep)
		if err != nil {
			return fmt.Errorf("target %s: endpoint %s: %w", t.Name, name, err)
		}
		l.endpoints[name] = v
	}
	dataDir, err := r.setDataDir(e, l)
	if err != nil {
		return err
	}
	if l.metrics, err = e.expand(t.Metrics); err != nil {
		return fmt.Errorf("target %s: metrics: %w", t.Name, err)
	}
	if t.Consumer != nil {
		return r.buildConsumer(ctx, l, e)
	}
	if t.Start == nil {
		r.progress("target %s: not started by tandem, using %v", t.Name, l.endpoints)
		return r.openLinks(ctx, l)
	}
	spec, err := r.startSpec(e, "target "+t.Name, t.Start)
	if err != nil {
		return err
	}
	spec.Name = t.Name
	if t.Start.CPUs == "" {
		spec.CPUs = cpus
	}
	if t.Ready.Log != "" {
		spec.ReadyLine = regexp.MustCompile(t.Ready.Log) // validated
	}
	l.res.Command, l.res.CPUs = e.shown(t.Start.Command, spec.Command), spec.CPUs
	r.progress("target %s: starting %s", t.Name, strings.Join(l.res.Command, " "))
	l.started = spec
	proc, err := target.Start(ctx, spec)
	if err != nil {
		return err
	}
	l.proc = proc
	st, err := r.awaitReady(ctx, l)
	if err != nil {
		return err
	}
	r.diskUse(st, t.Name, dataDir)
	l.res.Startup = st
	r.progress("target %s: first answer %v, ready %v, cpu %v, peak rss %.1f MiB, disk %.1f MiB", t.Name,
		time.Duration(st.FirstAnswerNs).Round(time.Millisecond), time.Duration(st.ReadyNs).Round(time.Millisecond),
		time.Duration(st.CPUNs).Round(time.Millisecond), float64(st.PeakRSSBytes)/(1<<20), float64(st.DiskBytes)/(1<<20))
	return r.openLinks(ctx, l)
}

// setDataDir resolves the target's data_dir (absolute) and records it.
func (r *runner) setDataDir(e *expander, l *live) (string, error) {
	dataDir, err := e.expand(l.spec.DataDir)
	if err != nil {
		return "", fmt.Errorf("target %s: data_dir: %w", l.spec.Name, err)
	}
	if dataDir != "" {
		if dataDir, err = filepath.Abs(dataDir); err != nil {
			return "", fmt.Errorf("target %s: data_dir: %w", l.spec.Name, err)
		}
	}
	l.dataDir, l.res.DataDir = dataDir, dataDir
	return dataDir, nil
}

// startSpec expands a start section (of a target or a service) into a
// process spec; what names the owner in errors.
func (r *runner) startSpec(e *expander, what string, st *study.Start) (target.Spec, error) {
	spec := target.Spec{Name: what}
	var err error
	if spec.Command, err = e.all(st.Command); err != nil {
		return spec, fmt.Errorf("%s: command: %w", what, err)
	}
	if spec.Wipe, err = e.all(st.Wipe); err != nil {
		return spec, fmt.Errorf("%s: wipe: %w", what, err)
	}
	spec.WipeRoot, spec.WipeOutside = e.workdir, st.WipeOutside
	spec.Redact = e.redact
	spec.Wipe = append(spec.Wipe, st.WipeOutside...)
	for _, ic := range st.Init {
		argv, err := e.all(ic)
		if err != nil {
			return spec, fmt.Errorf("%s: init: %w", what, err)
		}
		spec.Init = append(spec.Init, argv)
	}
	if spec.Dir, err = e.expand(st.Dir); err != nil {
		return spec, fmt.Errorf("%s: dir: %w", what, err)
	}
	if spec.Env, err = expandEnv(e, what, st.Env); err != nil {
		return spec, err
	}
	if st.CPUs != "" {
		spec.CPUs, _ = study.ParseCPUList(st.CPUs) // validated
	}
	if err := os.MkdirAll(e.workdir, 0o755); err != nil {
		return spec, fmt.Errorf("%s: %w", what, err)
	}
	return spec, nil
}

// expandEnv expands environment settings into KEY=VALUE pairs, sorted.
func expandEnv(e *expander, what string, env map[string]string) ([]string, error) {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		v, err := e.expand(env[k])
		if err != nil {
			return nil, fmt.Errorf("%s: env %s: %w", what, k, err)
		}
		out = append(out, k+"="+v)
	}
	return out, nil
}

// awaitReady polls the target until its first answer and its ready
// condition, within the ready timeout; an exit of the target ends the wait
// with its exit status and last output.
func (r *runner) awaitReady(ctx context.Context, l *live) (*results.Startup, error) {
	return r.awaitNode(ctx, l, l.node)
}

// awaitNode polls one node of a target (the target itself, or a node of
// its group) until its first answer and its ready condition.
func (r *runner) awaitNode(ctx context.Context, l *live, n *node) (*results.Startup, error) {
	t := l.spec
	ctx, cancel := context.WithTimeout(ctx, t.Ready.Timeout)
	defer cancel()
	start := n.proc.Started
	st := &results.Startup{}
	poll := func(every time.Duration, try func() bool) error {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for !try() {
			select {
			case <-n.proc.Done():
				return n.proc.ExitErr()
			case <-ctx.Done():
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return fmt.Errorf("%s: not ready after %v; last output:\n    %s", l.nodeName(n), t.Ready.Timeout, strings.Join(n.proc.Tail(), "\n    "))
				}
				return ctx.Err()
			case <-tick.C:
			}
		}
		return nil
	}
	var first, cond driver.Asker
	var err error
	if fa := t.Ready.FirstAnswer; fa != nil {
		if first, err = r.askerAt(ctx, l, n.own(), fa.Call); err != nil {
			return nil, err
		}
	}
	if c := t.Ready.Condition; c != nil {
		if cond, err = r.askerAt(ctx, l, n.own(), c.Call); err != nil {
			return nil, err
		}
	}
	switch {
	case first != nil:
		err = poll(10*time.Millisecond, func() bool {
			_, res, err := first.Ask(ctx)
			return err == nil && res.Status == ""
		})
	case cond != nil:
		err = poll(10*time.Millisecond, func() bool {
			_, res, err := cond.Ask(ctx)
			return err == nil && res.Status == ""
		})
	default:
		err = poll(10*time.Millisecond, func() bool { return anyOpen(n.own()) })
	}
	if err != nil {
		return nil, err
	}
	st.FirstAnswerNs = int64(time.Since(start))
	if cond != nil {
		c := t.Ready.Condition
		var last string
		err = poll(50*time.Millisecond, func() bool {
			ans, res, err := cond.Ask(ctx)
			if err != nil || res.Status != "" || len(ans) == 0 {
				return false
			}
			ok, got := Meets(ans[0], c)
			last = got
			return ok
		})
		if err != nil {
			return nil, fmt.Errorf("%w (condition %s %s; last value %s)", err, c.Path, c.Predicate(), last)
		}
	}
	if t.Ready.Log != "" {
		select {
		case <-n.proc.LineSeen():
		case <-n.proc.Done():
			return nil, n.proc.ExitErr()
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("%s: no output line matched %q after %v; last output:\n    %s", l.nodeName(n), t.Ready.Log, t.Ready.Timeout, strings.Join(n.proc.Tail(), "\n    "))
			}
			return nil, ctx.Err()
		}
	}
	st.ReadyNs = int64(time.Since(start))
	cpu, rss := n.proc.Usage()
	st.CPUNs, st.PeakRSSBytes = int64(cpu), rss
	// The startup figures are taken: stop sampling /proc, which would
	// otherwise cost the generator CPU during the rounds.
	n.proc.StopSampling()
	return st, nil
}

// anyOpen reports whether one of the endpoints accepts a TCP connection.
func anyOpen(endpoints map[string]string) bool {
	for _, ep := range endpoints {
		host := ep
		if u, err := url.Parse(ep); err == nil && u.Host != "" {
			host = u.Host
		}
		if c, err := net.DialTimeout("tcp", host, time.Second); err == nil {
			c.Close()
			return true
		}
	}
	return false
}

// diskUse records in st what a target's data directory holds once it is
// ready (nothing without one); a failure to read it is a warning.
func (r *runner) diskUse(st *results.Startup, name, dataDir string) {
	if dataDir == "" {
		return
	}
	disk, err := target.DiskUsage(dataDir)
	st.DiskBytes, st.DiskApparentBytes = disk.Allocated, disk.Apparent
	if err != nil {
		r.warn(fmt.Sprintf("target %s: disk use of %s: %v", name, dataDir, err))
	}
}
