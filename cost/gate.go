package cost

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// Check holds the costs against a baseline (instructions per operation may
// not grow by more than maxIncrease percent; a negative maxIncrease skips
// the check) and a ceiling on allocations per operation (negative: none).
func Check(costs []Cost, baseline []Cost, maxIncrease, maxAllocs float64) []Gate {
	gates := []Gate{}
	for _, c := range costs {
		if maxIncrease >= 0 && c.Source == "valgrind" {
			for _, b := range baseline {
				if b.Name != c.Name || b.InstructionsPerOp <= 0 {
					continue
				}
				limit := b.InstructionsPerOp * (1 + maxIncrease/100)
				g := Gate{Cost: c.Name, Check: "instructions_per_op against the baseline", Base: b.InstructionsPerOp,
					Value: c.InstructionsPerOp, Limit: limit, Failed: c.InstructionsPerOp > limit}
				change := (c.InstructionsPerOp/b.InstructionsPerOp - 1) * 100
				g.Message = fmt.Sprintf("%s: %.1f instructions per op, %+.2f %% against the baseline's %.1f (allowed: +%.3g %%)",
					c.Name, c.InstructionsPerOp, change, b.InstructionsPerOp, maxIncrease)
				gates = append(gates, g)
			}
		}
		if maxIncrease >= 0 && c.Source == "go-bench" {
			for _, b := range baseline {
				if b.Name != c.Name {
					continue
				}
				g := Gate{Cost: c.Name, Check: "allocations_per_op against the baseline", Base: b.AllocationsPerOp,
					Value: c.AllocationsPerOp, Limit: b.AllocationsPerOp, Failed: c.AllocationsPerOp > b.AllocationsPerOp}
				g.Message = fmt.Sprintf("%s: %.4g allocations per op against the baseline's %.4g (may not rise)", c.Name, c.AllocationsPerOp, b.AllocationsPerOp)
				gates = append(gates, g)
			}
		}
		if maxAllocs >= 0 {
			g := Gate{Cost: c.Name, Check: "allocations_per_op ceiling", Value: c.AllocationsPerOp, Limit: maxAllocs, Failed: c.AllocationsPerOp > maxAllocs}
			g.Message = fmt.Sprintf("%s: %.4g allocations per op (ceiling %.4g)", c.Name, c.AllocationsPerOp, maxAllocs)
			gates = append(gates, g)
		}
	}
	return gates
}

// FromBench reads Go benchmark output (go test -bench -benchmem) and
// returns each benchmark's allocations and bytes per op: exact, since the
// runtime counts them. Several results of one benchmark must agree.
func FromBench(name string, r io.Reader) ([]Cost, error) {
	br := benchfmt.NewReader(r, name)
	var costs []Cost
	index := map[string]int{}
	for br.Scan() {
		res, ok := br.Result().(*benchfmt.Result)
		if !ok {
			continue // config lines, syntax errors are reported by Err
		}
		allocs, okA := res.Value("allocs/op")
		bytes, okB := res.Value("B/op")
		if !okA || !okB {
			return nil, fmt.Errorf("%s: %s has no allocs/op or B/op (run go test with -benchmem)", name, res.Name.Full())
		}
		n := "Benchmark" + benchName(res.Name)
		if i, seen := index[n]; seen {
			if costs[i].AllocationsPerOp != allocs {
				costs[i].Exact = false
			}
			continue
		}
		index[n] = len(costs)
		costs = append(costs, Cost{Name: n, Ops: res.Iters, AllocationsPerOp: allocs, BytesPerOp: bytes, Exact: true, Source: "go-bench"})
	}
	if err := br.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(costs) == 0 {
		return nil, fmt.Errorf("%s: no benchmark results in Go's benchmark format", name)
	}
	return costs, nil
}

// Text writes the costs and the gates for a terminal.
func Text(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-40s %14s %12s %12s %14s %12s  %s\n", "cost", "instr/op", "allocs/op", "bytes/op", "cold instr", "cold allocs", "exact")
	for _, c := range r.Costs {
		exact := "yes"
		if !c.Exact {
			exact = fmt.Sprintf("no (slopes %.1f, %.1f)", c.InstructionSlopes[0], c.InstructionSlopes[1])
		}
		ins, cold := fmt.Sprintf("%.1f", c.InstructionsPerOp), fmt.Sprint(c.ColdInstructions)
		if c.Source == "go-bench" {
			ins, cold = "–", "–"
		}
		fmt.Fprintf(&b, "%-40s %14s %12.4g %12.4g %14s %12d  %s\n", c.Name, ins, c.AllocationsPerOp, c.BytesPerOp, cold, c.ColdAllocations, exact)
	}
	for _, g := range r.Gates {
		state := "ok"
		if g.Failed {
			state = "FAILED"
		}
		fmt.Fprintf(&b, "%s: %s\n", state, g.Message)
	}
	if r.Valgrind != "" {
		fmt.Fprintf(&b, "%s %s\n", r.Valgrind, strings.Join(r.Flags, " "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// benchName is a benchmark's name without its GOMAXPROCS suffix, so that
// a baseline holds on a machine with another core count.
func benchName(n benchfmt.Name) string {
	base, parts := n.Parts()
	name := string(base)
	for _, p := range parts {
		if !strings.HasPrefix(string(p), "-") {
			name += string(p)
		}
	}
	return name
}
