package main

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/cost"
	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/report"
)

// costFlags are tandem cost's flags.
type costFlags struct {
	ops                                        int
	format, out, baseline, toggle, name, bench string
	maxIncrease, maxAllocs                     float64
	env                                        []string
}

func costCmd(stdout io.Writer) *cobra.Command {
	var f costFlags
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
			return runCost(cmd, args, f, stdout)
		},
	}
	fl := c.Flags()
	fl.IntVar(&f.ops, "ops", 1000, "N: runs of N, 2N and 4N operations give the two slopes")
	formatVar(fl, &f.format, report.ForCost)
	fl.StringVarP(&f.out, "output", "o", "", "also write the JSON to this file (a baseline for later runs)")
	fl.StringVar(&f.baseline, "baseline", "", "an earlier JSON from tandem cost to hold the counts against")
	fl.Float64Var(&f.maxIncrease, "max-increase", 5, "with --baseline: allowed growth of instructions per op, in percent")
	fl.Float64Var(&f.maxAllocs, "max-allocs", -1, "ceiling on allocations per op (negative: none)")
	fl.StringVar(&f.toggle, "toggle-collect", "", "count instructions only inside functions matching this (callgrind's --toggle-collect)")
	fl.StringVar(&f.name, "name", "", "the cost's name in the report (default: the command)")
	fl.StringArrayVar(&f.env, "env", nil, "K=V added to the measured command's environment (repeatable), e.g. GOGC=off")
	fl.StringVar(&f.bench, "bench", "", "read Go benchmark output from this file (- for stdin) instead of running a command")
	return c
}

// runCost counts the costs (or reads them), shows and writes the report
// (the new baseline's material even when the baseline lacks an entry), and
// gates: exit 1 when a gate failed, else 2 when the baseline lacks an
// entry.
func runCost(cmd *cobra.Command, args []string, f costFlags, stdout io.Writer) error {
	rep, failed, missing, err := cost.Gated(cmd.Context(), cost.Source{Bench: f.bench, Stdin: cmd.InOrStdin(), Command: args, Ops: f.ops, Name: f.name,
		Toggle: f.toggle, Env: f.env}, cost.Limits{Baseline: f.baseline, MaxIncrease: f.maxIncrease, MaxAllocs: f.maxAllocs, MaxIncreaseSet: cmd.Flags().Changed("max-increase")})
	if err != nil {
		return cli.BadInput(err)
	}
	if err := report.Costs(stdout, f.format, rep, f.out); err != nil {
		return err
	}
	if failed != nil {
		return cli.Failed(failed)
	}
	if missing != nil {
		return cli.BadInput(missing)
	}
	return nil
}
