package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/cost"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
)

func costCmd(stdout io.Writer) *cobra.Command {
	var ops int
	var format, out, baseline, toggle, name, bench string
	var maxIncrease, maxAllocs float64
	var env []string
	c := &cobra.Command{
		Use:   "cost [flags] -- CMD ARGS…",
		Args:  cobra.ArbitraryArgs,
		Short: "Count instructions and allocations per operation (valgrind, Go benchmarks); gate on a baseline",
		Long: `cost runs CMD with {ops} in its arguments replaced by 1, N, 2N and 4N
under valgrind: callgrind counts instructions, DHAT heap allocations and
bytes. Each figure has two slopes, (X(2N) − X(N)) / N and (X(4N) − X(2N)) / 2N;
per operation is their mean. "exact" when the two agree within 1 %: the cost
per operation does not change with N. Else the report says, per figure, how
it grows or falls (instructions grow: 1,985 → 3,785 per op from 100→200 to
200→400 ops, about ×1.91 per doubling: superlinear), and the JSON has it
under growth. The run of 1 operation is the cold cost. With --bench it reads
Go benchmark output (go test -bench -benchmem) instead: allocations and
bytes per op as the runtime counts them, exact when the runs agree.

Gates: exit 1 when instructions per op grew more than --max-increase percent
over --baseline (an earlier JSON from cost), when a Go benchmark's
allocations per op rose over the baseline, or when allocations per op exceed
--max-allocs. A cost that grows with N is held by its dearer slope; against
a baseline entry that grows with N, each slope is held against the entry's
of the same interval, so such an entry holds only a count at its own --ops.
Every cost needs an entry of its name (--name) and kind in the baseline: one
without is exit 2 (1 if a gate failed too), since a gate against nothing
cannot fail; the report is still shown and written (-o), to become the new
baseline. Exit 2 also for a missing valgrind, a command that fails or whose
cost does not grow with {ops}.`,
		Example: "  tandem cost --ops 1000 -- ./decode --messages {ops}\n" +
			"  tandem cost --ops 1000 --baseline cost.json --max-increase 5 --max-allocs 3 -- ./decode --messages {ops}\n" +
			"  go test -run '^$' -bench . -benchmem ./... | tandem cost --bench - --baseline allocs.json\n" +
			"  tandem cost --env GOGC=off --env GOMAXPROCS=1 --env GODEBUG=asyncpreemptoff=1 -- ./goprog -n {ops}",
		RunE: func(cmd *cobra.Command, args []string) error {
			render, err := outputFormat(format, report.ForCost)
			if err != nil {
				return err
			}
			var base *cost.Baseline
			if baseline != "" {
				b, err := cost.ReadBaseline(baseline)
				if err != nil {
					return badInput(err)
				}
				base = b
			} else if cmd.Flags().Changed("max-increase") {
				return badInput(errors.New("--max-increase needs a --baseline to hold the counts against"))
			}
			rep := &cost.Report{Schema: cost.Schema, Costs: []cost.Cost{}}
			switch {
			case bench != "":
				if len(args) > 0 {
					return badInput(errors.New("--bench reads benchmark output; give no command"))
				}
				var r io.Reader = cmd.InOrStdin()
				if bench != "-" {
					f, err := os.Open(bench)
					if err != nil {
						return badInput(err)
					}
					defer f.Close()
					r = f
				}
				costs, err := cost.FromBench(bench, r)
				if err != nil {
					return badInput(err)
				}
				rep.Costs = costs
			case len(args) == 0:
				return badInput(errors.New("no command: tandem cost -- CMD ARGS… (with {ops} in ARGS), or --bench FILE"))
			default:
				if ops < 1 {
					return badInput(fmt.Errorf("--ops %d: want at least 1", ops))
				}
				if _, err := cost.Argv(args, ops); err != nil {
					return badInput(err)
				}
				if name == "" {
					name = strings.Join(args, " ")
				}
				if base != nil {
					// Before counting, which takes minutes.
					if err := base.Holds(name, "valgrind", ops); err != nil {
						return badInput(fmt.Errorf("%w (--name names the cost)", err))
					}
				}
				v, err := cost.FindValgrind()
				if err != nil {
					return badInput(err)
				}
				v.Toggle, v.Env = toggle, env
				c, err := v.Measure(cmd.Context(), name, args, ops)
				if err != nil {
					return badInput(err)
				}
				rep.Costs, rep.Valgrind, rep.Flags = []cost.Cost{c}, v.Version, v.Flags()
			}
			// Without an entry for every cost the report is still shown
			// and written (-o): it is the new baseline's material.
			gates, missing := cost.Check(rep.Costs, base, maxIncrease, maxAllocs)
			rep.Gates = gates
			var b strings.Builder
			if err := render.Cost(&b, rep); err != nil {
				return err
			}
			if out != "" {
				// the json format's file: indented, its control characters escaped
				js, _ := report.LookupFormat("json", report.ForCost)
				var data strings.Builder
				if err := js.Cost(&data, rep); err != nil {
					return err
				}
				if err := results.WriteFileAtomic(out, []byte(data.String())); err != nil {
					return err
				}
			}
			io.WriteString(stdout, b.String())
			var failed []string
			for _, g := range rep.Gates {
				if g.Failed {
					failed = append(failed, g.Message)
				}
			}
			if len(failed) > 0 {
				if missing != nil {
					failed = append(failed, missing.Error())
				}
				return &exitError{exitCheckFailed, errors.New(strings.Join(failed, "; "))}
			}
			if missing != nil {
				return badInput(missing)
			}
			return nil
		},
	}
	f := c.Flags()
	f.IntVar(&ops, "ops", 1000, "N: runs of N, 2N and 4N operations give the two slopes")
	f.StringVar(&format, "format", "text", report.FormatList(report.ForCost))
	f.StringVarP(&out, "output", "o", "", "also write the JSON to this file (a baseline for later runs)")
	f.StringVar(&baseline, "baseline", "", "an earlier JSON from tandem cost to hold the counts against")
	f.Float64Var(&maxIncrease, "max-increase", 5, "with --baseline: allowed growth of instructions per op, in percent")
	f.Float64Var(&maxAllocs, "max-allocs", -1, "ceiling on allocations per op (negative: none)")
	f.StringVar(&toggle, "toggle-collect", "", "count instructions only inside functions matching this (callgrind's --toggle-collect)")
	f.StringVar(&name, "name", "", "the cost's name in the report (default: the command)")
	f.StringArrayVar(&env, "env", nil, "K=V added to the measured command's environment (repeatable), e.g. GOGC=off")
	f.StringVar(&bench, "bench", "", "read Go benchmark output from this file (- for stdin) instead of running a command")
	return c
}
