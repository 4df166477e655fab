package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/driver/amqpdrv"
	"github.com/tandem-bench/tandem/driver/grpcdrv"
	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/driver/wsdrv"
	"github.com/tandem-bench/tandem/internal/amqpconf"
	"github.com/tandem-bench/tandem/internal/host"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

func loadCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		concurrency, connections, batch, maxWaiting int
		requests                                    int64
		duration, timeout, warmup, step, period     time.Duration
		quantum                                     time.Duration
		rate                                        string
		headers                                     []string
		data, rpcMethod, params                     string
		protos, importPaths                         []string
		format                                      string
		http2, insecure, quickACK                   bool
		cpuprofile, unit, engine                    string
		queueType, ack                              string
		prefetch, size                              int
		confirm                                     bool
	)
	c := &cobra.Command{
		Use:   "load TARGET",
		Short: "Load one target ad hoc, like vegeta, ghz or wrk2",
		Long: `load sends one request shape to one target and reports what it measured.
TARGET is http(s)://HOST/PATH (with --jsonrpc for JSON-RPC 2.0),
grpc://HOST:PORT/package.Service/Method (types from server reflection, or
--proto files), ws(s)://HOST/PATH with --jsonrpc (JSON-RPC over WebSocket,
answers matched by id), or amqp://USER:PASS@HOST:PORT/VHOST (publish into
and consume from a queue declared for the run: --queue-type, --prefetch,
--size, --confirm, --ack; ok = messages consumed and acked, latency from
each message's send time, throughput from the first delivery to the last
ack).

Load shapes:
  --concurrency N            closed loop: N clients, each waiting for its answer (default)
  --rate R --connections C   open loop: R arrivals/s in total over C connections, on an
                             absolute timetable; latency counts from the intended send
  --rate 100-1000            a linear ramp over --duration
  --rate 100,500,1000        steps, each --step long (default: --duration split evenly)
  --batch R --connections C  batched: R requests at the start of every --period on each
                             connection (CometBFT's load-runner shape)

Before the run it resolves the target's host and opens one connection to it
(for up to 2 s), then sends one request. Exit codes: 0 the run completed; 1 no
request succeeded, whatever the failures were (the results are printed all
the same); 2 bad input, or
the target cannot be reached; 130 after SIGINT and 143 after SIGTERM, which
stop the run and print what it measured so far, marked interrupted.`,
		Example: "  tandem load grpc://127.0.0.1:9090/tandem.sample.v1.Ledger/GetBlock --data '{\"height\":5}' --concurrency 8 --duration 10s\n" +
			"  tandem load http://127.0.0.1:8080/ping --rate 5000 --connections 16 --duration 30s\n" +
			"  tandem load http://127.0.0.1:8080/ --jsonrpc getbalance --params '[\"tz1000042\"]' --rate 100-2000 --duration 20s --format json\n" +
			"  tandem load amqp://guest:guest@127.0.0.1:5672/ --queue-type quorum --prefetch 512 --size 1024 --requests 100000",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			defer func() { err = interruptedExit(cmd.Context(), err) }()
			u, err := targetURL(args[0])
			if err != nil {
				return badInput(err)
			}
			if format != "text" && format != "json" && format != "md" {
				return badInput(fmt.Errorf("--format %q: want text, json or md", format))
			}
			if err := loadFlagBounds(loadFlags{duration: duration, warmup: warmup, timeout: timeout, period: period, step: step,
				requests: requests, concurrency: concurrency, connections: connections, batch: batch, maxWaiting: maxWaiting,
				open: rate != ""}); err != nil {
				return badInput(err)
			}
			if u.Scheme == "amqp" || u.Scheme == "amqps" {
				if requests <= 0 && duration <= 0 {
					duration = 10 * time.Second
				}
				var r float64
				if rate != "" {
					var err error
					if r, err = strconv.ParseFloat(rate, 64); err != nil || r <= 0 {
						return badInput(fmt.Errorf("--rate %q: an AMQP run takes one rate in messages per second", rate))
					}
				}
				s, err := amqpdrv.Run(cmd.Context(), amqpdrv.Options{URL: args[0], QueueType: queueType, Prefetch: prefetch, Size: size,
					Confirm: confirm, Ack: ack, Messages: requests, Duration: duration, Timeout: timeout, Rate: r})
				if err != nil && cmd.Context().Err() == nil {
					return badInput(err)
				}
				if r > 0 {
					s.OfferedRate = r
				}
				return finish(cmd.Context(), stdout, format, s, nil)
			}
			if unit != "" && unit != "request" && unit != "message" {
				return badInput(fmt.Errorf("--unit %q: want request or message", unit))
			}
			if rate != "" && batch > 0 {
				return badInput(errors.New("--rate and --batch are two load shapes: choose one"))
			}
			if (rate != "" || batch > 0) && cmd.Flags().Changed("concurrency") {
				return badInput(errors.New("--concurrency is the closed loop; with --rate or --batch use --connections"))
			}
			if requests <= 0 && duration <= 0 && !strings.Contains(rate, ",") {
				duration = 10 * time.Second
			}
			body, err := readData(data)
			if err != nil {
				return badInput(err)
			}
			d, err := loadDialer(cmd, args[0], body, rpcMethod, params, headers, protos, importPaths, timeout, http2, insecure, quickACK)
			if err != nil {
				return badInput(err)
			}
			if w, err := load.EngineWire(engine, d); err != nil || w != nil && batch > 0 {
				return badInput(fmt.Errorf("--engine %s: workers, or loop for a closed or open loop (not --batch) over plain HTTP/1.1 (http://, no --http2) to an IPv4 address", engine))
			}
			if quantum < 0 || quantum > 0 && engine != "loop" {
				return badInput(errors.New("--quantum: a positive duration, with --engine loop"))
			}
			if (rate != "" || batch > 0) && runtime.GOMAXPROCS(0) < 2 {
				runtime.GOMAXPROCS(2) // a P for the open loop's waits beside the rest (see load.Open)
			}
			if rate != "" {
				if _, err := load.ParseRate(rate, duration, step); err != nil {
					return badInput(fmt.Errorf("--rate: %w", err))
				}
			}
			ctx := cmd.Context()
			if err := preflight(ctx, u, d, timeout); err != nil {
				return badInput(err)
			}
			if unit == "" {
				unit = "request"
				if s, ok := d.(interface{ Streaming() bool }); ok && s.Streaming() {
					unit = "message" // a server stream's work is its messages
				}
			}
			var exec func(ctx context.Context) (results.Sample, error)
			var live *load.Live
			if isTerminal(stderr) {
				live = &load.Live{}
			}
			switch {
			case rate != "":
				sch, err := load.ParseRate(rate, duration, step)
				if err != nil {
					return badInput(fmt.Errorf("--rate: %w", err))
				}
				exec = bind(load.Open{Schedule: sch, Connections: connections, Requests: requests, Duration: duration,
					MaxWaiting: maxWaiting, Timeout: timeout, Live: live, Unit: unit, Engine: engine, Quantum: quantum}.Run, d)
			case batch > 0:
				if duration <= 0 {
					return badInput(errors.New("--batch needs --duration"))
				}
				exec = bind(load.Batched{Connections: connections, PerPeriod: batch, Period: period, Duration: duration, Timeout: timeout, Live: live, Unit: unit}.Run, d)
			default:
				exec = bind(load.Closed{Concurrency: concurrency, Requests: requests, Duration: duration, Timeout: timeout, Live: live, Unit: unit,
					Engine: engine, Quantum: quantum}.Run, d)
			}
			if warmup > 0 {
				if _, err := (load.Closed{Concurrency: max(concurrency, connections), Duration: warmup, Timeout: timeout}).Run(ctx, d); err != nil {
					return badInput(err)
				}
				if ctx.Err() != nil {
					return errors.New("nothing was measured: the warmup was not over")
				}
			}
			var stopProgress func()
			if live != nil {
				stopProgress = progressLine(stderr, live, duration)
			}
			if cpuprofile != "" {
				f, err := os.Create(cpuprofile)
				if err != nil {
					return badInput(err)
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
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
				return badInput(err)
			}
			conns := connections
			if rate == "" && batch == 0 {
				conns = concurrency
			}
			return finish(ctx, stdout, format, s, diagnose(s, cpu, conns))
		},
	}
	f := c.Flags()
	f.IntVar(&concurrency, "concurrency", 1, "closed loop: clients, each waiting for its answer")
	f.StringVar(&rate, "rate", "", "open loop: arrivals per second in total (R, FROM-TO for a ramp, R1,R2,… for steps)")
	f.IntVar(&connections, "connections", 1, "open and batched loops: connections to spread the load over")
	f.IntVar(&batch, "batch", 0, "batched loop: requests per period on each connection")
	f.DurationVar(&period, "period", time.Second, "batched loop: the period")
	f.DurationVar(&step, "step", 0, "length of each step of --rate R1,R2,…")
	f.IntVar(&maxWaiting, "max-waiting", 10000, "open loop: arrivals that may wait for a free connection before arrivals are dropped")
	f.DurationVar(&quantum, "quantum", 0, "with --engine loop: wake at most once per quantum; an open loop sends every arrival due by then (less CPU; the lateness shows in schedule lag and latency), a closed loop reads every answer that came by then (a server the generator saturates serves more; the wait shows in think time)")
	f.StringVar(&engine, "engine", "", "workers (a goroutine per connection) or loop (one thread owns every connection; in an open loop it sleeps through the answers, which the kernel stamps: less CPU per request; plain HTTP/1.1 only)")
	f.Int64Var(&requests, "requests", 0, "stop after this many requests")
	f.DurationVar(&duration, "duration", 0, "stop after this long (default 10s without --requests)")
	f.DurationVar(&warmup, "warmup", 0, "send for this long first and discard it")
	f.DurationVar(&timeout, "timeout", 10*time.Second, "per-request timeout")
	f.StringArrayVar(&headers, "header", nil, "HTTP header or gRPC metadata, Name: value (repeatable)")
	f.StringVar(&data, "data", "", "request body (HTTP) or request message as JSON (gRPC); @FILE reads a file")
	f.StringVar(&rpcMethod, "jsonrpc", "", "send a JSON-RPC 2.0 call of this method")
	f.StringVar(&params, "params", "[]", "JSON-RPC params as JSON")
	f.StringArrayVar(&protos, "proto", nil, ".proto file defining the service (repeatable); default: server reflection")
	f.StringArrayVar(&importPaths, "import-path", nil, "directory searched for --proto files and their imports")
	f.StringVar(&format, "format", "text", "text, json or md")
	f.BoolVar(&http2, "http2", false, "speak HTTP/2 (TLS for https://, h2c for http://)")
	f.BoolVar(&insecure, "insecure", false, "do not verify the server's TLS certificate")
	f.StringVar(&unit, "unit", "", "the unit of work: request, or message (each streamed message); default message for server-streaming gRPC")
	f.BoolVar(&quickACK, "quickack", false, "acknowledge every segment at once (TCP_QUICKACK): if a ~40 ms stall vanishes, the server waits for delayed ACKs")
	f.StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile of the generator (pprof) to this file")
	f.StringVar(&queueType, "queue-type", amqpconf.DefaultQueueType, "amqp: "+amqpconf.QueueTypes+" (a queue declared for the run, deleted after)")
	f.IntVar(&prefetch, "prefetch", amqpconf.DefaultPrefetch, "amqp: the consumer's prefetch window")
	f.IntVar(&size, "size", amqpconf.DefaultSize, "amqp: message body in bytes (the first 8 carry the send time)")
	f.BoolVar(&confirm, "confirm", false, "amqp: publish with publisher confirms")
	f.StringVar(&ack, "ack", amqpconf.DefaultAck, "amqp: "+amqpconf.AckModes)
	return c
}

// targetURL parses a load target and checks its port, if it names one.
// Its errors do not repeat the target, which may hold a password.
func targetURL(target string) (*url.URL, error) {
	u, err := url.Parse(target)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("target: %w", err)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("target %s: port %s: want 1 to 65535", u.Redacted(), p)
		}
	}
	return u, nil
}

// reachTimeout bounds the reachability check's connection.
const reachTimeout = 2 * time.Second

// endpoint is the host:port the target u connects to.
func endpoint(u *url.URL) (string, error) {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "ws": "80", "https": "443", "wss": "443"}[u.Scheme]
		if port == "" {
			return "", fmt.Errorf("target %s: no port: want %s://HOST:PORT/…", u.Redacted(), u.Scheme)
		}
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// unreachable is a target whose host did not resolve or that refused or
// did not take a connection.
type unreachable struct {
	target string // the URL, if the message is to name it
	addr   string // host:port
	err    error
}

func (e *unreachable) Error() string {
	if e.target != "" {
		return "cannot reach " + e.target + ": " + e.addr + ": " + e.reason()
	}
	return "cannot reach " + e.addr + ": " + e.reason()
}

func (e *unreachable) Unwrap() error { return e.err }

// reason says why, in a few words: "connection refused".
func (e *unreachable) reason() string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(e.err, &dns):
		return "cannot resolve " + dns.Name + ": " + dns.Err
	case errors.Is(e.err, syscall.ECONNREFUSED):
		return "connection refused"
	case load.TransportStatus(e.err) == "timeout":
		return "no connection within " + reachTimeout.String()
	case errors.As(e.err, &op) && op.Err != nil:
		return op.Err.Error() // "connect: network is unreachable"
	}
	return e.err.Error()
}

// reach resolves addr's host and opens one TCP connection to it.
func reach(ctx context.Context, addr string) error {
	c, err := (&net.Dialer{Timeout: reachTimeout}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return &unreachable{addr: addr, err: err}
	}
	c.Close()
	return nil
}

// preflight checks the target u before the run, so an unreachable target
// or a TLS mismatch is one clear error, not a run of failures: it resolves
// the host and opens one TCP connection (for at most reachTimeout), then
// sends one request. Everything else (statuses the target chose, garbage,
// resets, timeouts) is what the run is there to measure, and passes.
func preflight(ctx context.Context, u *url.URL, d load.Dialer, timeout time.Duration) error {
	target := u.Redacted()
	addr, err := endpoint(u)
	if err != nil {
		return err
	}
	if err := reach(ctx, addr); err != nil {
		if u.Scheme == "http" || u.Scheme == "https" { // these connect on the first request
			return fmt.Errorf("cannot use %s: the first request failed: %s (%w)", target, load.TransportStatus(err), err)
		}
		var ur *unreachable
		if errors.As(err, &ur) {
			ur.target = target
		}
		return err
	}
	cn, err := d.Dial(ctx)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", target, err)
	}
	defer cn.Close()
	res := cn.Do(ctx, time.Now().Add(timeout))
	switch res.Status {
	case "refused", "tls":
		return fmt.Errorf("cannot use %s: the first request failed: %s", target, res.Status)
	}
	return nil
}

// finish prints the sample of a run that ctx ran and says how the run
// ended: stopped early (marked interrupted; interruptedExit gives the exit
// code), complete, or complete without a success where the target
// answered no request (exit 1: a load test of nothing).
func finish(ctx context.Context, w io.Writer, format string, s results.Sample, warnings []string) error {
	var stopped string
	if ctx.Err() != nil {
		stopped = stoppedBy(ctx)
	}
	if err := printSample(w, format, s, warnings, stopped); err != nil || stopped != "" {
		return err
	}
	return noneSucceeded(s)
}

// noneSucceeded is an exit-1 error for a run that sent requests of which
// none succeeded, whatever the failures were (refused, timeouts, error
// statuses, garbage): its results are printed, but no figure in them
// describes a working service. nil otherwise.
func noneSucceeded(s results.Sample) error {
	if s.OK > 0 || s.Requests == 0 {
		return nil
	}
	return &exitError{exitCheckFailed, fmt.Errorf("no request succeeded (%s)", errorList(s))}
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

func loadDialer(cmd *cobra.Command, target string, body []byte, rpcMethod, params string, headers, protos, importPaths []string,
	timeout time.Duration, http2, insecure, quickACK bool) (load.Dialer, error) {
	hdr := map[string]string{}
	for _, h := range headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			return nil, fmt.Errorf("--header %q: want Name: value", h)
		}
		hdr[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", target, err)
	}
	switch u.Scheme {
	case "grpc":
		if len(body) > 0 && !json.Valid(body) {
			return nil, errors.New("--data: not valid JSON")
		}
		c, err := grpcdrv.New(cmd.Context(), grpcdrv.Options{Addr: u.Host, Method: strings.TrimPrefix(u.Path, "/"), Request: body,
			Proto: protos, ImportPaths: importPaths, Metadata: hdr, QuickACK: quickACK})
		if err != nil {
			return nil, err
		}
		return c, nil
	case "http", "https":
		if rpcMethod != "" && !json.Valid([]byte(params)) {
			return nil, errors.New("--params: not valid JSON")
		}
		o := httpdrv.Options{URL: target, Headers: hdr, Body: body, Timeout: timeout, HTTP2: http2, Insecure: insecure, QuickACK: quickACK}
		if rpcMethod != "" {
			o.RPCMethod, o.RPCParams = rpcMethod, []byte(params)
		}
		return httpdrv.New(o)
	case "ws", "wss":
		if rpcMethod == "" {
			return nil, errors.New("a ws:// target needs --jsonrpc METHOD (and --params)")
		}
		return wsdrv.New(wsdrv.Options{URL: target, Method: rpcMethod, Params: []byte(params), Timeout: timeout})
	}
	return nil, fmt.Errorf("target %q: want http://, https://, grpc://, ws:// or wss:// (amqp:// is not supported by this tandem yet)", target)
}

// progressLine redraws one status line on a terminal every half second
// until the returned function is called.
func progressLine(w io.Writer, live *load.Live, total time.Duration) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	start := time.Now()
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
				el := time.Since(start).Round(100 * time.Millisecond)
				of := ""
				if total > 0 {
					of = " / " + total.String()
				}
				fmt.Fprintf(w, "\r\033[K%v%s  %s sent  %s ok  %s errors", el, of, report.Number(float64(live.Sent.Load())),
					report.Number(float64(live.OK.Load())), report.Number(float64(live.Errors.Load())))
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// diagnose says why an open or batched loop did not reach its offered
// rate, from what was measured: drops, busy connections, generator CPU.
func diagnose(s results.Sample, cpu time.Duration, connections int) []string {
	var warnings []string
	elapsed := time.Duration(s.DurationNs)
	if elapsed > 0 {
		cores := float64(runtime.GOMAXPROCS(0))
		if use := cpu.Seconds() / elapsed.Seconds() / cores; use >= 0.9 {
			warnings = append(warnings, fmt.Sprintf("the generator used %.0f%% of its %d cores: it may have been the bottleneck, not the target", use*100, int(cores)))
		}
	}
	if s.OfferedRate <= 0 || s.AchievedRate >= 0.99*s.OfferedRate && s.Dropped == 0 {
		return warnings
	}
	msg := fmt.Sprintf("offered %s/s but achieved %s/s", report.Number(s.OfferedRate), report.Number(s.AchievedRate))
	var why []string
	if s.Dropped > 0 {
		why = append(why, fmt.Sprintf("%s arrivals were dropped because too many waited for a free connection (--max-waiting)", report.Number(float64(s.Dropped))))
	}
	if mean := s.ServiceTimeNs.Mean; mean > 0 {
		capacity := float64(connections) / (mean / 1e9)
		if capacity < s.OfferedRate*1.05 {
			why = append(why, fmt.Sprintf("%d connections at a mean service time of %s carry at most %s/s: add --connections or the target is saturated",
				connections, report.Duration(mean), report.Number(capacity)))
		}
	}
	if len(why) == 0 {
		why = append(why, "the schedule lag shows the generator falling behind its timetable")
	}
	return append(warnings, msg+": "+strings.Join(why, "; "))
}

// printSample writes s in format. stopped, if not empty, says what stopped
// the run early ("SIGINT"): the report is marked interrupted.
func printSample(w io.Writer, format string, s results.Sample, warnings []string, stopped string) error {
	note := ""
	if stopped != "" {
		note = fmt.Sprintf("stopped by %s after %v; what follows is what was measured before", stopped, time.Duration(s.DurationNs).Round(time.Millisecond))
	}
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(loadJSON(s, warnings, stopped != ""))
	case "text":
		if note != "" {
			if _, err := fmt.Fprintf(w, "INTERRUPTED: %s.\n", note); err != nil {
				return err
			}
		}
		return loadText(w, s, warnings)
	case "md":
		if note != "" {
			if _, err := fmt.Fprintf(w, "> **INTERRUPTED**: %s.\n\n", note); err != nil {
				return err
			}
		}
		return loadMarkdown(w, s, warnings)
	}
	return badInput(fmt.Errorf("--format %q: want text, json or md", format))
}

func dist(d results.Distribution) []string {
	return []string{report.Duration(float64(d.Min)), report.Duration(d.Mean), report.Duration(float64(d.P50)),
		report.Duration(float64(d.P90)), report.Duration(float64(d.P99)), report.Duration(float64(d.P999)), report.Duration(float64(d.Max))}
}

func errorList(s results.Sample) string {
	if len(s.Errors) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(s.Errors))
	for k := range s.Errors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, s.Errors[k])
	}
	return strings.Join(parts, " ")
}

type namedDist struct {
	name string
	d    results.Distribution
}

// distributions are the rows a load report shows: latency, then in open
// and batched loops service time and schedule lag, then for streams the
// time to the first message, and for a closed loop on the event loop the
// generator's think time.
func distributions(s results.Sample) []namedDist {
	rows := []namedDist{{"latency", s.LatencyNs}}
	if s.ScheduleLagNs != nil {
		rows = append(rows, namedDist{"service time", s.ServiceTimeNs}, namedDist{"schedule lag", *s.ScheduleLagNs})
	}
	if s.FirstMessageNs != nil {
		rows = append(rows, namedDist{"first message", *s.FirstMessageNs})
	}
	if s.ThinkTimeNs != nil {
		rows = append(rows, namedDist{"think time", *s.ThinkTimeNs})
	}
	return rows
}

// loadText is a compact report in the manner of vegeta's.
func loadText(w io.Writer, s results.Sample, warnings []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "requests      %d sent, %d ok, %d failed in %v\n", s.Requests, s.OK, s.Requests-s.OK, time.Duration(s.DurationNs).Round(time.Millisecond))
	if s.OfferedRate > 0 {
		fmt.Fprintf(&b, "rate          offered %s/s, achieved %s/s, dropped %d\n", report.Number(s.OfferedRate), report.Number(s.AchievedRate), s.Dropped)
	}
	fmt.Fprintf(&b, "throughput    %s/s ok, %s %s/s\n", report.Number(s.Throughput), report.Number(s.UnitsPerS), s.Unit)
	fmt.Fprintf(&b, "              %-8s %-8s %-8s %-8s %-8s %-8s %-8s\n", "min", "mean", "p50", "p90", "p99", "p99.9", "max")
	for _, r := range distributions(s) {
		fmt.Fprintf(&b, "%-14s", r.name)
		for _, c := range dist(r.d) {
			fmt.Fprintf(&b, "%-9s", c)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "errors        %s\n", errorList(s))
	for _, wn := range warnings {
		fmt.Fprintf(&b, "warning: %s\n", wn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func loadMarkdown(w io.Writer, s results.Sample, warnings []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| requests | ok | failed | duration | offered/s | achieved/s | throughput/s | dropped |\n|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %v | %s | %s | %s | %d |\n\n", s.Requests, s.OK, s.Requests-s.OK, time.Duration(s.DurationNs).Round(time.Millisecond),
		report.Number(s.OfferedRate), report.Number(s.AchievedRate), report.Number(s.Throughput), s.Dropped)
	b.WriteString("| | min | mean | p50 | p90 | p99 | p99.9 | max |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range distributions(s) {
		fmt.Fprintf(&b, "| %s | %s |\n", r.name, strings.Join(dist(r.d), " | "))
	}
	fmt.Fprintf(&b, "\nerrors: %s\n", errorList(s))
	for _, wn := range warnings {
		fmt.Fprintf(&b, "\n> warning: %s\n", wn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// loadJSON is the --format json object (README.md, the tour): the sample's fields
// plus warnings, and interrupted: true when a signal stopped the run before
// its end (the figures are what was measured before). offered_rate is null
// for a closed loop, which offers none.
func loadJSON(s results.Sample, warnings []string, interrupted bool) map[string]any {
	var offered any
	if s.OfferedRate > 0 {
		offered = s.OfferedRate
	}
	out := map[string]any{
		"requests": s.Requests, "ok": s.OK, "errors": s.Errors, "duration_ns": s.DurationNs,
		"offered_rate": offered, "achieved_rate": s.AchievedRate,
		"throughput": s.Throughput, "unit": s.Unit, "units_per_s": s.UnitsPerS,
		"latency_ns": s.LatencyNs, "service_time_ns": s.ServiceTimeNs, "schedule_lag_ns": s.ScheduleLagNs,
		"dropped": s.Dropped, "hdr": s.HDR, "series": s.Series, "warnings": warnings,
		"interrupted": interrupted,
	}
	if out["warnings"] == nil {
		out["warnings"] = []string{}
	}
	if s.FirstMessageNs != nil {
		out["first_message_ns"] = s.FirstMessageNs
	}
	if s.ThinkTimeNs != nil {
		out["think_time_ns"] = s.ThinkTimeNs
	}
	return out
}

// loadFlags are the numbers of tandem load's flags that have bounds.
type loadFlags struct {
	duration, warmup, timeout, period, step     time.Duration
	requests                                    int64
	concurrency, connections, batch, maxWaiting int
	open                                        bool
}

// loadFlagBounds refuses flag values a run cannot honour, each named with
// the value given: negative counts and durations, no clients or
// connections, and more of them than this machine's open-file limit holds.
func loadFlagBounds(f loadFlags) error {
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
	if f.open {
		files = 2 // a socket and a timer per connection
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
	return errors.Join(errs...)
}
