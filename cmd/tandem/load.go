package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tandem-bench/tandem/adhoc"
	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/internal/amqpconf"
	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/progress"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
)

// loadOptions are tandem load's flags: the load's own, the output's and
// the fleet's.
type loadOptions struct {
	adhoc.Options
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
                             gRPC, HTTP/2: the N clients share C connections (calls as
                             streams; h2load -c C -m N/C)
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

Engines: HTTP/1.1 and HTTP/2 (plain or TLS), JSON-RPC over them and gRPC run on
one thread that owns every connection (the event loop, on Linux); every other
protocol on a goroutine per connection; the result names the engine (--engine
loop|workers chooses).

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
			defer func() { err = cli.InterruptedExit(cmd.Context(), err) }()
			o.ConcurrencySet = cmd.Flags().Changed("concurrency")
			o.ConnectionsSet = cmd.Flags().Changed("connections")
			return runLoad(cmd, args[0], o, stdout, stderr)
		},
	}
	loadFlags(c.Flags(), &o)
	fleetFlags(c.Flags(), &o.fleet)
	return c
}

// loadFlags defines tandem load's flags of the load itself on f (those
// adhoc.Options holds).
func loadFlags(f *pflag.FlagSet, o *loadOptions) {
	f.IntVar(&o.Concurrency, "concurrency", 1, "closed loop: clients, each waiting for its answer")
	f.StringVar(&o.Rate, "rate", "", "open loop: arrivals per second in total (R, FROM-TO for a ramp, R1,R2,… for steps)")
	f.IntVar(&o.Connections, "connections", 1, "open and batched loops: connections to spread the load over; a closed loop over gRPC: connections its clients share (default one each)")
	f.IntVar(&o.Batch, "batch", 0, "batched loop: requests per period on each connection")
	f.DurationVar(&o.Period, "period", time.Second, "batched loop: the period")
	f.DurationVar(&o.Step, "step", 0, "length of each step of --rate R1,R2,…")
	f.IntVar(&o.MaxWaiting, "max-waiting", 10000, "open loop: arrivals that may wait for a free connection before arrivals are dropped")
	f.DurationVar(&o.Quantum, "quantum", 0, "on the event loop: wake at most once per quantum; an open loop sends every arrival due by then (less CPU; the lateness shows in schedule lag and latency), a closed loop reads every answer that came by then (a server the generator saturates serves more; the wait shows in think time)")
	f.StringVar(&o.Engine, "engine", "", "loop (one thread owns every connection; in an open loop it sleeps through the answers, which the kernel stamps: less CPU per request; HTTP/1.1, HTTP/2 and gRPC) or workers (a goroutine per connection); default: loop wherever it applies, else workers")
	f.Int64Var(&o.Requests, "requests", 0, "stop after this many requests")
	f.DurationVar(&o.Duration, "duration", 0, "stop after this long (default 10s without --requests)")
	f.DurationVar(&o.Warmup, "warmup", 0, "send for this long first and discard it")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Second, "per-request timeout")
	f.StringArrayVar(&o.Headers, "header", nil, "HTTP header or gRPC metadata, Name: value (repeatable)")
	f.StringVar(&o.Data, "data", "", "request body (HTTP) or request message as JSON (gRPC); @FILE reads a file")
	f.StringVar(&o.RPCMethod, "jsonrpc", "", "send a JSON-RPC 2.0 call of this method")
	f.StringVar(&o.Params, "params", "[]", "JSON-RPC params as JSON")
	f.StringVar(&o.ValuesFile, "values", "", "a YAML file of per-request values (values: {NAME: SOURCE}) that --data, --params, --header and the URL's path name as ${NAME}")
	f.Uint64Var(&o.Seed, "seed", 1, "with --values or --mix: the seed of their generators, random feeders and the mix's draw")
	f.StringVar(&o.MixFile, "mix", "", "a YAML file of calls (calls:, as a study's) and their weights (mix: [{call, weight}]): each request is one of them, drawn by weight from --seed, sent to TARGET")
	f.StringArrayVar(&o.Protos, "proto", nil, ".proto file defining the service (repeatable); default: server reflection")
	f.StringArrayVar(&o.ImportPaths, "import-path", nil, "directory searched for --proto files and their imports")
	formatVar(f, &o.format, report.ForSample)
	f.BoolVar(&o.HTTP2, "http2", false, "speak HTTP/2 (TLS for https://, h2c for http://)")
	f.BoolVar(&o.Insecure, "insecure", false, "do not verify the server's TLS certificate")
	f.StringVar(&o.Unit, "unit", "", "the unit of work: request, or message (each streamed message); default message for server-streaming gRPC")
	f.BoolVar(&o.QuickACK, "quickack", false, "acknowledge every segment at once (TCP_QUICKACK): if a ~40 ms stall vanishes, the server waits for delayed ACKs")
	f.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the generator (pprof) to this file")
	f.StringVar(&o.QueueType, "queue-type", amqpconf.DefaultQueueType, "amqp: "+amqpconf.QueueTypes+" (a queue declared for the run, deleted after)")
	f.IntVar(&o.Prefetch, "prefetch", amqpconf.DefaultPrefetch, "amqp: the consumer's prefetch window")
	f.IntVar(&o.Size, "size", amqpconf.DefaultSize, "amqp: message body in bytes (the first 8 carry the send time)")
	f.BoolVar(&o.Confirm, "confirm", false, "amqp: publish with publisher confirms")
	f.StringVar(&o.Ack, "ack", amqpconf.DefaultAck, "amqp: "+amqpconf.AckModes)
}

// runLoad runs tandem load against target and prints what it measured.
func runLoad(cmd *cobra.Command, target string, o loadOptions, stdout, stderr io.Writer) error {
	ctx := cmd.Context()
	r := adhoc.Run{Target: target, Options: o.Options, Given: cmd.Flags().Changed, Fleet: o.fleet, Version: version, Notes: stderr}
	if o.cpuprofile != "" {
		if o.fleet.Active() {
			return cli.BadInput(errors.New("--cpuprofile profiles this process: run it on one worker's load instead"))
		}
		r.Profile = func() (func(), error) { return cli.CPUProfile(o.cpuprofile) }
	}
	if progress.LiveTerminal(stderr) {
		r.Follow = func(live *load.Live, d time.Duration, n int64) func() { return progress.LoadLine(stderr, live, d, n) }
	}
	out, err := r.Do(ctx)
	if err != nil {
		return cli.BadInput(err)
	}
	if err := finish(ctx, stdout, o.format, report.SampleRun{Sample: out.Sample, Parts: out.Parts, Warnings: out.Warnings}); err != nil {
		return err
	}
	if out.Short != nil {
		return cli.Failed(out.Short)
	}
	return nil
}

// finish prints the sample of a run that ctx ran and says how the run
// ended: stopped early (marked interrupted; interruptedExit gives the exit
// code), complete, or complete without a success where the target
// answered no request (exit 1: a load test of nothing).
func finish(ctx context.Context, w io.Writer, format string, r report.SampleRun) error {
	if ctx.Err() != nil {
		r.StoppedBy = cli.StoppedBy(ctx)
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
	return cli.Failed(fmt.Errorf("no request succeeded (%s)", report.ErrorList(s)))
}
