package compat

import (
	"context"
	"fmt"
	"testing"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/sample"
)

// BenchmarkRun1000Cases sends 1,000 GetBlock cases to three gRPC targets
// on loopback: three instances of build a (tandem's own cost: every answer
// decoded, canonicalised and digested), and two of a with one of b (every
// case also diffed; b's answers stall ~40 ms on delayed ACKs, which bounds
// the time). docs/performance.md records time and memory per run.
func BenchmarkRun1000Cases(b *testing.B) {
	b.Run("a,a,a", func(b *testing.B) { benchCompat(b, sample.BuildA) })
	b.Run("a,a,b", func(b *testing.B) { benchCompat(b, sample.BuildB) })
}

func benchCompat(b *testing.B, third sample.Build) {
	eps := map[string]map[string]string{}
	for i, build := range []sample.Build{sample.BuildA, sample.BuildA, third} {
		eps[fmt.Sprint("t", i)] = map[string]string{"grpc": startSample(b, build, 2000)}
	}
	s, err := studyParse(`
version: 1
name: bench
targets:
  - {name: t0, endpoints: {grpc: "127.0.0.1:1"}}
  - {name: t1, endpoints: {grpc: "127.0.0.1:1"}}
  - {name: t2, endpoints: {grpc: "127.0.0.1:1"}}
calls:
  block: {grpc: {method: tandem.sample.v1.Ledger/GetBlock, request: {height: "${h}"}}}
compat:
  cases:
    - {call: block, vary: {h: {sample: {min: 0, max: 1999, count: 1000}}}}
`)
	if err != nil {
		b.Fatal(err)
	}
	q := driver.NewQuerier(driver.Options{})
	defer q.Close()
	b.ResetTimer()
	for b.Loop() {
		c, err := Run(context.Background(), s, Options{Endpoints: eps, Query: q})
		if err != nil || len(c.Cases) != 1000 {
			b.Fatalf("%v, %d cases", err, len(c.Cases))
		}
	}
}
