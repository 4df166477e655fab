package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/sample"
)

func sampleCmd(stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "sample",
		Short: "The built-in sample service that the demo and the tests measure",
	}
	var o sample.Options
	var build string
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve the sample ledger over gRPC and JSON-RPC until interrupted",
		Long: `serve builds the sample ledger's index into --data and serves it: gRPC
(tandem.sample.v1.Ledger, with reflection unless --no-reflection) on --grpc, JSON-RPC over HTTP (POST /)
and Prometheus metrics (GET /metrics) on --http. Build a indexes before it
listens; build b answers at once from a slow path while it indexes.
docs/sample.md lists how the builds differ.`,
		Example: "  tandem sample serve --build a --data /tmp/a --grpc 127.0.0.1:9090 --http 127.0.0.1:8080",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Build = sample.Build(build)
			s, err := sample.Start(cmd.Context(), o)
			if err != nil {
				return cli.BadInput(err)
			}
			fmt.Fprintf(stderr, "sample build %s: grpc %s, http %s\n", build, s.GRPCAddr(), s.HTTPAddr())
			<-cmd.Context().Done()
			return s.Close()
		},
	}
	f := serve.Flags()
	f.StringVar(&build, "build", "a", "a or b")
	f.StringVar(&o.DataDir, "data", "", "data directory for the index (required)")
	f.StringVar(&o.GRPCAddr, "grpc", "127.0.0.1:0", "gRPC listen address")
	f.StringVar(&o.HTTPAddr, "http", "127.0.0.1:0", "JSON-RPC and metrics listen address")
	f.Uint64Var(&o.Seed, "seed", 1, "chain seed")
	f.IntVar(&o.Blocks, "blocks", 2000, "chain length")
	f.IntVar(&o.Work, "work", 6000, "hash rounds per block while indexing")
	f.BoolVar(&o.NoReflection, "no-reflection", false, "serve gRPC without reflection (clients need sample/ledgerpb/ledger.proto)")
	serve.MarkFlagRequired("data")
	c.AddCommand(serve)
	return c
}
