package adhoc

import (
	"context"
	"errors"
	"fmt"
	"github.com/tandem-bench/tandem/finding"
	"github.com/tandem-bench/tandem/internal/host"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/values"
)

// Load is a load opened for a run: its options checked and defaulted, its
// values and its mix open. Close it.
type Load struct {
	o     Options
	specs map[string]values.Spec
	set   *values.Set
	mix   *study.MixFile
}

// Open checks that o makes one load shape, opens its values and reads its
// mix (saying on notes where a feeder read once bounds the run), and gives
// a load without a bound 10 s.
func Open(ctx context.Context, o Options, notes io.Writer) (*Load, error) {
	if err := o.checkShape(); err != nil {
		return nil, err
	}
	l := &Load{o: o}
	if o.ValuesFile != "" {
		if err := l.openValues(ctx, notes); err != nil {
			return nil, err
		}
	}
	if o.MixFile != "" {
		if err := l.readMix(notes); err != nil {
			l.Close()
			return nil, err
		}
	}
	if l.o.Requests <= 0 && l.o.Duration <= 0 && !strings.Contains(l.o.Rate, ",") {
		l.o.Duration = 10 * time.Second
	}
	return l, nil
}

// Options are the load's options, as Open settled them.
func (l *Load) Options() Options { return l.o }

// Close closes the load's values.
func (l *Load) Close() {
	if l.set != nil {
		l.set.Close()
	}
}

// openValues opens the values file: a feeder read once bounds the run's
// requests (and refuses a batch, which has no such bound), which it says
// on notes.
func (l *Load) openValues(ctx context.Context, notes io.Writer) error {
	var err error
	if l.specs, err = study.ReadValues(l.o.ValuesFile, "."); err != nil {
		return fmt.Errorf("--values: %w", err)
	}
	if l.set, err = values.Open(ctx, l.o.Seed, l.specs); err != nil {
		return fmt.Errorf("--values %s: %w", l.o.ValuesFile, err)
	}
	if n, ok := l.set.Limit(); ok {
		if l.o.Batch > 0 {
			l.set.Close()
			return errors.New("--values with a feeder read once: a closed or open loop (--concurrency or --rate), which it ends at its rows; not --batch")
		}
		if l.o.Requests <= 0 || uint64(l.o.Requests) > n {
			l.o.Requests = int64(min(n, 1<<62))
		}
		fmt.Fprintf(notes, "values: the run ends after %d requests, the rows of its feeder read once\n", l.o.Requests)
	}
	return nil
}

// readMix reads the mix file. A feeder read once bounds the run's
// requests, which it says on notes, as the values do.
func (l *Load) readMix(notes io.Writer) error {
	if l.o.Rate == "" && l.o.Batch == 0 && l.o.ConnectionsSet {
		return errors.New("--mix with --concurrency: a connection per client (leave out --connections)")
	}
	mf, err := study.ReadMix(l.o.MixFile, l.o.Seed)
	if err != nil {
		return fmt.Errorf("--mix: %w", err)
	}
	l.mix = mf
	fmt.Fprintf(notes, "mix: %s, drawn from seed %d\n", mf, l.o.Seed)
	if n, ok := mf.OnceRows(); ok {
		if l.o.Batch > 0 {
			return errors.New("--mix with a feeder read once: a closed or open loop (--concurrency or --rate), which it ends at its rows; not --batch")
		}
		if l.o.Requests <= 0 || uint64(l.o.Requests) > n {
			l.o.Requests = int64(min(n, 1<<62))
		}
		fmt.Fprintf(notes, "mix: the run ends after %d requests, the rows of a feeder read once\n", l.o.Requests)
	}
	return nil
}

// onceRows is the most requests a run may send by the values' or the
// mix's feeders read once; ok is false when none limits it.
func (l *Load) onceRows() (n uint64, ok bool) {
	if l.set != nil {
		n, ok = l.set.Limit()
	}
	if l.mix != nil {
		if m, limited := l.mix.OnceRows(); limited && (!ok || m < n) {
			n, ok = m, true
		}
	}
	return n, ok
}

// Parts are the mix's calls, each of which the sample records apart (nil
// without a mix).
func (l *Load) Parts() []string {
	if l.mix == nil {
		return nil
	}
	var parts []string
	for _, mc := range l.mix.Mix {
		parts = append(parts, mc.Call)
	}
	return parts
}

// Carriers are the clients (a closed loop) or connections that carry the
// load.
func (l *Load) Carriers() int {
	if l.o.Rate == "" && l.o.Batch == 0 {
		return l.o.Concurrency
	}
	return l.o.Connections
}

// Dial builds the driver of the load's call to target, checks that the
// engine and the rate suit it, reaches the target (driver.Preflight) and
// settles the unit of work. Close the dialer if it is an io.Closer (a
// mix's values).
func (l *Load) Dial(ctx context.Context, target string) (load.Dialer, error) {
	u, err := driver.TargetURL(target)
	if err != nil {
		return nil, err
	}
	body, err := readData(l.o.Data)
	if err != nil {
		return nil, err
	}
	d, err := l.dialer(ctx, target, body)
	if err != nil {
		return nil, err
	}
	if err := l.o.checkEngine(d); err != nil {
		return nil, err
	}
	if w, _ := load.EngineWire(l.o.Engine, d); (w != nil || l.o.Rate != "" || l.o.Batch > 0) && runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2) // a P for the open loop's waits, or the event loop's, beside the rest (see load.Open)
	}
	if err := driver.Preflight(ctx, u, d, l.o.Timeout); err != nil {
		return nil, err
	}
	if l.o.Unit == "" {
		l.o.Unit = driver.Unit(d)
	}
	return d, nil
}

// dialer builds the driver of the call the target URL and the options
// describe (see driver.CallFromURL), or of the mix's calls.
func (l *Load) dialer(ctx context.Context, target string, body []byte) (load.Dialer, error) {
	o := l.o
	if l.mix != nil {
		m, err := driver.MixAt(ctx, target, l.mix, driver.Options{Timeout: o.Timeout, QuickACK: o.QuickACK})
		if err != nil {
			return nil, fmt.Errorf("--mix %s: %w", o.MixFile, err)
		}
		return m, nil
	}
	uo, err := o.urlOptions(body)
	if err != nil {
		return nil, err
	}
	var vals *driver.Values
	if l.set != nil {
		uo.Values = l.specs
		vals = driver.NewValues(l.set)
	}
	call, endpoint, err := driver.CallFromURL(target, uo)
	if err != nil {
		return nil, err
	}
	shared, err := o.sharedConnections(call)
	if err != nil {
		return nil, err
	}
	d, err := driver.New(ctx, call, endpoint, driver.Options{Timeout: o.Timeout, QuickACK: o.QuickACK, Connections: shared, Values: vals})
	if err != nil && vals != nil {
		return nil, fmt.Errorf("the request with --values %s: %w", o.ValuesFile, err)
	}
	return d, err
}

// FleetPart is the load as a fleet's workers get it: the call the target
// URL and the options describe (the body read here: the workers need not
// have the file), and the spec, whole. A load with values or a mix runs on
// one machine only.
func (l *Load) FleetPart(target string) (runner.FleetPart, error) {
	o := l.o
	if err := OneMachine(o); err != nil {
		return runner.FleetPart{}, err
	}
	if err := o.engineAlone(); err != nil {
		return runner.FleetPart{}, err
	}
	spec, err := o.Spec()
	if err != nil {
		return runner.FleetPart{}, err
	}
	body, err := readData(o.Data)
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
	return runner.FleetPart{Target: u.Redacted(), Call: call, Endpoint: endpoint, Shared: shared, QuickACK: o.QuickACK, Check: true,
		Rate: o.Rate, Spec: spec}, nil
}

// OneMachine refuses, for a run on a fleet, what runs on one machine only:
// values and a mix (the fleet ships a call, not a mix).
func OneMachine(o Options) error {
	switch {
	case o.ValuesFile != "":
		return errors.New("--values: a run on one machine (not --workers, --local-workers)")
	case o.MixFile != "":
		return errors.New("--mix: a run on one machine (not --workers, --local-workers)")
	}
	return nil
}

// Warm sends for the warm-up first, in a closed loop (as many requests as
// a feeder read once holds at most), and discards what it measured.
func (l *Load) Warm(ctx context.Context, d load.Dialer) error {
	spec, err := l.o.Spec()
	if err != nil {
		return err
	}
	warm, ok := spec.WarmUp()
	if !ok {
		return nil
	}
	warm.Clients = max(l.o.Concurrency, l.o.Connections) // a closed gRPC loop's shared connections too
	if n, ok := l.onceRows(); ok {
		warm.Requests = int64(min(n, 1<<62)) // its rows, as the run
	}
	if _, err := warm.Run(ctx, d); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errors.New("nothing was measured: the warmup was not over")
	}
	return nil
}

// Run runs the load on d; live, if not nil, counts as it goes. The
// warnings are what the run says of the generator (finding.Generator),
// from the CPU this process used meanwhile.
func (l *Load) Run(ctx context.Context, d load.Dialer, live *load.Live) (results.Sample, []string, error) {
	spec, err := l.o.Spec()
	if err != nil {
		return results.Sample{}, nil, err
	}
	spec.Live = live
	cpu0, _ := host.CPUTime() // 0 where the OS does not say
	s, err := spec.Run(ctx, d)
	cpu1, _ := host.CPUTime()
	return s, finding.Generator(s, cpu1-cpu0, l.Carriers()), err
}

// checkEngine refuses an --engine or --quantum the dialer d and the load
// shape cannot run. Without --engine the event loop runs wherever it
// applies (loopEngines).
func (o Options) checkEngine(d load.Dialer) error {
	w, err := load.EngineWire(o.Engine, d)
	if err != nil || o.Engine == load.EngineLoop && o.Batch > 0 {
		return fmt.Errorf("--engine %s: workers, or loop for %s", o.Engine, loopEngines)
	}
	if o.Quantum < 0 || o.Quantum > 0 && (w == nil || o.Batch > 0) {
		return errors.New("--quantum: a positive duration, on the event loop: " + loopEngines)
	}
	return nil
}

// loopEngines is where the event loop runs.
const loopEngines = "a closed or open loop (not --batch) over HTTP/1.1 or HTTP/2 (h2c or TLS), JSON-RPC over them or gRPC (cleartext), to an IPv4 address, on Linux"

// engineAlone refuses an --engine or --quantum no call can run with the
// load's shape (checkEngine's checks that need no dialer: a fleet's
// workers check the rest on theirs).
func (o Options) engineAlone() error {
	if o.Engine != "" && o.Engine != load.EngineLoop && o.Engine != load.EngineWorkers || o.Engine == load.EngineLoop && o.Batch > 0 {
		return fmt.Errorf("--engine %s: workers, or loop for %s", o.Engine, loopEngines)
	}
	if o.Quantum < 0 || o.Quantum > 0 && o.Batch > 0 {
		return errors.New("--quantum: a positive duration, on the event loop: " + loopEngines)
	}
	return nil
}

// urlOptions are the flags that describe the request, with body for
// --data; --header values are Name: value.
func (o Options) urlOptions(body []byte) (driver.URLOptions, error) {
	hdr := map[string]string{}
	for _, h := range o.Headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			return driver.URLOptions{}, fmt.Errorf("--header %q: want Name: value", h)
		}
		hdr[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return driver.URLOptions{Body: body, RPCMethod: o.RPCMethod, Params: o.Params, Headers: hdr,
		Protos: o.Protos, ImportPaths: o.ImportPaths, HTTP2: o.HTTP2, Insecure: o.Insecure}, nil
}

// sharedConnections is the connections a closed loop's clients share
// (--connections with --concurrency: gRPC and HTTP/2, whose calls share a
// connection as streams), else 0: one each.
func (o Options) sharedConnections(call *study.Call) (int, error) {
	if o.Rate != "" || o.Batch > 0 || !o.ConnectionsSet {
		return 0, nil
	}
	if call.GRPC == nil && (call.HTTP == nil || !call.HTTP.HTTP2) && (call.JSONRPC == nil || !call.JSONRPC.HTTP2) {
		return 0, errors.New("--connections with --concurrency: gRPC and HTTP/2 only (their calls share a connection as streams); a closed loop over any other protocol has a connection per client")
	}
	return o.Connections, nil
}

// readData is the body data names: @FILE reads a file.
func readData(data string) ([]byte, error) {
	if name, ok := strings.CutPrefix(data, "@"); ok {
		return os.ReadFile(name)
	}
	return []byte(data), nil
}
