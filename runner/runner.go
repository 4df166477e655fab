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
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/compat"
	"github.com/tandem-bench/tandem/cost"
	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/driver/amqpdrv"
	"github.com/tandem-bench/tandem/internal/host"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/metrics"
	"github.com/tandem-bench/tandem/report"
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
	// Pin pins the generator and the targets to disjoint CPU sets.
	Pin bool
	// Progress, if set, receives one line per step.
	Progress io.Writer
	// Version is the tandem version recorded in the results.
	Version string
	// StopGrace is how long a target has to exit after SIGTERM; default 5 s.
	StopGrace time.Duration
	// CommandLine is recorded in the results, to reproduce the run.
	CommandLine []string
	// KeepData keeps the targets' data_dir after the run; by default
	// tandem removes what it created.
	KeepData bool
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
	cpuBase int64
	failed  []error
	// metricsStart opens the window of the run's metrics.
	metricsStart time.Time
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
	// policy is the study's verdict policy.
	policy stats.Policy
}

// live is a target during a run.
type live struct {
	spec      *study.Target
	res       *results.Target
	proc      *target.Process
	endpoints map[string]string
	dataDir   string
	metrics   string // the expanded metrics URL
	collector *metrics.Collector
	err       error
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
	for _, name := range o.Only {
		if name == "compat" && s.Compat == nil {
			return nil, errors.New("--only compat: the study has no compat section")
		}
		if name != "startup" && name != "compat" && name != "costs" && !slices.ContainsFunc(s.Scenarios, func(sc study.Scenario) bool { return sc.Name == name }) {
			return nil, fmt.Errorf("--only %s: no such scenario (startup, compat, costs or a scenario name)", name)
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
	r := &runner{s: s, o: o, res: results.New(), cpuBase: selfCPU(), generatorCores: runtime.NumCPU(), expanders: map[string]*expander{},
		serviceEndpoints: map[string]map[string]string{}, brokerRTT: map[string]time.Duration{},
		policy: s.Defaults.Policy()}
	r.res.Policy = &r.policy
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
	if o.Pin {
		gen, tgt, shared := splitCPUs(runtime.NumCPU())
		if shared {
			r.warn("one CPU core: the generator and the targets share it, so their timings interfere")
		} else if restore, err := host.PinProcess(gen); err != nil {
			r.warn(fmt.Sprintf("could not pin the generator to CPUs %v: %v", gen, err))
		} else {
			// one P per generator core, plus one for the open loop's pacer;
			// both given back when the run ends, so a caller's process is
			// not left pinned
			procs := runtime.GOMAXPROCS(len(gen) + 1)
			defer func() {
				runtime.GOMAXPROCS(procs)
				if err := restore(); err != nil {
					r.warn(fmt.Sprintf("could not unpin the generator: %v", err))
				}
			}()
			r.res.Machine.GeneratorCPUs = gen
			r.generatorCores = len(gen)
			r.res.Machine.GOMAXPROCS = len(gen) + 1
			targetCPUs = tgt
		}
	}
	defer r.stopAll()
	err = r.run(ctx, targetCPUs)
	if ctx.Err() != nil {
		r.res.Interrupted = true
		err = ctx.Err()
	}
	r.stopAll()
	if !o.KeepData {
		r.removeData()
	}
	if werr := r.save(); werr != nil && err == nil {
		err = werr
	}
	if err == nil && len(r.failed) > 0 {
		err = &TargetError{errors.Join(r.failed...)}
	}
	return r.res, err
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
	r.res.Warnings = append(r.res.Warnings, msg)
	r.progress("warning: %s", msg)
}

func (r *runner) progress(format string, args ...any) {
	if r.o.Progress != nil {
		fmt.Fprintln(r.o.Progress, report.Printable(fmt.Sprintf(format, args...)))
	}
}

func (r *runner) save() error {
	r.res.Machine.GeneratorCPUNs = selfCPU() - r.cpuBase
	return results.Write(filepath.Join(r.o.Out, ResultsFile), r.res)
}

func (r *runner) stopAll() {
	for _, l := range r.live {
		if l.proc != nil {
			if err := l.proc.Stop(r.o.StopGrace); err != nil {
				r.warn(err.Error())
			}
			l.proc = nil
		}
	}
	r.stopServices()
}

func (r *runner) run(ctx context.Context, targetCPUs []int) error {
	for i := range r.s.Targets {
		t := &r.s.Targets[i]
		r.res.Targets = append(r.res.Targets, results.Target{Name: t.Name})
		l := &live{spec: t, res: &r.res.Targets[len(r.res.Targets)-1]}
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
			if run < runs && l.proc != nil {
				if err := l.proc.Stop(r.o.StopGrace); err != nil {
					r.warn(err.Error())
				}
				l.proc = nil
			}
			if err := r.save(); err != nil {
				return err
			}
		}
	}
	r.startMetrics()
	defer r.stopMetrics()
	if r.s.Compat != nil && (len(r.o.Only) == 0 || slices.Contains(r.o.Only, "compat")) {
		if err := r.compat(ctx); err != nil {
			return err
		}
	}
	if !r.onlyNonScenarios() {
		r.probeRTT(ctx)
	}
	for i := range r.s.Scenarios {
		sc := &r.s.Scenarios[i]
		if len(r.o.Only) > 0 && !slices.Contains(r.o.Only, sc.Name) {
			continue
		}
		run := r.scenario
		if sc.Sweep != nil {
			run = r.sweep
		}
		if err := run(ctx, sc); err != nil {
			return err
		}
	}
	r.diagnose(ctx)
	if len(r.s.Costs) > 0 && (len(r.o.Only) == 0 || slices.Contains(r.o.Only, "costs")) {
		r.costs(ctx)
	}
	return ctx.Err()
}

// startOnFreshPorts starts a target, and once more on fresh ports when
// the first start lost a bind race (the target said "address already in
// use": a port tandem chose free was taken before the target bound it),
// which the results' warnings then say.
func (r *runner) startOnFreshPorts(ctx context.Context, l *live, cpus []int) error {
	err := r.startTarget(ctx, l, cpus)
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "address already in use") {
		return err
	}
	if l.proc != nil {
		l.proc.Stop(r.o.StopGrace)
		l.proc = nil
	}
	r.warn(fmt.Sprintf("target %s: a port was taken before it could bind it (address already in use): started again on fresh ports", l.spec.Name))
	return r.startTarget(ctx, l, cpus)
}

// startMetrics starts scraping every running target that has a metrics
// endpoint; it goes on until stopMetrics, across rounds and cells.
func (r *runner) startMetrics() {
	var names []string
	var interval time.Duration
	if m := r.s.Metrics; m != nil {
		names, interval = m.Series, m.Interval
	}
	r.metricsStart = time.Now()
	if r.s.Metrics != nil && r.s.Metrics.Prometheus != "" {
		return // queried when the run ends
	}
	for _, l := range r.live {
		if l.err == nil && l.metrics != "" {
			l.collector = metrics.Start(l.metrics, names, interval)
		}
	}
}

// stopMetrics stops the scrapers and stores what they scraped; a scrape
// that failed is counted, never fatal.
func (r *runner) stopMetrics() {
	if mc := r.s.Metrics; mc != nil && mc.Prometheus != "" {
		r.queryMetrics(mc)
		return
	}
	for _, l := range r.live {
		if l.collector == nil {
			continue
		}
		m := l.collector.Stop()
		l.collector = nil
		l.res.Metrics = &m
		if m.Errors > 0 {
			r.warn(fmt.Sprintf("target %s: %d of %d metrics scrapes failed (last: %s)", l.spec.Name, m.Errors, m.Scrapes, m.LastError))
		}
	}
}

// queryMetrics asks the study's Prometheus server for every target's
// series over the run's window, then derives each sweep cell's figures.
func (r *runner) queryMetrics(mc *study.MetricsConfig) {
	for _, l := range r.live {
		if len(l.spec.MetricsLabels) == 0 {
			continue
		}
		labels := map[string]string{}
		for k, v := range l.spec.MetricsLabels {
			e, err := r.expanders[l.spec.Name].expand(v)
			if err != nil {
				r.warn(fmt.Sprintf("target %s: metrics_labels.%s: %v", l.spec.Name, k, err))
				continue
			}
			labels[k] = e
		}
		m := metrics.QueryRange(context.Background(), mc.Prometheus, mc.Series, labels, r.metricsStart, time.Now(), mc.Interval)
		l.res.Metrics = &m
		if m.Errors > 0 {
			r.warn(fmt.Sprintf("target %s: %d of %d Prometheus queries failed (last: %s)", l.spec.Name, m.Errors, m.Scrapes, m.LastError))
		}
		for i := range r.res.Sweeps {
			sw := &r.res.Sweeps[i]
			if sw.Target != l.spec.Name {
				continue
			}
			for j := range sw.Cells {
				cellMetrics(&sw.Cells[j], m)
			}
		}
	}
}

// costs counts the study's costs under valgrind; a cost that cannot be
// counted is recorded with its error and a warning.
func (r *runner) costs(ctx context.Context) {
	v, verr := cost.FindValgrind()
	e := r.newExpander(filepath.Join(r.o.Out, "work", "costs"))
	for _, cs := range r.s.Costs {
		if ctx.Err() != nil {
			return
		}
		c := results.Cost{Name: cs.Name, Ops: cs.Ops, Source: "valgrind"}
		if c.Ops == 0 {
			c.Ops = 1000
		}
		argv, err := e.all(cs.Command)
		if err == nil {
			err = verr
		}
		if err == nil {
			r.progress("cost %s: counting %d and %d operations under valgrind", cs.Name, c.Ops, 2*c.Ops)
			vc := *v
			vc.Toggle = cs.ToggleCollect
			for _, k := range sortedKeys(cs.Env) {
				vc.Env = append(vc.Env, k+"="+cs.Env[k])
			}
			var got results.Cost
			if got, err = vc.Measure(ctx, cs.Name, argv, c.Ops); err == nil {
				c = got
			}
		}
		if err != nil {
			c.Error = e.redact(err.Error())
			r.warn(fmt.Sprintf("cost %s: %s", cs.Name, c.Error))
		}
		r.res.Costs = append(r.res.Costs, c)
		if err := r.save(); err != nil {
			r.warn(err.Error())
		}
	}
}

// onlyNonScenarios reports whether --only names startup or compat and no
// scenario, so no round trip needs probing.
func (r *runner) onlyNonScenarios() bool {
	return len(r.o.Only) > 0 && !slices.ContainsFunc(r.o.Only, func(n string) bool { return n != "startup" && n != "compat" && n != "costs" })
}

// compat runs the differential tests against the running targets and
// saves their outcome.
func (r *runner) compat(ctx context.Context) error {
	eps := map[string]map[string]string{}
	for _, l := range r.live {
		if l.err == nil && l.endpoints != nil {
			eps[l.spec.Name] = l.endpoints
		}
	}
	// Oracle URLs may name environment variables; resolve them on a copy.
	s := *r.s
	cs := *s.Compat
	cs.Oracles = map[string]*study.Oracle{}
	for name, o := range r.s.Compat.Oracles {
		oc := *o
		var err error
		if oc.URL, err = study.ExpandEnv(o.URL); err != nil {
			return fmt.Errorf("compat.oracles.%s.url: %w", name, err)
		}
		cs.Oracles[name] = &oc
	}
	s.Compat = &cs
	q := driver.NewQuerier(driver.Options{Timeout: r.s.Defaults.Timeout, MaxAnswer: maxAnswer})
	defer q.Close()
	r.progress("compat: %d case entries", len(r.s.Compat.Cases))
	c, err := compat.Run(ctx, &s, compat.Options{Endpoints: eps, Query: q, Progress: r.progress})
	if c != nil {
		r.res.Compat = c
		if err := r.save(); err != nil {
			return err
		}
		r.progress("compat: %d cases, %d failed", len(c.Cases), c.Failed)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// maxAnswer bounds one compat answer's body.
const maxAnswer = 64 << 20

// RTT probe (docs/methods.md): outside the rounds, the cheapest request a target
// answers (its ready.first_answer call) is timed in a closed loop of one
// client after a warm-up; its median is the round trip.
const (
	rttWarmup   = 200
	rttRequests = 2000
	rttBound    = 2 * time.Second
)

func (r *runner) probeRTT(ctx context.Context) {
	for _, l := range r.live {
		fa := l.spec.Ready.FirstAnswer
		if u, ok := l.endpoints["amqp"]; ok && l.err == nil && fa == nil {
			r.probeBroker(ctx, l, u)
			continue
		}
		if l.err != nil || fa == nil {
			continue
		}
		c, err := r.caller(ctx, l, fa.Call)
		if err != nil {
			continue
		}
		closed := load.Closed{Concurrency: 1, Timeout: r.s.Defaults.Timeout}
		closed.Requests, closed.Duration = rttWarmup, rttBound
		if _, err := closed.Run(ctx, c); err != nil {
			continue
		}
		closed.Requests = rttRequests
		s, err := closed.Run(ctx, c)
		if err != nil || s.OK == 0 {
			continue
		}
		l.res.RTTNs = s.LatencyNs.P50
		l.res.RTTCall = fa.Call
		r.progress("target %s: round trip of %s %v (median of %d)", l.spec.Name, fa.Call, time.Duration(s.LatencyNs.P50), s.OK)
	}
}

// The broker's RTT probe (the layered broker study): basic.qos, the cheapest request a
// broker answers, timed brokerRTTCalls times after brokerRTTWarmup.
const (
	brokerRTTWarmup = 2000
	brokerRTTCalls  = 20000
)

// probeBroker times the broker behind a target's amqp endpoint, once per
// broker.
func (r *runner) probeBroker(ctx context.Context, l *live, url string) {
	rtt, ok := r.brokerRTT[url]
	if !ok {
		var err error
		if rtt, err = amqpdrv.ProbeRTT(ctx, url, brokerRTTWarmup, brokerRTTCalls); err != nil {
			if ctx.Err() == nil {
				r.warn(fmt.Sprintf("target %s: the broker's round trip (basic.qos) could not be timed: %v", l.spec.Name, err))
			}
			return
		}
		r.brokerRTT[url] = rtt
		r.progress("broker %s: round trip of basic.qos %v (median of %d)", redactURL(url), rtt, brokerRTTCalls)
	}
	l.res.RTTNs, l.res.RTTCall = int64(rtt), "basic.qos"
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
		FirstAnswerNs: med(func(s results.Startup) int64 { return s.FirstAnswerNs }),
		ReadyNs:       med(func(s results.Startup) int64 { return s.ReadyNs }),
		CPUNs:         med(func(s results.Startup) int64 { return s.CPUNs }),
		PeakRSSBytes:  med(func(s results.Startup) int64 { return s.PeakRSSBytes }),
		DiskBytes:     med(func(s results.Startup) int64 { return s.DiskBytes }),
	}
}

func (r *runner) fail(l *live, err error) {
	l.err = err
	l.res.Error = err.Error()
	r.failed = append(r.failed, err)
	r.progress("target %s failed: %v", l.spec.Name, err)
}

// expander resolves a target's placeholders, choosing its ports once.
type expander struct {
	self, workdir, studyDir string
	ports                   map[string]int
	// services are the running services' endpoints.
	services map[string]map[string]string
	// secrets are the values expanded from ${env.*} and the passwords of
	// the URLs expanded: never written or printed (redact).
	secrets []string
}

// redact hides every secret the expander has expanded, and any URL
// password, in s: for what tandem writes and prints.
func (e *expander) redact(s string) string {
	for _, v := range e.secrets {
		s = strings.ReplaceAll(s, v, "xxx")
	}
	return redactURL(s)
}

// urlPassword matches the user:password@ of a URL.
var urlPassword = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*:)[^@\s/]+@`)

// shown is how an argument expanded from tmpl is recorded: as written
// where it used ${env.*} (so it is reproducible without the value), else
// expanded with any URL password hidden.
func (e *expander) shown(tmpl []string, expanded []string) []string {
	out := make([]string, len(expanded))
	for i, v := range expanded {
		if strings.Contains(tmpl[i], "${env.") {
			out[i] = tmpl[i]
		} else {
			out[i] = e.redact(v)
		}
	}
	return out
}

// minSecret is the shortest value redact hides wherever it appears: a
// shorter one (a port, a flag such as 1) would mangle every message it
// occurs in, and arguments that use ${env.*} are recorded as written
// anyway (shown).
const minSecret = 6

// secret notes an expanded value to keep out of what tandem writes.
func (e *expander) secret(v string) {
	if len(v) >= minSecret && !slices.Contains(e.secrets, v) {
		e.secrets = append(e.secrets, v)
	}
}

// newExpander is an expander with its own ports and scratch dir.
func (r *runner) newExpander(workdir string) *expander {
	dir := "."
	if r.s.File != "" {
		dir = filepath.Dir(r.s.File)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return &expander{self: r.o.Self, workdir: workdir, studyDir: dir, ports: map[string]int{}, services: r.serviceEndpoints}
}

func (e *expander) expand(s string) (string, error) {
	var lookupErr error
	out, err := study.Expand(s, func(name string) (string, bool) {
		ns, rest, _ := strings.Cut(name, ".")
		switch {
		case name == "tandem":
			return e.self, e.self == ""
		case name == "workdir":
			return e.workdir, false
		case name == "studydir":
			return e.studyDir, false
		case ns == "services":
			svc, ep, _ := strings.Cut(rest, ".")
			v, ok := e.services[svc][ep]
			if !ok && lookupErr == nil {
				lookupErr = fmt.Errorf("service %s has no running endpoint %s", svc, ep)
			}
			if u, err := url.Parse(v); err == nil && u.User != nil {
				if pw, ok := u.User.Password(); ok {
					e.secret(pw)
				}
			}
			return v, false
		case ns == "port":
			p, ok := e.ports[rest]
			if !ok {
				var err error
				if p, err = target.FreePort(); err != nil {
					lookupErr = err
					return "", false
				}
				e.ports[rest] = p
			}
			return strconv.Itoa(p), false
		case ns == "env":
			v, ok := os.LookupEnv(rest)
			if !ok {
				lookupErr = fmt.Errorf("environment variable %s is not set", rest)
			}
			e.secret(v)
			return v, false
		}
		return "", true
	})
	if lookupErr != nil {
		return "", lookupErr
	}
	return out, err
}

func (e *expander) all(in []string) ([]string, error) {
	out := make([]string, len(in))
	for i, s := range in {
		var err error
		if out[i], err = e.expand(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *runner) startTarget(ctx context.Context, l *live, cpus []int) error {
	t := l.spec
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
	dataDir, err := e.expand(t.DataDir)
	if err != nil {
		return fmt.Errorf("target %s: data_dir: %w", t.Name, err)
	}
	if dataDir != "" {
		if dataDir, err = filepath.Abs(dataDir); err != nil {
			return fmt.Errorf("target %s: data_dir: %w", t.Name, err)
		}
	}
	l.dataDir, l.res.DataDir = dataDir, dataDir
	if l.metrics, err = e.expand(t.Metrics); err != nil {
		return fmt.Errorf("target %s: metrics: %w", t.Name, err)
	}
	if t.Consumer != nil {
		return r.buildConsumer(ctx, l, e)
	}
	if t.Start == nil {
		r.progress("target %s: not started by tandem, using %v", t.Name, l.endpoints)
		return nil
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
	proc, err := target.Start(ctx, spec)
	if err != nil {
		return err
	}
	l.proc = proc
	st, err := r.awaitReady(ctx, l)
	if err != nil {
		return err
	}
	if dataDir != "" {
		if st.DiskBytes, err = target.DiskUsage(dataDir); err != nil {
			r.warn(fmt.Sprintf("target %s: disk use of %s: %v", t.Name, dataDir, err))
		}
	}
	l.res.Startup = st
	r.progress("target %s: first answer %v, ready %v, cpu %v, peak rss %.1f MiB, disk %.1f MiB", t.Name,
		time.Duration(st.FirstAnswerNs).Round(time.Millisecond), time.Duration(st.ReadyNs).Round(time.Millisecond),
		time.Duration(st.CPUNs).Round(time.Millisecond), float64(st.PeakRSSBytes)/(1<<20), float64(st.DiskBytes)/(1<<20))
	return nil
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
	for _, k := range sortedKeys(env) {
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
	t := l.spec
	ctx, cancel := context.WithTimeout(ctx, t.Ready.Timeout)
	defer cancel()
	start := l.proc.Started
	st := &results.Startup{}
	poll := func(every time.Duration, try func() bool) error {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for !try() {
			select {
			case <-l.proc.Done():
				return l.proc.ExitErr()
			case <-ctx.Done():
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return fmt.Errorf("target %s: not ready after %v; last output:\n    %s", t.Name, t.Ready.Timeout, strings.Join(l.proc.Tail(), "\n    "))
				}
				return ctx.Err()
			case <-tick.C:
			}
		}
		return nil
	}
	var first, cond driver.Caller
	var err error
	if fa := t.Ready.FirstAnswer; fa != nil {
		if first, err = r.caller(ctx, l, fa.Call); err != nil {
			return nil, err
		}
	}
	if c := t.Ready.Condition; c != nil {
		if cond, err = r.caller(ctx, l, c.Call); err != nil {
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
		err = poll(10*time.Millisecond, func() bool { return anyOpen(l.endpoints) })
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
			ok, got := Holds(ans[0], c.Path, c.Equals.V)
			last = got
			return ok
		})
		if err != nil {
			return nil, fmt.Errorf("%w (condition %s == %v; last value %s)", err, c.Path, c.Equals.V, last)
		}
	}
	if t.Ready.Log != "" {
		select {
		case <-l.proc.LineSeen():
		case <-l.proc.Done():
			return nil, l.proc.ExitErr()
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("target %s: no output line matched %q after %v; last output:\n    %s", t.Name, t.Ready.Log, t.Ready.Timeout, strings.Join(l.proc.Tail(), "\n    "))
			}
			return nil, ctx.Err()
		}
	}
	st.ReadyNs = int64(time.Since(start))
	cpu, rss := l.proc.Usage()
	st.CPUNs, st.PeakRSSBytes = int64(cpu), rss
	// The startup figures are taken: stop sampling /proc, which would
	// otherwise cost the generator CPU during the rounds.
	l.proc.StopSampling()
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

func (r *runner) caller(ctx context.Context, l *live, callName string) (driver.Caller, error) {
	call := r.s.Calls[callName]
	epName, err := call.EndpointName(l.spec)
	if err != nil {
		return nil, err
	}
	c, err := driver.New(ctx, call, l.endpoints[epName], driver.Options{Timeout: r.s.Defaults.Timeout})
	if err != nil {
		return nil, fmt.Errorf("target %s: call %s: %w", l.spec.Name, callName, err)
	}
	return c, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// serverBound says whether the baseline's run at a level was spent waiting
// for round trips: (RTT ÷ in-flight window) ≥ ½ × its time per request of
// the scenario's own call (per message for a drain), from its median
// round. The mark is judged only where it can be false: the RTT must be of
// the scenario's own transport (the same protocol and endpoint), and a
// closed loop of one client is left unmarked, since its every request
// waits one round trip by construction. why says why it was not judged.
func (r *runner) serverBound(sc *study.Scenario, out *results.Scenario, level int) (bound bool, why string) {
	var base *live
	for _, l := range r.live {
		if l.spec.Name == r.s.Baseline {
			base = l
		}
	}
	if base == nil || base.res.RTTNs == 0 {
		return false, ""
	}
	drain := out.Load.Model == "drain"
	window := float64(level)
	switch {
	case out.Load.Prefetch > 0:
		window = float64(out.Load.Prefetch) // a consumer's deliveries in flight
	case out.Load.Model != "closed":
		window = float64(max(out.Load.Connections, 1))
	case level <= 1:
		return false, "server-bound not judged: at one client every request waits a round trip by construction"
	}
	if !drain && !sameTransport(r.s.Calls[base.res.RTTCall], r.s.Calls[sc.Call], base.spec) {
		return false, fmt.Sprintf("server-bound not judged: the round trip was probed with %s, another transport than %s", base.res.RTTCall, sc.Call)
	}
	var perRequest []float64
	for _, rd := range out.Rounds {
		if rd.Target != r.s.Baseline || rd.Concurrency != level || rd.Failed || rd.DurationNs <= 0 {
			continue
		}
		n := rd.Requests // per request of the call, also for a stream of messages
		if drain {
			n = int64(rd.UnitsPerS * time.Duration(rd.DurationNs).Seconds()) // per message drained
		}
		if n > 0 {
			perRequest = append(perRequest, float64(rd.DurationNs)/float64(n))
		}
	}
	if len(perRequest) == 0 {
		return false, ""
	}
	return float64(base.res.RTTNs)/window >= 0.5*stats.Summarize(perRequest, false).Median, ""
}

// sameTransport reports whether two calls reach a target over the same
// protocol and endpoint.
func sameTransport(a, b *study.Call, t *study.Target) bool {
	if a == nil || b == nil || a.Protocol() != b.Protocol() {
		return false
	}
	ea, errA := a.EndpointName(t)
	eb, errB := b.EndpointName(t)
	return errA == nil && errB == nil && ea == eb
}

// generatorCapacity is the cores a scenario's load engine can use: one for
// the event loop, which runs on one thread, else the generator's cores.
func (r *runner) generatorCapacity(l study.Load) float64 {
	if l.Engine == "loop" {
		return 1
	}
	return float64(r.generatorCores)
}

// summarize judges the level by the study's verdict policy and marks each
// comparison server-bound where the baseline's run was spent on round trips.
func (r *runner) summarize(sc *study.Scenario, out *results.Scenario, ls []*live, level int) {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.spec.Name
	}
	first := len(out.Comparisons)
	verdict.Level(r.policy, out, level, names, r.s.Baseline, r.s.AA)
	bound, why := r.serverBound(sc, out, level)
	for i := first; i < len(out.Comparisons); i++ {
		c := &out.Comparisons[i]
		if c.Verdict == stats.NoiseReference {
			continue
		}
		c.ServerBound = bound
		if why != "" && (c.Verdict == stats.Faster || c.Verdict == stats.Slower || c.Verdict == stats.Indistinguishable) {
			c.Reason += "; " + why
		}
		b, cand := out.Side(c.Base, level).Summary, out.Side(c.Candidate, level).Summary
		if out.Load.Model == "drain" && (c.Verdict == stats.Faster || c.Verdict == stats.Slower) && cand.Best > 0 && b.Best > 0 {
			// a layer's overhead: the time per message it adds to the baseline's
			c.Reason += fmt.Sprintf("; %+.2f µs per message against %s", 1e6/cand.Best-1e6/b.Best, c.Base)
		}
	}
}
