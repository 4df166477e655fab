package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/driver/grpcdrv"
	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
)

func loadCmd(stdout io.Writer) *cobra.Command {
	var (
		concurrency               int
		requests                  int64
		duration, timeout, warmup time.Duration
		rate                      float64
		headers                   []string
		data, rpcMethod, params   string
		protos, importPaths       []string
		format                    string
	)
	c := &cobra.Command{
		Use:   "load TARGET",
		Short: "Load one target ad hoc, like vegeta, ghz or wrk2",
		Long: `load sends one request shape to one target and reports what it measured.
TARGET is http(s)://HOST/PATH (with --jsonrpc for JSON-RPC 2.0) or
grpc://HOST:PORT/package.Service/Method (types from server reflection, or
--proto files).`,
		Example: "  tandem load grpc://127.0.0.1:9090/tandem.sample.v1.Ledger/GetBlock --data '{\"height\":5}' --concurrency 8 --duration 10s\n" +
			"  tandem load http://127.0.0.1:8080/ --jsonrpc getbalance --params '[\"tz1000042\"]' --requests 10000 --format json",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rate > 0 {
				return badInput(errors.New("--rate (open loop) is not supported by this tandem yet; use --concurrency"))
			}
			if requests <= 0 && duration <= 0 {
				duration = 10 * time.Second
			}
			body, err := readData(data)
			if err != nil {
				return badInput(err)
			}
			d, err := loadDialer(cmd, args[0], body, rpcMethod, params, headers, protos, importPaths, timeout)
			if err != nil {
				return badInput(err)
			}
			ctx := cmd.Context()
			if warmup > 0 {
				if _, err := (load.Closed{Concurrency: concurrency, Duration: warmup, Timeout: timeout}).Run(ctx, d); err != nil {
					return badInput(err)
				}
			}
			s, err := load.Closed{Concurrency: concurrency, Requests: requests, Duration: duration, Timeout: timeout}.Run(ctx, d)
			if err != nil {
				return badInput(err)
			}
			return printSample(stdout, format, s)
		},
	}
	f := c.Flags()
	f.IntVar(&concurrency, "concurrency", 1, "closed loop: clients, each waiting for its answer")
	f.Float64Var(&rate, "rate", 0, "open loop: total arrivals per second")
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
	return c
}

func readData(data string) ([]byte, error) {
	if name, ok := strings.CutPrefix(data, "@"); ok {
		return os.ReadFile(name)
	}
	return []byte(data), nil
}

func loadDialer(cmd *cobra.Command, target string, body []byte, rpcMethod, params string, headers, protos, importPaths []string, timeout time.Duration) (load.Dialer, error) {
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
			Proto: protos, ImportPaths: importPaths, Metadata: hdr})
		if err != nil {
			return nil, err
		}
		return c, nil
	case "http", "https":
		if rpcMethod != "" && !json.Valid([]byte(params)) {
			return nil, errors.New("--params: not valid JSON")
		}
		o := httpdrv.Options{URL: target, Headers: hdr, Body: body, Timeout: timeout}
		if rpcMethod != "" {
			o.RPCMethod, o.RPCParams = rpcMethod, []byte(params)
		}
		return httpdrv.New(o)
	}
	return nil, fmt.Errorf("target %q: want http://, https:// or grpc:// (ws:// and amqp:// are not supported by this tandem yet)", target)
}

func printSample(w io.Writer, format string, s results.Sample) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(loadJSON(s))
	case "text", "md":
		sep := "  "
		fmt.Fprintf(w, "requests      %d ok, %d errors in %v\n", s.OK, s.Requests-s.OK, time.Duration(s.DurationNs).Round(time.Millisecond))
		fmt.Fprintf(w, "throughput    %.1f/s (%.1f %s/s)\n", s.Throughput, s.UnitsPerS, s.Unit)
		d := s.LatencyNs
		fmt.Fprintf(w, "latency       min %s%smean %s%sp50 %s%sp90 %s%sp99 %s%sp99.9 %s%smax %s\n",
			report.Duration(float64(d.Min)), sep, report.Duration(d.Mean), sep, report.Duration(float64(d.P50)), sep,
			report.Duration(float64(d.P90)), sep, report.Duration(float64(d.P99)), sep, report.Duration(float64(d.P999)), sep, report.Duration(float64(d.Max)))
		for k, v := range s.Errors {
			fmt.Fprintf(w, "error         %s × %d\n", k, v)
		}
		return nil
	}
	return badInput(fmt.Errorf("--format %q: want text, json or md", format))
}

// loadJSON is the --format json object of DESIGN §5.
func loadJSON(s results.Sample) map[string]any {
	lag := s.ScheduleLagNs
	if lag == nil {
		lag = &results.Distribution{}
	}
	return map[string]any{
		"requests": s.Requests, "ok": s.OK, "errors": s.Errors, "duration_ns": s.DurationNs,
		"offered_rate": nil, "achieved_rate": float64(s.Requests) / (float64(s.DurationNs) / 1e9),
		"throughput": s.Throughput, "unit": s.Unit, "units_per_s": s.UnitsPerS,
		"latency_ns": s.LatencyNs, "service_time_ns": s.ServiceTimeNs, "schedule_lag_ns": lag,
		"dropped": s.Dropped, "hdr": s.HDR,
	}
}
