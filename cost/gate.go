package cost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
	"golang.org/x/perf/benchfmt"
)

// Baseline is an earlier report's costs, to hold new counts against.
type Baseline struct {
	// File is where the costs came from, for messages.
	File  string
	Costs []Cost
}

// ReadBaseline reads a report that tandem cost wrote (-o) as a baseline.
func ReadBaseline(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: not a %s file: %w", path, Schema, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("%s: not a %s file (schema %q)", path, Schema, r.Schema)
	}
	return &Baseline{File: path, Costs: r.Costs}, nil
}

// MissingError is costs that a baseline holds no usable entry for. A gate
// against nothing could not fail, so it is an error, not a pass.
type MissingError struct {
	File string
	// Missing names the costs that no entry of the baseline names;
	// Unusable says, per cost, why the entries of its name cannot gate it.
	Missing  []string
	Unusable []string
	// Holds names the baseline's entries.
	Holds []string
}

func (e *MissingError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		q := make([]string, len(e.Missing))
		for i, n := range e.Missing {
			q[i] = strconv.Quote(n)
		}
		noun := "entry"
		if len(q) > 1 {
			noun = "entries"
		}
		parts = append(parts, fmt.Sprintf("has no %s %s", noun, strings.Join(q, ", ")))
	}
	parts = append(parts, e.Unusable...)
	holds := "no entries"
	if len(e.Holds) > 0 {
		holds = strings.Join(e.Holds, ", ")
	}
	return fmt.Sprintf("baseline %s %s; it holds: %s", e.File, strings.Join(parts, "; "), holds)
}

// Holds reports whether the baseline has an entry that a cost of this
// name and source (valgrind or go-bench), counted at ops operations (N;
// 0 for a Go benchmark), can be held against: nil, or a *MissingError
// naming the entries it does hold. A command's cost can be looked up
// before it is counted.
func (b *Baseline) Holds(name, source string, ops int) error {
	return b.missing([]Cost{{Name: name, Source: source, Ops: ops}})
}

// entries returns the baseline's entries that a cost c (its name, source
// and N) is held against; when there are entries of the name but none can
// gate it, why says so. An entry whose instructions per op grow with N
// holds only a count at its own N.
func (b *Baseline) entries(c Cost) (use []Cost, why string) {
	var reasons []string
	for _, e := range b.Costs {
		switch g := growth(e, figInstructions); {
		case e.Name != c.Name:
		case e.Source != c.Source:
			reasons = append(reasons, fmt.Sprintf("it is a %s count, not %s", e.Source, c.Source))
		case e.Error != "":
			reasons = append(reasons, "it was not counted: "+e.Error)
		case c.Source == "valgrind" && e.InstructionsPerOp <= 0:
			reasons = append(reasons, "it has no instructions per op")
		case c.Source == "valgrind" && g != nil && e.Ops != c.Ops:
			reasons = append(reasons, fmt.Sprintf("its %s, so it holds only a count at its own N: --ops %d, not %d", GrowthText(e.Ops, *g), e.Ops, c.Ops))
		default:
			use = append(use, e)
		}
	}
	if len(use) > 0 || len(reasons) == 0 {
		return use, ""
	}
	return nil, fmt.Sprintf("has entry %q, but it cannot gate a %s count: %s", c.Name, c.Source, strings.Join(reasons, "; "))
}

// missing is the error for costs without a usable entry (nil if none).
func (b *Baseline) missing(costs []Cost) error {
	e := &MissingError{File: b.File}
	for _, c := range costs {
		switch use, why := b.entries(c); {
		case why != "":
			e.Unusable = append(e.Unusable, why)
		case len(use) == 0:
			e.Missing = append(e.Missing, c.Name)
		}
	}
	if len(e.Missing) == 0 && len(e.Unusable) == 0 {
		return nil
	}
	seen := map[string]bool{}
	for _, c := range b.Costs {
		if !seen[c.Name] {
			seen[c.Name] = true
			e.Holds = append(e.Holds, c.Name)
		}
	}
	return e
}

// Check holds the costs against a baseline (nil: none) and a ceiling on
// allocations per operation (maxAllocs; negative: none). Against the
// baseline, instructions per operation (valgrind) may not grow by more
// than maxIncrease percent (instructionGate says how a cost that is not
// constant in N is held), and a Go benchmark's allocations per operation
// may not rise. Every cost must have an entry of its name and source in
// the baseline (at its own N, for an entry whose cost grows with N): for
// those that have none the gates of the others come back with a
// *MissingError, since a gate against nothing could not fail.
func Check(costs []Cost, base *Baseline, maxIncrease, maxAllocs float64) ([]Gate, error) {
	gates := []Gate{}
	var without []Cost
	for _, c := range costs {
		var entries []Cost
		if base != nil {
			if entries, _ = base.entries(c); len(entries) == 0 {
				without = append(without, c)
			}
		}
		for _, b := range entries {
			switch c.Source {
			case "valgrind":
				gates = append(gates, instructionGate(c, b, maxIncrease))
			case "go-bench":
				g := Gate{Cost: c.Name, Check: "allocations_per_op against the baseline", Base: b.AllocationsPerOp,
					Value: c.AllocationsPerOp, Limit: b.AllocationsPerOp, Failed: c.AllocationsPerOp > b.AllocationsPerOp}
				g.Message = fmt.Sprintf("%s: %.4g allocations per op against the baseline's %.4g (may not rise)", c.Name, c.AllocationsPerOp, b.AllocationsPerOp)
				gates = append(gates, g)
			}
		}
		if maxAllocs >= 0 {
			gates = append(gates, allocationCeiling(c, maxAllocs))
		}
	}
	if base != nil {
		return gates, base.missing(without)
	}
	return gates, nil
}

// instructionGate holds a cost's instructions per operation against a
// baseline entry b, allowing maxIncrease percent:
//   - both constant in N: the mean per op against the baseline's;
//   - the cost grows (or falls) with N, the baseline's does not: its
//     dearest slope against the baseline's per op, so a cost that became
//     superlinear fails once its dearer slope is over the limit;
//   - the baseline's grows (an entry at the same N, entries says): each
//     slope against the baseline's of the same interval; the one that
//     grew most is the gate's value.
func instructionGate(c, b Cost, maxIncrease float64) Gate {
	g := Gate{Cost: c.Name, Check: "instructions_per_op against the baseline"}
	allowed := fmt.Sprintf("allowed: %+.3g %%", maxIncrease)
	pct := func(v, base float64) float64 { return (v/base - 1) * 100 }
	cg, bg := growth(c, figInstructions), growth(b, figInstructions)
	switch {
	case bg != nil:
		i := 0
		if pct(c.InstructionSlopes[1], b.InstructionSlopes[1]) > pct(c.InstructionSlopes[0], b.InstructionSlopes[0]) {
			i = 1
		}
		g.Base, g.Value = b.InstructionSlopes[i], c.InstructionSlopes[i]
		g.Message = fmt.Sprintf("%s: %s → %s instructions per op from %d→%d to %d→%d ops, %+.2f %% and %+.2f %% against the baseline's %s → %s (its %s; %s)",
			c.Name, human.Number(c.InstructionSlopes[0]), human.Number(c.InstructionSlopes[1]), c.Ops, 2*c.Ops, 2*c.Ops, 4*c.Ops,
			pct(c.InstructionSlopes[0], b.InstructionSlopes[0]), pct(c.InstructionSlopes[1], b.InstructionSlopes[1]),
			human.Number(b.InstructionSlopes[0]), human.Number(b.InstructionSlopes[1]), GrowthText(b.Ops, *bg), allowed)
	case cg != nil:
		g.Base, g.Value = b.InstructionsPerOp, max(c.InstructionSlopes[0], c.InstructionSlopes[1])
		g.Message = fmt.Sprintf("%s: its %s; the dearer, %s per op, is %+.2f %% against the baseline's %.1f (%s)",
			c.Name, GrowthText(c.Ops, *cg), human.Number(g.Value), pct(g.Value, g.Base), b.InstructionsPerOp, allowed)
	default:
		g.Base, g.Value = b.InstructionsPerOp, c.InstructionsPerOp
		g.Message = fmt.Sprintf("%s: %.1f instructions per op, %+.2f %% against the baseline's %.1f (%s)",
			c.Name, c.InstructionsPerOp, pct(g.Value, g.Base), b.InstructionsPerOp, allowed)
	}
	g.Limit = g.Base * (1 + maxIncrease/100)
	g.Failed = g.Value > g.Limit
	return g
}

// allocationCeiling holds a cost's allocations per operation under a
// ceiling; for allocations that grow with N, the dearer slope.
func allocationCeiling(c Cost, ceiling float64) Gate {
	g := Gate{Cost: c.Name, Check: "allocations_per_op ceiling", Value: c.AllocationsPerOp, Limit: ceiling}
	g.Message = fmt.Sprintf("%s: %.4g allocations per op (ceiling %.4g)", c.Name, c.AllocationsPerOp, ceiling)
	if ag := growth(c, figAllocations); ag != nil {
		g.Value = max(c.AllocationSlopes[0], c.AllocationSlopes[1])
		g.Message = fmt.Sprintf("%s: its %s; the dearer, %.4g per op, against the ceiling %.4g", c.Name, GrowthText(c.Ops, *ag), g.Value, ceiling)
	}
	g.Failed = g.Value > ceiling
	return g
}

// FromBench reads Go benchmark output (go test -bench -benchmem) and
// returns each benchmark's allocations and bytes per op, which the runtime
// counts. Several results of one benchmark must agree to be exact; the
// figures that do not are named in Inexact (the first result's are kept).
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
			c := &costs[i]
			if c.AllocationsPerOp != allocs && !slices.Contains(c.Inexact, figAllocations) {
				c.Inexact = append(c.Inexact, figAllocations)
			}
			if c.BytesPerOp != bytes && !slices.Contains(c.Inexact, figBytes) {
				c.Inexact = append(c.Inexact, figBytes)
			}
			c.Exact = len(c.Inexact) == 0
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

// Limits are what Gated holds costs to: Baseline is an earlier report's
// file ("": none), MaxIncrease the growth of instructions per operation
// it allows in percent (MaxIncreaseSet: asked for, which needs a
// baseline), MaxAllocs a ceiling on allocations per operation (negative:
// none).
type Limits struct {
	Baseline               string
	MaxIncrease, MaxAllocs float64
	MaxIncreaseSet         bool
}

// Gated reads the baseline, counts src's costs (Collect) and checks them
// (Check): the report with its gates, the error of the gates that failed
// (Failed) and what the baseline lacks (a *MissingError). err is what kept
// a report from being made.
func Gated(ctx context.Context, src Source, l Limits) (rep *Report, failed, missing, err error) {
	var base *Baseline
	if l.Baseline != "" {
		if base, err = ReadBaseline(l.Baseline); err != nil {
			return nil, nil, nil, err
		}
	} else if l.MaxIncreaseSet {
		return nil, nil, nil, errors.New("--max-increase needs a --baseline to hold the counts against")
	}
	if rep, err = Collect(ctx, src, base); err != nil {
		return nil, nil, nil, err
	}
	rep.Gates, missing = Check(rep.Costs, base, l.MaxIncrease, l.MaxAllocs)
	return rep, Failed(rep.Gates, missing), missing, nil
}

// Failed is the error of the gates that failed, with what Check found
// missing after them; nil when no gate failed, missing or not.
func Failed(gates []Gate, missing error) error {
	var failed []string
	for _, g := range gates {
		if g.Failed {
			failed = append(failed, g.Message)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	if missing != nil {
		failed = append(failed, missing.Error())
	}
	return errors.New(strings.Join(failed, "; "))
}

// Text writes the costs and the gates for a terminal, the text from
// outside (names, flags) through human.Printable.
func Text(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-40s %14s %12s %12s %14s %12s  %s\n", "cost", "instr/op", "allocs/op", "bytes/op", "cold instr", "cold allocs", "exact")
	for _, c := range r.Costs {
		exact := Exactness(c)
		ins, cold := fmt.Sprintf("%.1f", c.InstructionsPerOp), fmt.Sprint(c.ColdInstructions)
		if c.Source == "go-bench" {
			ins, cold = "–", "–"
		}
		name := strings.NewReplacer("\n", " ", "\t", " ").Replace(c.Name) // one row
		fmt.Fprintf(&b, "%-40s %14s %12.4g %12.4g %14s %12d  %s\n", name, ins, c.AllocationsPerOp, c.BytesPerOp, cold, c.ColdAllocations, exact)
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
	// names and flags are the user's and a benchmark's: no control
	// character of theirs reaches the terminal
	_, err := io.WriteString(w, human.Printable(b.String()))
	return err
}

// Exactness is the report's "exact" column: yes, or no and the figures
// whose two measurements disagree: how each grows or falls with N (no:
// instructions grow: 1,985 → 3,785 per op from 100→200 to 200→400 ops,
// about ×1.91 per doubling: superlinear), or for a cost written before
// growth was recorded, the slopes where the cost keeps them.
func Exactness(c Cost) string {
	if c.Exact {
		return "yes"
	}
	if len(c.Inexact) == 0 {
		return "no"
	}
	if len(c.Growth) > 0 {
		figs := make([]string, len(c.Growth))
		for i, g := range c.Growth {
			figs[i] = GrowthText(c.Ops, g)
		}
		return "no: " + strings.Join(figs, "; ")
	}
	figs := make([]string, len(c.Inexact))
	for i, f := range c.Inexact {
		figs[i] = f
		switch {
		case c.Source != "valgrind":
		case f == figInstructions:
			figs[i] += fmt.Sprintf(" (slopes %.1f, %.1f)", c.InstructionSlopes[0], c.InstructionSlopes[1])
		case f == figAllocations:
			figs[i] += fmt.Sprintf(" (slopes %.4g, %.4g)", c.AllocationSlopes[0], c.AllocationSlopes[1])
		}
	}
	return "no: " + strings.Join(figs, ", ")
}

// GrowthText says how a figure's cost per operation changes with N, for
// a cost counted at n, 2n and 4n operations: "instructions grow: 1,985 →
// 3,785 per op from 100→200 to 200→400 ops, about ×1.91 per doubling:
// superlinear".
func GrowthText(n int, g results.Growth) string {
	verb := "grow"
	if g.Shape == results.Sublinear {
		verb = "fall"
	}
	s := fmt.Sprintf("%s %s: %s → %s per op from %d→%d to %d→%d ops", g.Figure, verb, human.Number(g.Slopes[0]), human.Number(g.Slopes[1]),
		n, 2*n, 2*n, 4*n)
	if g.PerDoubling > 0 {
		s += fmt.Sprintf(", about ×%.2f per doubling", g.PerDoubling)
	}
	return s + ": " + string(g.Shape)
}

// growth is the growth of a cost's figure, nil when it is constant (or
// the cost was written before growth was recorded).
func growth(c Cost, figure string) *results.Growth {
	for i := range c.Growth {
		if c.Growth[i].Figure == figure {
			return &c.Growth[i]
		}
	}
	return nil
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
