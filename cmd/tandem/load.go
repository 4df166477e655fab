package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/driver/amqpdrv"
	"github.com/tandem-bench/tandem/finding"
	"github.com/tandem-bench/tandem/internal/amqpconf"
	"github.com/tandem-bench/tandem/internal/host"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/values"
	"golang.org/x/term"
)

// loadOptions are tandem load's flags.
type loadOptions struct {
	// The load shape.
	concurrency, connections, batch, maxWaiting int
	requests                                    int64
	duration, warmup, step, period, quantum     time.Duration
	rate, unit, engine                          string
	// concurrencySet says --concurrency was given: it is the closed loop's;
	// connectionsSet says --connections was (with a closed loop over gRPC:
	// the connections its clients share).
	concurrencySet, connectionsSet bool
	// The request.
	timeout                      time.Duration
	headers, protos, importPaths []string
	data, rpcMethod, params      string
	http2, insecure, quickACK    bool
	// valuesFile is --values: per-request values, seeded by seed; set is
	// it opened for the run.
	valuesFile string
	seed       uint64
	specs      map[string]values.Spec
	set        *values.Set
	// mixFile is --mix: calls and their weights, read into mix.
	mixFile string
	mix     *study.MixFile
	// AMQP.
	queueType, ack string
	prefetch, size int
	confirm        bool
	// The output.
	format, cpuprofile string
	// fleet, when it names workers, spreads the load over them.
	fleet fleetOptions
}

func loadCmd(stdout, stderr io.Writer) *cobra.Command {
	var o loadOptions
	c := &cobra.Command{
		Use:   "load TARGET",
		Short: "Load one target ad hoc, like vegeta, ghz or wrk2",
		Long: `load sends one request shape to one target and reports what it measured.
TARGET is one of:
  ` + strings.Join(driver.URLForms(), "\n  ") + `
  amqp://USER:PASS@HOST:PORT/VHOST (publish into and consume from a queue
    declared for the run: --queue-type, --prefetch, --size, --confirm, --ack;
    ok = messages consumed and acked, latency from each message's send time,
    throughput from the first delivery to the last ack; a run stopped early
    counts the messages still in flight as unfinished, not failed)

Load shapes:
  --concurrency N            closed loop: N clients, each waiting for its answer (default)
  --concurrency N --connections C
                             gRPC: the N clients share C connections (calls as streams)
  --rate R --connections C   open loop: R arrivals/s in total over C connections, on an
                             absolute timetable; latency counts from the intended send
  --rate 100-1000            a linear ramp over --duration
  --rate 100,500,1000        steps, each --step long (default: --duration split evenly)
  --batch R --connections C  batched: R requests at the start of every --period on each
                             connection (CometBFT's load-runner shape)

A load is held to the bounds a study's is, for the whole run: at most
10,000,000 arrivals/s in total (a ramp's or a step's peak, a batch's
R × C / --period), at most 1,000,000,000 arrivals or --requests a run. A
shape that sends nothing (--rate 0, a ramp 0-0, steps all 0) is refused; a
step of 0 among others is a pause.

Per-request values: --values FILE reads a YAML file whose values: key maps
names to sources, as a study call's values: does (docs/values.md; a feeder's
path is relative to the current directory), seeded by --seed. The request's
--data, --params, --header values and an http(s) URL's path and query then
name them as ${NAME} (a feeder's column as ${NAME.COLUMN}; $${ for a literal
${; ${env.NAME} an environment variable); request i of the run gets the
values of i. A feeder read once (order: once) ends the run at its rows.
Without --values every flag is sent as written.

Engines: HTTP/1.1 and JSON-RPC run on one thread that owns every connection (the
event loop, on Linux); every other protocol on a goroutine per connection; the
result names the engine (--engine loop|workers chooses).

Beyond one machine: --local-workers N starts N worker processes here, and
--workers N waits for N workers that join by themselves (tandem worker
--nats URL on each generator host, or tandem k8s job); the load is split
exactly between them, started together, and their histograms added up into
one result with the fleet's account (docs/distributed.md).

Before the run it resolves the target's host and opens one connection to it
(for up to 2 s), then sends one request. Exit codes: 0 the run completed; 1 no
request succeeded, whatever the failures were (the results are printed all
the same); 2 bad input, or
the target cannot be reached; 130 after SIGINT and 143 after SIGTERM, which
stop the run and print what it measured so far, marked interrupted.`,
		Example: "  tandem load grpc://127.0.0.1:9090/tandem.sample.v1.Ledger/GetBlock --data '{\"height\":5}' --concurrency 8 --duration 10s\n" +
			"  tandem load http://127.0.0.1:8080/ping --rate 5000 --connections 16 --duration 30s\n" +
			"  tandem load http://127.0.0.1:8080/ --jsonrpc getbalance --params '[\"tz1000042\"]' --rate 100-2000 --duration 20s --format json\n" +
			"  tandem load grpc://127.0.0.1:9090/tandem.sample.v1.Ledger/GetBlock --data '{\"height\":\"${h}\"}' --values heights.yaml --concurrency 8\n" +
			"  tandem load amqp://guest:guest@127.0.0.1:5672/ --queue-type quorum --prefetch 512 --size 1024 --requests 100000",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			defer func() { err = interruptedExit(cmd.Context(), err) }()
			o.concurrencySet = cmd.Flags().Changed("concurrency")
			o.connectionsSet = cmd.Flags().Changed("connections")
			return runLoad(cmd, args[0], o, stdout, stderr)
		},
	}
	loadFlags(c.Flags(), &o)
	fleetFlags(c.Flags(), &o.fleet)
	return c
}

// loadFlags defines tandem load's flags of the load itself on f: those a
// distributed run hands on to its workers.
func loadFlags(f *pflag.FlagSet, o *loadOptions) {
	f.IntVar(&o.concurrency, "concurrency", 1, "closed loop: clients, each waiting for its answer")
	f.StringVar(&o.rate, "rate", "", "open loop: arrivals per second in total (R, FROM-TO for a ramp, R1,R2,… for steps)")
	f.IntVar(&o.connections, "connections", 1, "open and batched loops: connections to spread the load over; a closed loop over gRPC: connections its clients share (default one each)")
	f.IntVar(&o.batch, "batch", 0, "batched loop: requests per period on each connection")
	f.DurationVar(&o.period, "period", time.Second, "batched loop: the period")
	f.DurationVar(&o.step, "step", 0, "length of each step of --rate R1,R2,…")
	f.IntVar(&o.maxWaiting, "max-waiting", 10000, "open loop: arrivals that may wait for a free connection before arrivals are dropped")
	f.DurationVar(&o.quantum, "quantum", 0, "on the event loop: wake at most once per quantum; an open loop sends every arrival due by then (less CPU; the lateness shows in schedule lag and latency), a closed loop reads every answer that came by then (a server the generator saturates serves more; the wait shows in think time)")
	f.StringVar(&o.engine, "engine", "", "loop (one thread owns every connection; in an open loop it sleeps through the answers, which the kernel stamps: less CPU per request; plain HTTP/1.1 only) or workers (a goroutine per connection); default: loop wherever it applies, else workers")
	f.Int64Var(&o.requests, "requests", 0, "stop after this many requests")
	f.DurationVar(&o.duration, "duration", 0, "stop after this long (default 10s without --requests)")
	f.DurationVar(&o.warmup, "warmup", 0, "send for this long first and discard it")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "per-request timeout")
	f.StringArrayVar(&o.headers, "header", nil, "HTTP header or gRPC metadata, Name: value (repeatable)")
	f.StringVar(&o.data, "data", "", "request body (HTTP) or request message as JSON (gRPC); @FILE reads a file")
	f.StringVar(&o.rpcMethod, "jsonrpc", "", "send a JSON-RPC 2.0 call of this method")
	f.StringVar(&o.params, "params", "[]", "JSON-RPC params as JSON")
	f.StringVar(&o.valuesFile, "values", "", "a YAML file of per-request values (values: {NAME: SOURCE}) that --data, --params, --header and the URL's path name as ${NAME}")
	f.Uint64Var(&o.seed, "seed", 1, "with --values or --mix: the seed of their generators, random feeders and the mix's draw")
	f.StringVar(&o.mixFile, "mix", "", "a YAML file of calls (calls:, as a study's) and their weights (mix: [{call, weight}]): each request is one of them, drawn by weight from --seed, sent to TARGET")
	f.StringArrayVar(&o.protos, "proto", nil, ".proto file defining the service (repeatable); default: server reflection")
	f.StringArrayVar(&o.importPaths, "import-path", nil, "directory searched for --proto files and their imports")
	f.StringVar(&o.format, "format", "text", report.FormatList(report.ForSample))
	f.BoolVar(&o.http2, "http2", false, "speak HTTP/2 (TLS for https://, h2c for http://)")
	f.BoolVar(&o.insecure, "insecure", false, "do not verify the server's TLS certificate")
	f.StringVar(&o.unit, "unit", "", "the unit of work: request, or message (each streamed message); default message for server-streaming gRPC")
	f.BoolVar(&o.quickACK, "quickack", false, "acknowledge every segment at once (TCP_QUICKACK): if a ~40 ms stall vanishes, the server waits for delayed ACKs")
	f.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the generator (pprof) to this file")
	f.StringVar(&o.queueType, "queue-type", amqpconf.DefaultQueueType, "amqp: "+amqpconf.QueueTypes+" (a queue declared for the run, deleted after)")
	f.IntVar(&o.prefetch, "prefetch", amqpconf.DefaultPrefetch, "amqp: the consumer's prefetch window")
	f.IntVar(&o.size, "size", amqpconf.DefaultSize, "amqp: message body in bytes (the first 8 carry the send time)")
	f.BoolVar(&o.confirm, "confirm", false, "amqp: publish with publisher confirms")
	f.StringVar(&o.ack, "ack", amqpconf.DefaultAck, "amqp: "+amqpconf.AckModes)
}

// runLoad runs tandem load against target: it checks the flags, reaches
// the target, runs the load shape o names and prints what it measured.
func runLoad(cmd *cobra.Command, target string, o loadOptions, stdout, stderr io.Writer) error {
	ctx := cmd.Context()
	u, err := driver.TargetURL(target)
	if err != nil {
		return badInput(err)
	}
	if _, err := outputFormat(o.format, report.ForSample); err != nil {
		return err
	}
	if err := loadFlagBounds(o); err != nil {
		return badInput(err)
	}
	if u.Scheme == "amqp" || u.Scheme == "amqps" {
		if o.fleet.active() {
			return badInput(errors.New("--workers, --local-workers: an AMQP load runs on one machine"))
		}
		return runAMQP(ctx, target, o, stdout)
	}
	if err := o.checkShape(); err != nil {
		return badInput(err)
	}
	if o.valuesFile != "" {
		var err error
		if o, err = o.openValues(ctx, stderr); err != nil {
			return badInput(err)
		}
		defer o.set.Close()
	}
	if o.mixFile != "" {
		var err error
		if o, err = o.readMix(cmd.Flags().Changed, stderr); err != nil {
			return badInput(err)
		}
	}
	if o.requests <= 0 && o.duration <= 0 && !strings.Contains(o.rate, ",") {
		o.duration = 10 * time.Second
	}
	if o.fleet.active() {
		return runFleet(cmd, target, o, stdout, stderr)
	}
	d, o, err := prepareLoad(ctx, target, o)
	if err != nil {
		return err
	}
	if c, ok := d.(io.Closer); ok { // a mix's values
		defer c.Close()
	}
	var live *load.Live
	if liveTerminal(stderr) {
		live = &load.Live{}
	}
	exec, err := o.executor(d, live)
	if err != nil {
		return badInput(err)
	}
	if err := o.warm(ctx, d); err != nil {
		return err
	}
	s, cpu, err := o.measure(ctx, exec, live, stderr)
	if err != nil {
		return err
	}
	conns := o.connections
	if o.rate == "" && o.batch == 0 {
		conns = o.concurrency
	}
	var parts []string
	if o.mix != nil {
		for _, mc := range o.mix.Mix {
			parts = append(parts, mc.Call)
		}
	}
	return finish(ctx, stdout, o.format, report.SampleRun{Sample: s, Parts: parts, Warnings: finding.Generator(s, cpu, conns)})
}

// openValues opens --values for the run: a feeder read once bounds its
// requests (and refuses --batch, which has no such bound), which it says
// on stderr.
func (o loadOptions) openValues(ctx context.Context, stderr io.Writer) (loadOptions, error) {
	if o.fleet.active() {
		return o, errors.New("--values: a run on one machine (not --workers, --local-workers)")
	}
	var err error
	if o.specs, err = study.ReadValues(o.valuesFile, "."); err != nil {
		return o, fmt.Errorf("--values: %w", err)
	}
	if o.set, err = values.Open(ctx, o.seed, o.specs); err != nil {
		return o, fmt.Errorf("--values %s: %w", o.valuesFile, err)
	}
	if n, ok := o.set.Limit(); ok {
		if o.batch > 0 {
			o.set.Close()
			return o, errors.New("--values with a feeder read once: a closed or open loop (--concurrency or --rate), which it ends at its rows; not --batch")
		}
		if o.requests <= 0 || uint64(o.requests) > n {
			o.requests = int64(min(n, 1<<62))
		}
		fmt.Fprintf(stderr, "values: the run ends after %d requests, the rows of its feeder read once\n", o.requests)
	}
	return o, nil
}

// readMix reads --mix for the run; changed says which flags were given,
// and those that describe a request are refused beside it (the file's
// calls carry theirs). A feeder read once bounds the run's requests, which
// it says on stderr, as --values does.
func (o loadOptions) readMix(changed func(string) bool, stderr io.Writer) (loadOptions, error) {
	for _, f := range []string{"data", "jsonrpc", "params", "values", "header", "proto", "import-path", "http2", "insecure", "unit"} {
		if changed(f) {
			return o, fmt.Errorf("--mix and --%s: the mix file's calls carry their requests (docs/study-format.md, Calls)", f)
		}
	}
	switch {
	case o.fleet.active():
		return o, errors.New("--mix: a run on one machine (not --workers, --local-workers)")
	case o.rate == "" && o.batch == 0 && o.connectionsSet:
		return o, errors.New("--mix with --concurrency: a connection per client (leave out --connections)")
	}
	mf, err := study.ReadMix(o.mixFile, o.seed)
	if err != nil {
		return o, fmt.Errorf("--mix: %w", err)
	}
	o.mix = mf
	fmt.Fprintf(stderr, "mix: %s, drawn from seed %d\n", mf, o.seed)
	if n, ok := mf.OnceRows(); ok {
		if o.batch > 0 {
			return o, errors.New("--mix with a feeder read once: a closed or open loop (--concurrency or --rate), which it ends at its rows; not --batch")
		}
		if o.requests <= 0 || uint64(o.requests) > n {
			o.requests = int64(min(n, 1<<62))
		}
		fmt.Fprintf(stderr, "mix: the run ends after %d requests, the rows of a feeder read once\n", o.requests)
	}
	return o, nil
}

// onceRows is the most requests a run may send by --values' or --mix's
// feeders read once; ok is false when none limits it.
func (o loadOptions) onceRows() (n uint64, ok bool) {
	if o.set != nil {
		n, ok = o.set.Limit()
	}
	if o.mix != nil {
		if m, limited := o.mix.OnceRows(); limited && (!ok || m < n) {
			n, ok = m, true
		}
	}
	return n, ok
}

// prepareLoad builds the driver of o's call to target, checks that the
// engine and rate suit it, reaches the target and settles the unit of
// work: what a run does before its load, on one machine or on each worker.
func prepareLoad(ctx context.Context, target string, o loadOptions) (load.Dialer, loadOptions, error) {
	u, err := driver.TargetURL(target)
	if err != nil {
		return nil, o, badInput(err)
	}
	body, err := readData(o.data)
	if err != nil {
		return nil, o, badInput(err)
	}
	d, err := loadDialer(ctx, target, body, o)
	if err != nil {
		return nil, o, badInput(err)
	}
	if err := o.checkEngine(d); err != nil {
		return nil, o, badInput(err)
	}
	if w, _ := load.EngineWire(o.engine, d); (w != nil || o.rate != "" || o.batch > 0) && runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2) // a P for the open loop's waits, or the event loop's, beside the rest (see load.Open)
	}
	if err := driver.Preflight(ctx, u, d, o.timeout); err != nil {
		return nil, o, badInput(err)
	}
	if o.unit == "" {
		o.unit = driver.Unit(d)
	}
	return d, o, nil
}

// runAMQP publishes into and consumes from a queue declared for the run
// (amqpdrv.Run) and prints what it measured.
func runAMQP(ctx context.Context, target string, o loadOptions, stdout io.Writer) error {
	if o.requests <= 0 && o.duration <= 0 {
		o.duration = 10 * time.Second
	}
	var r float64
	if o.rate != "" {
		var err error
		if r, err = strconv.ParseFloat(o.rate, 64); err != nil || r <= 0 {
			return badInput(fmt.Errorf("--rate %q: an AMQP run takes one rate in messages per second", o.rate))
		}
	}
	s, err := amqpdrv.Run(ctx, amqpdrv.Options{URL: target, QueueType: o.queueType, Prefetch: o.prefetch, Size: o.size,
		Confirm: o.confirm, Ack: o.ack, Messages: o.requests, Duration: o.duration, Timeout: o.timeout, Rate: r})
	if err != nil && ctx.Err() == nil {
		return badInput(err)
	}
	if r > 0 {
		s.OfferedRate = r
	}
	return finish(ctx, stdout, o.format, report.SampleRun{Sample: s})
}

// checkShape refuses flags that do not make one load shape.
func (o loadOptions) checkShape() error {
	switch {
	case o.unit != "" && o.unit != "request" && o.unit != "message":
		return fmt.Errorf("--unit %q: want request or message", o.unit)
	case o.rate != "" && o.batch > 0:
		return errors.New("--rate and --batch are two load shapes: choose one")
	case (o.rate != "" || o.batch > 0) && o.concurrencySet:
		return errors.New("--concurrency is the closed loop; with --rate or --batch use --connections")
	}
	return nil
}

// checkEngine refuses an --engine or --quantum the dialer d and the load
// shape cannot run. Without --engine the event loop runs wherever it
// applies (a closed or open loop over plain HTTP/1.1 to IPv4, on Linux).
func (o loadOptions) checkEngine(d load.Dialer) error {
	w, err := load.EngineWire(o.engine, d)
	if err != nil || o.engine == load.EngineLoop && o.batch > 0 {
		return fmt.Errorf("--engine %s: workers, or loop for a closed or open loop (not --batch) over plain HTTP/1.1 (http://, no --http2) to an IPv4 address", o.engine)
	}
	if o.quantum < 0 || o.quantum > 0 && (w == nil || o.batch > 0) {
		return errors.New("--quantum: a positive duration, on the event loop (a closed or open loop over plain HTTP/1.1)")
	}
	return nil
}

// spec is the load o's flags describe: an open loop with --rate, a
// batched one with --batch, else a closed loop.
func (o loadOptions) spec() (load.Spec, error) {
	spec := load.Spec{Kind: load.KindClosed, Clients: o.concurrency, Requests: o.requests, Duration: o.duration, Warmup: o.warmup,
		Timeout: o.timeout, Unit: o.unit, Engine: o.engine, Quantum: o.quantum}
	switch {
	case o.rate != "":
		sch, err := load.ParseRate(o.rate, o.duration, o.step)
		if err != nil {
			return spec, fmt.Errorf("--rate: %w", err)
		}
		spec.Kind, spec.Schedule, spec.Connections, spec.MaxWaiting = load.KindOpen, sch, o.connections, o.maxWaiting
	case o.batch > 0:
		if o.duration <= 0 {
			return spec, errors.New("--batch needs --duration")
		}
		spec.Kind, spec.Connections, spec.PerPeriod, spec.Period = load.KindBatched, o.connections, o.batch, o.period
	}
	return spec, nil
}

// shareFlag is the flag whose count a fleet splits.
func (o loadOptions) shareFlag() string {
	if o.rate == "" && o.batch == 0 {
		return "--concurrency"
	}
	return "--connections"
}

// fleetPart is the load as a fleet's workers get it: the call the target
// URL and the flags describe (--data read here: the workers need not have
// the file), and the spec, whole.
func (o loadOptions) fleetPart(target string) (runner.FleetPart, error) {
	spec, err := o.spec()
	if err != nil {
		return runner.FleetPart{}, err
	}
	body, err := readData(o.data)
	if err != nil {
		return runner.FleetPart{}, err
	}
	uo, err := o.urlOptions(body)
	if err != nil {
		return runner.FleetPart{}, err
	}
	call, endpoint, err := driver.CallFromURL(target, uo)
	if err != nil {
		return runner.FleetPart{}, err
	}
	u, err := driver.TargetURL(target)
	if err != nil {
		return runner.FleetPart{}, err
	}
	shared, err := o.sharedConnections(call)
	if err != nil {
		return runner.FleetPart{}, err
	}
	return runner.FleetPart{Target: u.Redacted(), Call: call, Endpoint: endpoint, Shared: shared, QuickACK: o.quickACK, Check: true, Spec: spec}, nil
}

// executor is the run of o's load on d; live, if not nil, counts as the
// run goes.
func (o loadOptions) executor(d load.Dialer, live *load.Live) (func(context.Context) (results.Sample, error), error) {
	spec, err := o.spec()
	if err != nil {
		return nil, err
	}
	spec.Live = live
	return bind(spec.Run, d), nil
}

// warm sends for --warmup first, in a closed loop, and discards it.
func (o loadOptions) warm(ctx context.Context, d load.Dialer) error {
	spec, err := o.spec()
	if err != nil {
		return badInput(err)
	}
	warm, ok := spec.WarmUp()
	if !ok {
		return nil
	}
	if n, ok := o.onceRows(); ok {
		warm.Requests = int64(min(n, 1<<62)) // its rows, as the run
	}
	if _, err := warm.Run(ctx, d); err != nil {
		return badInput(err)
	}
	if ctx.Err() != nil {
		return errors.New("nothing was measured: the warmup was not over")
	}
	return nil
}

// measure runs exec, profiling it with --cpuprofile and showing its
// progress on stderr if live counts it, and returns the sample and the CPU
// time the process used meanwhile.
func (o loadOptions) measure(ctx context.Context, exec func(context.Context) (results.Sample, error), live *load.Live, stderr io.Writer) (results.Sample, time.Duration, error) {
	var stopProgress func()
	if live != nil {
		stopProgress = progressLine(stderr, live, o.duration, o.requests)
	}
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return results.Sample{}, 0, badInput(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return results.Sample{}, 0, fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	cpu0, _ := host.CPUTime() // 0 where the OS does not say
	s, err := exec(ctx)
	cpu1, _ := host.CPUTime()
	cpu := cpu1 - cpu0
	if stopProgress != nil {
		stopProgress()
	}
	if err != nil {
		return s, cpu, badInput(err)
	}
	return s, cpu, nil
}

// finish prints the sample of a run that ctx ran and says how the run
// ended: stopped early (marked interrupted; interruptedExit gives the exit
// code), complete, or complete without a success where the target
// answered no request (exit 1: a load test of nothing).
func finish(ctx context.Context, w io.Writer, format string, r report.SampleRun) error {
	if ctx.Err() != nil {
		r.StoppedBy = stoppedBy(ctx)
	}
	if err := report.Sample(w, format, r); err != nil || r.StoppedBy != "" {
		return err
	}
	return noneSucceeded(r.Sample)
}

// noneSucceeded is an exit-1 error for a run that sent requests of which
// none succeeded, whatever the failures were (refused, timeouts, error
// statuses, garbage): its results are printed, but no figure in them
// describes a working service. nil otherwise.
func noneSucceeded(s results.Sample) error {
	if s.OK > 0 || s.Requests == 0 {
		return nil
	}
	return &exitError{exitCheckFailed, fmt.Errorf("no request succeeded (%s)", report.ErrorList(s))}
}

// stoppedBy says what cancelled ctx: "SIGINT", or "cancellation" without a
// signal.
func stoppedBy(ctx context.Context) string {
	var in interruption
	if errors.As(context.Cause(ctx), &in) {
		return signalName(in.sig)
	}
	return "cancellation"
}

// interruptedExit gives err the exit status of the signal that stopped
// ctx (130 after SIGINT, 143 after SIGTERM; 130 for a cancellation without
// one), and a run cut short without an error an error that says so. Without
// an interruption it returns err as it is.
func interruptedExit(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	code := exitInterrupted
	var in interruption
	if errors.As(context.Cause(ctx), &in) {
		code = in.code()
	}
	if err == nil {
		return &exitError{code, fmt.Errorf("stopped by %s: the results are what was measured before", stoppedBy(ctx))}
	}
	return &exitError{code, fmt.Errorf("stopped by %s: %w", stoppedBy(ctx), err)}
}

// bind fixes an executor's dialer.
func bind(run func(context.Context, load.Dialer) (results.Sample, error), d load.Dialer) func(context.Context) (results.Sample, error) {
	return func(ctx context.Context) (results.Sample, error) { return run(ctx, d) }
}

func readData(data string) ([]byte, error) {
	if name, ok := strings.CutPrefix(data, "@"); ok {
		return os.ReadFile(name)
	}
	return []byte(data), nil
}

// loadDialer builds the driver of the call a target URL and the flags
// describe (see driver.CallFromURL); --header values are Name: value.
func loadDialer(ctx context.Context, target string, body []byte, o loadOptions) (load.Dialer, error) {
	if o.mix != nil {
		m, err := driver.MixAt(ctx, target, o.mix, driver.Options{Timeout: o.timeout, QuickACK: o.quickACK})
		if err != nil {
			return nil, fmt.Errorf("--mix %s: %w", o.mixFile, err)
		}
		return m, nil
	}
	uo, err := o.urlOptions(body)
	if err != nil {
		return nil, err
	}
	var vals *driver.Values
	if o.set != nil {
		uo.Values = o.specs
		vals = driver.NewValues(o.set)
	}
	call, endpoint, err := driver.CallFromURL(target, uo)
	if err != nil {
		return nil, err
	}
	shared, err := o.sharedConnections(call)
	if err != nil {
		return nil, err
	}
	d, err := driver.New(ctx, call, endpoint, driver.Options{Timeout: o.timeout, QuickACK: o.quickACK, Connections: shared, Values: vals})
	if err != nil && vals != nil {
		return nil, fmt.Errorf("the request with --values %s: %w", o.valuesFile, err)
	}
	return d, err
}

// urlOptions are the flags that describe the request, with body for
// --data; --header values are Name: value.
func (o loadOptions) urlOptions(body []byte) (driver.URLOptions, error) {
	hdr := map[string]string{}
	for _, h := range o.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			return driver.URLOptions{}, fmt.Errorf("--header %q: want Name: value", h)
		}
		hdr[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return driver.URLOptions{Body: body, RPCMethod: o.rpcMethod, Params: o.params, Headers: hdr,
		Protos: o.protos, ImportPaths: o.importPaths, HTTP2: o.http2, Insecure: o.insecure}, nil
}

// sharedConnections is the connections a closed loop's clients share
// (--connections with --concurrency, gRPC only), else 0: one each.
func (o loadOptions) sharedConnections(call *study.Call) (int, error) {
	if o.rate != "" || o.batch > 0 || !o.connectionsSet {
		return 0, nil
	}
	if call.GRPC == nil {
		return 0, errors.New("--connections with --concurrency: gRPC only (its calls share a connection as streams); a closed loop over any other protocol has a connection per client")
	}
	return o.connections, nil
}

// progressLine redraws one status line on a terminal every half second
// until the returned function is called: elapsed, the rate and latency of
// the last whole second, the counts so far, and about how long is left
// (of the duration, or of the requests at the last second's rate).
func progressLine(w io.Writer, live *load.Live, total time.Duration, requests int64) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	start := time.Now()
	width := 0
	if f, ok := fileOf(w); ok {
		width, _, _ = term.GetSize(int(f.Fd()))
	}
	go func() {
		defer close(stopped)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprint(w, "\r\033[K"+fit(loadStatus(live, time.Since(start), total, requests), width-1))
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// loadStatus is tandem load's live line.
func loadStatus(live *load.Live, elapsed, total time.Duration, requests int64) string {
	el := elapsed.Round(100 * time.Millisecond)
	s := el.String()
	if total > 0 {
		s += " / " + total.String()
	}
	sent := live.Sent.Load()
	left := time.Duration(-1)
	if total > 0 {
		left = max(total-elapsed, 0)
	}
	if sec, ok := live.LastSecond(); ok {
		if rate := sec.OK + sec.Errors; rate > 0 {
			s += fmt.Sprintf(" · %s/s", human.Count(rate))
			if requests > 0 { // the run ends at whichever bound comes first
				byCount := time.Duration(float64(max(requests-sent, 0)) / float64(rate) * float64(time.Second))
				if left < 0 || byCount < left {
					left = byCount
				}
			}
		}
		if sec.OK > 0 {
			s += fmt.Sprintf(" · last second p50 %s, p99 %s", human.Duration(float64(sec.P50Ns)), human.Duration(float64(sec.P99Ns)))
		}
	}
	s += fmt.Sprintf(" · %s sent, %s ok, %s errors", human.Count(sent), human.Count(live.OK.Load()), human.Count(live.Errors.Load()))
	if left >= 0 {
		s += " · about " + left.Round(time.Second).String() + " left"
	}
	return s
}

// loadFlagBounds refuses flag values a run cannot honour, each named with
// the value given: negative counts and durations, no clients or
// connections, more of them than this machine's open-file limit holds, and
// a load over a study's bounds (loadShapeBounds).
func loadFlagBounds(f loadOptions) error {
	var errs []error
	for _, d := range []struct {
		name     string
		v        time.Duration
		positive bool
	}{{"duration", f.duration, false}, {"warmup", f.warmup, false}, {"step", f.step, false}, {"timeout", f.timeout, true}, {"period", f.period, true}} {
		if d.v < 0 || d.positive && d.v == 0 {
			errs = append(errs, fmt.Errorf("--%s %v: want a positive duration", d.name, d.v))
		}
	}
	for _, n := range []struct {
		name string
		v    int64
		min  int64
	}{{"requests", f.requests, 0}, {"batch", int64(f.batch), 0}, {"max-waiting", int64(f.maxWaiting), 0},
		{"concurrency", int64(f.concurrency), 1}, {"connections", int64(f.connections), 1}} {
		if n.v < n.min {
			errs = append(errs, fmt.Errorf("--%s %d: want %d or more", n.name, n.v, n.min))
		}
	}
	files := 1
	if f.rate != "" {
		files = 2 // a socket and a timer per connection (an open loop)
	}
	most, why := study.ConnectionBound(files)
	for _, n := range []struct {
		name string
		v    int
	}{{"concurrency", f.concurrency}, {"connections", f.connections}} {
		if n.v > most {
			errs = append(errs, fmt.Errorf("--%s %d: more than this machine holds, %d (%s)", n.name, n.v, most, why))
		}
	}
	return errors.Join(append(errs, loadShapeBounds(f)...)...)
}

// loadShapeBounds holds the load the flags describe, for the whole run (on
// one machine or a fleet), to the bounds a study's scenario gets, in a
// study's words (study.LoadBounds): a peak rate of at most study.MaxRate
// arrivals per second in total, and at most study.MaxArrivals arrivals and
// requests a run. A --rate that does not parse is an error here too.
func loadShapeBounds(f loadOptions) []error {
	duration := f.duration
	if f.requests <= 0 && duration <= 0 && !strings.Contains(f.rate, ",") {
		duration = 10 * time.Second // as the run defaults it
	}
	var l study.Load
	switch {
	case f.rate != "" && f.batch > 0:
		return nil // two shapes: checkShape says so
	case f.rate != "":
		sch, err := load.ParseRate(f.rate, duration, f.step)
		if err != nil {
			return []error{fmt.Errorf("--rate: %w", err)}
		}
		l = shapeOf(sch)
	case f.batch > 0:
		l = study.Load{Batch: &study.Batch{PerPeriod: f.batch, Period: f.period}, Connections: f.connections}
	}
	var errs []error
	for _, b := range study.LoadBounds(l, duration, f.requests) {
		flag := "--rate " + f.rate
		switch {
		case b.Key == "requests":
			flag = fmt.Sprintf("--requests %d", f.requests)
		case b.Key == "load.batch":
			flag = fmt.Sprintf("--batch %d", f.batch)
		case b.Key == "duration" && f.duration > 0:
			flag = fmt.Sprintf("--duration %v", f.duration)
		}
		errs = append(errs, fmt.Errorf("%s: %s (%s)", flag, b.Msg, b.Expected))
	}
	return errs
}

// shapeOf is a --rate schedule as a study's load shape.
func shapeOf(sch load.Schedule) study.Load {
	switch x := sch.(type) {
	case load.Constant:
		return study.Load{Rate: x.Rate}
	case load.Ramp:
		return study.Load{Ramp: &study.Ramp{From: x.From, To: x.To}}
	case load.Steps:
		steps := make([]study.Step, len(x))
		for i, st := range x {
			steps[i] = study.Step{Rate: st.Rate, Duration: st.Duration}
		}
		return study.Load{Steps: steps}
	}
	return study.Load{}
}
