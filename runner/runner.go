// Package runner executes a study: it starts every target from empty and
// measures its startup, runs each scenario's rounds interleaved across the
// targets, summarises them with verdicts, and keeps results.json on disk
// current after every round, so an interrupted or failed run leaves valid
// results behind.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/internal/host"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/internal/redact"
	"github.com/tandem-bench/tandem/metrics"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/target"
	"github.com/tandem-bench/tandem/verdict"
)

// Options configures a run.
type Options struct {
	// Out is the directory results.json and the targets' work dirs go in.
	Out string
	// Only limits the run to these scenarios (by name), "compat" (the
	// differential tests) and "startup"; "startup" alone runs just the
	// startup measurement.
	Only []string
	// Rounds, if positive, overrides every scenario's rounds.
	Rounds int
	// Self is the tandem binary, for ${tandem}.
	Self string
	// Pin pins the generator and the targets to disjoint CPU sets: the
	// generator to the study's generator.cpus, or else to the first half
	// of the CPUs tandem may run on, and the targets to the rest.
	Pin bool
	// Progress, if set, receives one line per step.
	Progress io.Writer
	// Events, if set, receives where the run stands: when it enters each
	// step of its plan, and with every progress line.
	Events func(Event)
	// Version is the tandem version recorded in the results.
	Version string
	// StopGrace is how long a target has to exit after SIGTERM; default 5 s.
	StopGrace time.Duration
	// CommandLine is recorded in the results, to reproduce the run.
	CommandLine []string
	// KeepData keeps the targets' data_dir after the run; by default
	// tandem removes what it created.
	KeepData bool
	// Fleet, if set, runs the scenarios' loops (closed, open, batched) on
	// its workers; the rest runs here.
	Fleet Fleet
}

// TargetError is a target that failed to start or died: exit code 3.
type TargetError struct{ Err error }

func (e *TargetError) Error() string { return e.Err.Error() }
func (e *TargetError) Unwrap() error { return e.Err }

// ResultsFile is the name of the results file in the output directory.
const ResultsFile = "results.json"

type runner struct {
	s       *study.Study
	o       Options
	res     *results.Results
	live    []*live
	cpuBase time.Duration // the process's CPU time when the run began
	// secrets are every expander's secrets: progress and warnings hide them
	secrets secretSet
	failed  []error
	// metricsStart opens the window of the run's metrics; scrapeEvery is
	// the time between scrapes (or a Prometheus query's step).
	metricsStart time.Time
	scrapeEvery  time.Duration
	// expanders resolve each target's placeholders as its latest start
	// chose them (its ports).
	expanders map[string]*expander
	// generatorCores is the cores the generator may use.
	generatorCores int
	// services are the running services; serviceEndpoints their
	// endpoints by service name.
	services         []*service
	serviceEndpoints map[string]map[string]string
	// brokerRTT caches the basic.qos probe by broker URL.
	brokerRTT map[string]time.Duration
	// policy is the study's verdict policy; family the comparisons the
	// plan has and alpha each one's false-alarm rate during the run.
	policy stats.Policy
	family int
	alpha  float64
	// clock follows the run through its plan for Events; eventMu keeps
	// its events in order.
	clock   *progressClock
	eventMu sync.Mutex
}

// live is a target during a run.
type live struct {
	spec *study.Target
	res  *results.Target
	// node is where the target's calls go: the target's one process, or
	// the first node of a group; nodes are all of them (node first).
	*node
	nodes   []*node
	dataDir string
	err     error
	// peers are the links between a group's nodes, when it has them.
	peers *peerLinks
}

// node is one process of a target: the target itself, or a node of a
// group.
type node struct {
	name, role string
	index      int
	proc       *target.Process
	// endpoints are where the generator's requests go: the target's own
	// (direct), or its links' when its path goes through links.
	endpoints map[string]string
	direct    map[string]string
	links     []*pathLink
	// started is the spec of the node's latest start, for starting it
	// again after a perturbation.
	started   target.Spec
	metrics   string // the expanded metrics URL
	collector *metrics.Collector
}

// Run executes the study and returns its results, which are also written
// to Out/results.json. When ctx is cancelled it stops the targets, marks
// the results interrupted, writes them and returns ctx's error. A target
// that fails is recorded and the run goes on without it; Run then returns a
// *TargetError.
func Run(ctx context.Context, s *study.Study, o Options) (*results.Results, error) {
	if o.StopGrace <= 0 {
		o.StopGrace = 5 * time.Second
	}
	if err := checkRunOptions(s, o); err != nil {
		return nil, err
	}
	if fs, ok := o.Fleet.(*FleetSession); ok { // a lost worker stops the run
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		fs.cancel = cancel
	}
	var allowed, given []int // the CPUs tandem may run on; the study's for the generator
	if o.Pin {
		allowed = allowedCPUs()
		var err error
		if given, err = s.GeneratorCPUs(allowed); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("create output dir: %w", err)
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, err
	}
	o.Out = out
	stale, staleErr := results.RemoveStaleTemps(out) // of a run killed mid-write
	r := newRunner(s, o)
	if len(stale) > 0 || staleErr != nil {
		r.progress("removed what a run killed mid-write left in %s: %v %v", out, stale, staleErr)
	}
	r.res.Tool = Tool(o.Version)
	r.res.CreatedAt = time.Now().UTC()
	r.res.Study = results.Study{Name: s.Name, Description: s.Description, File: s.File, ConfigSHA256: s.SHA256, Seed: s.Seed,
		CommandLine: o.CommandLine}
	r.res.Machine = Machine()
	if !target.SamplesUsage {
		r.warn("targets' startup CPU time and peak memory are read from /proc, which only Linux has: they are 0 here")
	}
	var targetCPUs []int
	switch {
	case o.Pin:
		gen, tgt, warning := splitCPUs(allowed, given)
		if warning != "" {
			r.warn(warning)
		}
		if len(gen) > 0 {
			if unpin, ok := r.pinGenerator(gen); ok {
				defer unpin()
				targetCPUs = tgt
			}
		}
	case s.Generator.CPUs != "":
		r.warn(fmt.Sprintf("generator.cpus %s is not applied: the run does not pin (--pin=false)", s.Generator.CPUs))
	}
	defer r.stopAll()
	err = r.run(ctx, targetCPUs)
	return r.end(ctx, err)
}

// checkRunOptions refuses options the study cannot run with: an --only
// that names nothing of it, a fleet for what runs on one machine only.
func checkRunOptions(s *study.Study, o Options) error {
	for _, name := range o.Only {
		if name == "compat" && s.Compat == nil {
			return errors.New("--only compat: the study has no compat section")
		}
		if name != "startup" && name != "compat" && name != "costs" && !slices.ContainsFunc(s.Scenarios, func(sc study.Scenario) bool { return sc.Name == name }) {
			return fmt.Errorf("--only %s: no such scenario (startup, compat, costs or a scenario name)", name)
		}
	}
	if o.Fleet != nil {
		for i := range s.Targets {
			if s.NeedsLink(&s.Targets[i]) {
				return fmt.Errorf("target %s: a network path (network:, or a network perturbation) runs on one machine only: drop --workers/--local-workers or the network", s.Targets[i].Name)
			}
		}
		for _, sc := range s.Scenarios {
			if len(sc.Perturbations) > 0 {
				return fmt.Errorf("scenario %s: perturbations run on one machine only: drop --workers/--local-workers or the perturbations", sc.Name)
			}
		}
	}
	return nil
}

// newRunner is the runner of study s with options o: its results begun,
// its verdict policy and each comparison's false-alarm rate, the clock of
// its Events.
func newRunner(s *study.Study, o Options) *runner {
	// the process's CPU time so far: 0 where the OS does not say
	cpuBase, _ := host.CPUTime()
	r := &runner{s: s, o: o, res: results.New(), cpuBase: cpuBase, generatorCores: runtime.NumCPU(), expanders: map[string]*expander{},
		serviceEndpoints: map[string]map[string]string{}, brokerRTT: map[string]time.Duration{},
		policy: s.Defaults.Policy()}
	r.res.Policy = &r.policy
	r.family = max(Comparisons(s, o), 1)
	r.alpha = r.policy.Alpha / float64(r.family)
	if o.Events != nil {
		r.clock = newProgressClock(NewPlan(s, o), time.Now())
	}
	return r
}

// end ends the run that r.run ended with err: it marks an interrupted run,
// stops the targets, removes their data unless kept and writes the
// results; it returns them with every secret hidden, and the run's error.
func (r *runner) end(ctx context.Context, err error) (*results.Results, error) {
	if ctx.Err() != nil {
		r.res.Interrupted = true
		err = ctx.Err()
	}
	r.stopAll()
	if !r.o.KeepData {
		r.removeData()
	}
	if werr := r.save(); werr != nil && err == nil {
		err = werr
	}
	if err == nil && len(r.failed) > 0 {
		err = &TargetError{errors.Join(r.failed...)}
	}
	res, rerr := r.redacted()
	if rerr != nil {
		return r.res, errors.Join(err, rerr) // the results as they are are not written or shown
	}
	if err != nil && r.secrets.redact(err.Error()) != err.Error() {
		err = &redactedError{err: err, hide: r.secrets.redact} // only an error that shows a secret is wrapped
	}
	return res, err
}

// redactedError is an error of the run as tandem prints it: with every
// secret of the run hidden (a target's last output may hold one); err
// itself stays reachable for errors.As and errors.Is.
type redactedError struct {
	err  error
	hide func(string) string
}

func (e *redactedError) Error() string { return e.hide(e.err.Error()) }
func (e *redactedError) Unwrap() error { return e.err }

// redacted is a copy of the results with every secret of the run hidden,
// in every string of them (a metrics URL's password, a target's last
// output that printed its token, …): what is written and shown.
func (r *runner) redacted() (*results.Results, error) {
	var out results.Results
	if err := redact.Copy(&out, r.res, r.secrets.redact); err != nil {
		return nil, err
	}
	return &out, nil
}

// callSecrets adds to the run's secrets every value its calls resolve from
// the environment (their drivers resolve them, see driver.New), so that no
// progress line or warning prints one.
func (r *runner) callSecrets() {
	for _, name := range slices.Sorted(maps.Keys(r.s.Calls)) {
		if c := r.s.Calls[name]; c != nil {
			_, values, _ := c.ResolveEnv(os.LookupEnv) // an unset one: refused before the run
			for _, v := range values {
				r.secrets.add(v)
			}
		}
	}
}

// pinGenerator pins the process, the generator, to cpus with one P per
// CPU plus one that the event loop holds while it sleeps, and records
// them; unpin gives the process its CPUs and GOMAXPROCS back, so a
// caller's process is not left pinned. A failure is a warning (not ok).
func (r *runner) pinGenerator(cpus []int) (unpin func(), ok bool) {
	restore, err := host.PinProcess(cpus)
	if err != nil {
		r.warn(fmt.Sprintf("could not pin the generator to CPUs %v: %v", cpus, err))
		return nil, false
	}
	procs := runtime.GOMAXPROCS(len(cpus) + 1)
	r.res.Machine.GeneratorCPUs = cpus
	r.res.Machine.GOMAXPROCS = len(cpus) + 1
	r.generatorCores = len(cpus)
	return func() {
		runtime.GOMAXPROCS(procs)
		if err := restore(); err != nil {
			r.warn(fmt.Sprintf("could not unpin the generator: %v", err))
		}
	}, true
}

// removeData removes the data dirs of the targets tandem started (only
// those under the output directory: tandem never deletes what it did not
// make).
func (r *runner) removeData() {
	if len(r.res.Services) > 0 {
		dir := filepath.Join(r.o.Out, "work", "services")
		if err := os.RemoveAll(dir); err != nil {
			r.warn(fmt.Sprintf("services: remove %s: %v", dir, err))
		}
	}
	for _, l := range r.live {
		if l.dataDir == "" || l.spec.Start == nil {
			continue
		}
		if rel, err := filepath.Rel(r.o.Out, l.dataDir); err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		if err := os.RemoveAll(l.dataDir); err != nil {
			r.warn(fmt.Sprintf("target %s: remove %s: %v", l.spec.Name, l.dataDir, err))
		}
	}
}

func (r *runner) warn(msg string) {
	msg = r.secrets.redact(msg)
	r.res.Warnings = append(r.res.Warnings, msg)
	r.progress("warning: %s", msg)
}

func (r *runner) progress(format string, args ...any) {
	r.progressEvent(Event{}, format, args...)
}

// progressEvent prints a progress line and sends it as an event, with the
// fields of e (the round and target it is about).
func (r *runner) progressEvent(e Event, format string, args ...any) {
	// every line, whatever it prints: no secret and no URL password
	line := r.secrets.redact(human.Printable(fmt.Sprintf(format, args...)))
	if r.o.Progress != nil {
		fmt.Fprintln(r.o.Progress, line)
	}
	e.Line = line
	r.send(e)
}

// send stamps e with where the run stands and sends it.
func (r *runner) send(e Event) {
	if r.o.Events == nil || r.clock == nil {
		return
	}
	r.eventMu.Lock()
	defer r.eventMu.Unlock()
	if e.Round > 0 && !e.Status {
		r.clock.unitDone() // a round or a cell
	}
	at := r.clock.event(e.Line, time.Now())
	at.Target, at.Round, at.Rounds, at.Status, at.Done, at.Level = e.Target, e.Round, e.Rounds, e.Status, e.Done, e.Level
	r.o.Events(at)
}

// enter marks the start of the plan's next step of a phase (and name).
func (r *runner) enter(phase, name string) {
	if r.o.Events == nil || r.clock == nil {
		return
	}
	r.eventMu.Lock()
	defer r.eventMu.Unlock()
	if now := time.Now(); r.clock.enter(phase, name, now) {
		r.o.Events(r.clock.event("", now))
	}
}

func (r *runner) save() error {
	if cpu, err := host.CPUTime(); err == nil {
		r.res.Machine.GeneratorCPUNs = int64(cpu - r.cpuBase)
	}
	res, err := r.redacted()
	if err != nil {
		return err
	}
	return results.Write(filepath.Join(r.o.Out, ResultsFile), res)
}

func (r *runner) stopAll() {
	for _, l := range r.live {
		r.stopNodes(l)
	}
	r.stopServices()
}

func (r *runner) run(ctx context.Context, targetCPUs []int) error {
	r.callSecrets()
	for i := range r.s.Targets {
		t := &r.s.Targets[i]
		r.res.Targets = append(r.res.Targets, results.Target{Name: t.Name})
		l := &live{spec: t, res: &r.res.Targets[len(r.res.Targets)-1], node: &node{name: t.Name}}
		l.nodes = []*node{l.node}
		r.live = append(r.live, l)
	}
	for i, l := range r.live {
		l.res = &r.res.Targets[i] // the slice is final now
	}
	if err := r.startServices(ctx, targetCPUs); err != nil {
		return err
	}
	// The startup study: every target starts from empty runs times, one
	// at a time, interleaved (A B, A B, …); the last start stays up for the
	// scenarios.
	runs := 1
	if r.s.Startup != nil && (len(r.o.Only) == 0 || slices.Contains(r.o.Only, "startup")) {
		runs = r.s.Startup.Runs // --only without startup: one start each
	}
	r.enter("startup", "")
	for run := 1; run <= runs; run++ {
		for _, l := range r.live {
			if l.err != nil {
				continue
			}
			if runs > 1 {
				r.progress("target %s: start %d of %d from empty", l.spec.Name, run, runs)
			}
			if err := r.startOnFreshPorts(ctx, l, targetCPUs); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				r.fail(l, err)
			} else if st := l.res.Startup; st != nil && l.spec.Start != nil {
				l.res.StartupRuns = append(l.res.StartupRuns, *st)
				if len(l.res.StartupRuns) > 1 {
					l.res.Startup = medianStartup(l.res.StartupRuns)
				}
			}
			if run < runs {
				r.stopNodes(l)
			}
			if err := r.save(); err != nil {
				return err
			}
		}
	}
	if runs >= 3 {
		verdict.Startup(r.policy, r.res.Targets, r.s.Baseline, r.alpha)
	}
	r.startMetrics()
	defer r.stopMetrics()
	if r.s.Compat != nil && (len(r.o.Only) == 0 || slices.Contains(r.o.Only, "compat")) {
		r.enter("compat", "")
		if err := r.compat(ctx); err != nil {
			return err
		}
	}
	if !r.onlyNonScenarios() {
		r.enter("probes", "")
		r.probeRTT(ctx)
	}
	for i := range r.s.Scenarios {
		sc := &r.s.Scenarios[i]
		if len(r.o.Only) > 0 && !slices.Contains(r.o.Only, sc.Name) {
			continue
		}
		run, phase := r.scenario, "scenario"
		if sc.Sweep != nil {
			run, phase = r.sweep, "sweep"
		}
		r.enter(phase, sc.Name)
		if err := run(ctx, sc); err != nil {
			return err
		}
	}
	r.judgeFamily()
	r.diagnose(ctx)
	if len(r.s.Costs) > 0 && (len(r.o.Only) == 0 || slices.Contains(r.o.Only, "costs")) {
		r.enter("costs", "")
		r.costs(ctx)
	}
	return ctx.Err()
}

// judgeFamily holds the run's comparisons together: Holm's step-down over
// all of them may decide those each one's share of α left open.
func (r *runner) judgeFamily() {
	if r.policy.Rule != stats.RuleShift {
		return
	}
	fam := verdict.Family(r.policy, r.res, r.family)
	r.res.Family = &fam
	if fam.Upgraded > 0 {
		r.progress("verdicts: Holm's step-down over the run's %d comparisons decided %d more", fam.Size, fam.Upgraded)
	}
}

// fail records a target's failure: it takes no further part in the run.
func (r *runner) fail(l *live, err error) {
	l.err = err
	l.res.Error = err.Error()
	r.failed = append(r.failed, err)
	r.progress("target %s failed: %v", l.spec.Name, err)
}

// caller builds the driver that loads one target with a call, at the
// endpoint the call goes to, with the scenario's values (nil for a call
// without).
func (r *runner) caller(ctx context.Context, l *live, callName string, vals *driver.Values) (driver.Caller, error) {
	return r.callerOf(ctx, l, callName, r.s.Calls[callName], vals)
}

// callerOf is caller of call, named callName (a flow's step's call with
// its captures' slots, which the study's call has not).
func (r *runner) callerOf(ctx context.Context, l *live, callName string, call *study.Call, vals *driver.Values) (driver.Caller, error) {
	newCaller := func(call *study.Call, endpoint string, o driver.Options) (driver.Caller, error) {
		o.Values = vals
		return driver.New(ctx, call, endpoint, o)
	}
	if g := l.spec.Group; g != nil && g.Calls == "round-robin" {
		rr := &roundRobin{}
		for _, n := range l.nodes {
			c, err := buildCall(r, l, n.endpoints, callName, call, newCaller)
			if err != nil {
				return nil, err
			}
			rr.callers = append(rr.callers, c)
		}
		return rr, nil
	}
	return buildCall(r, l, l.endpoints, callName, call, newCaller)
}

// askerAt builds what sends a call once to one node of a target, at its
// endpoints (readiness checks, heights).
func (r *runner) askerAt(ctx context.Context, l *live, endpoints map[string]string, callName string) (driver.Asker, error) {
	return buildAt(r, l, endpoints, callName, func(call *study.Call, endpoint string, o driver.Options) (driver.Asker, error) {
		return driver.NewAsker(ctx, call, endpoint, o)
	})
}

// broker builds the Broker of an amqp call for one target.
func (r *runner) broker(l *live, callName string) (driver.Broker, error) {
	return build(r, l, callName, func(call *study.Call, endpoint string, o driver.Options) (driver.Broker, error) {
		return driver.NewBroker(call, endpoint, o)
	})
}

// build finds the endpoint a call goes to on a target and builds its driver
// with newDriver.
func build[D any](r *runner, l *live, callName string, newDriver func(*study.Call, string, driver.Options) (D, error)) (D, error) {
	return buildAt(r, l, l.endpoints, callName, newDriver)
}

// buildAt builds a call's driver for one node of a target, at endpoints.
func buildAt[D any](r *runner, l *live, endpoints map[string]string, callName string, newDriver func(*study.Call, string, driver.Options) (D, error)) (D, error) {
	return buildCall(r, l, endpoints, callName, r.s.Calls[callName], newDriver)
}

// buildCall is buildAt of call, named callName.
func buildCall[D any](r *runner, l *live, endpoints map[string]string, callName string, call *study.Call,
	newDriver func(*study.Call, string, driver.Options) (D, error)) (D, error) {
	var zero D
	epName, err := call.EndpointName(l.spec)
	if err != nil {
		return zero, err
	}
	d, err := newDriver(call, endpoints[epName], driver.Options{Timeout: r.s.Defaults.Timeout})
	if err != nil {
		return zero, fmt.Errorf("target %s: call %s: %w", l.spec.Name, callName, err)
	}
	return d, nil
}
