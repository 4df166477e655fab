package cost

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
)

// A cost its baseline holds no usable entry for is an error that names
// the entries the baseline does hold, not a pass with no gates: a gate
// against nothing could not fail.
func TestCheckNeedsAnEntry(t *testing.T) {
	vg := func(name string, ins float64) Cost {
		return Cost{Name: name, InstructionsPerOp: ins, Source: "valgrind"}
	}
	gb := func(name string, allocs float64) Cost {
		return Cost{Name: name, AllocationsPerOp: allocs, Source: "go-bench"}
	}
	cases := []struct {
		name    string
		costs   []Cost
		base    []Cost // nil: no baseline
		gates   int
		failed  int
		wantErr string // "": no error
	}{
		{"valgrind, held", []Cost{vg("http-request", 100)}, []Cost{vg("http-request", 99)}, 1, 0, ""},
		{"valgrind, no entry", []Cost{vg("http-requests", 100)}, []Cost{vg("http-request", 99), vg("decode", 5)}, 0, 0,
			`baseline base.json has no entry "http-requests"; it holds: http-request, decode`},
		{"valgrind, entry is a Go benchmark's", []Cost{vg("BenchmarkDo", 100)}, []Cost{gb("BenchmarkDo", 0)}, 0, 0,
			`baseline base.json has entry "BenchmarkDo", but it cannot gate a valgrind count: it is a go-bench count, not valgrind; it holds: BenchmarkDo`},
		{"valgrind, entry without instructions", []Cost{vg("x", 100)}, []Cost{vg("x", 0)}, 0, 0,
			`has entry "x", but it cannot gate a valgrind count: it has no instructions per op`},
		{"valgrind, entry that failed", []Cost{vg("x", 100)}, []Cost{{Name: "x", Source: "valgrind", Error: "boom"}}, 0, 0,
			"it was not counted: boom"},
		{"empty baseline", []Cost{vg("x", 100)}, []Cost{}, 0, 0, `baseline base.json has no entry "x"; it holds: no entries`},
		{"go-bench, held", []Cost{gb("BenchmarkDo", 0)}, []Cost{gb("BenchmarkDo", 0)}, 1, 0, ""},
		{"go-bench, none held", []Cost{gb("BenchmarkA", 1), gb("BenchmarkB", 1)}, []Cost{gb("BenchmarkDo", 0), gb("BenchmarkDo", 0)}, 0, 0,
			`baseline base.json has no entries "BenchmarkA", "BenchmarkB"; it holds: BenchmarkDo`},
		{"go-bench, one of two held", []Cost{gb("BenchmarkA", 1), gb("BenchmarkB", 1)}, []Cost{gb("BenchmarkA", 1)}, 1, 0,
			`baseline base.json has no entry "BenchmarkB"; it holds: BenchmarkA`},
		{"go-bench, rose and one missing", []Cost{gb("BenchmarkA", 2), gb("BenchmarkB", 1)}, []Cost{gb("BenchmarkA", 1)}, 1, 1,
			`has no entry "BenchmarkB"`},
		{"no baseline", []Cost{vg("x", 100), gb("BenchmarkA", 1)}, nil, 0, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var base *Baseline
			if c.base != nil {
				base = &Baseline{File: "base.json", Costs: c.base}
			}
			gates, err := Check(c.costs, base, 5, -1)
			failed := 0
			for _, g := range gates {
				if g.Failed {
					failed++
				}
			}
			if len(gates) != c.gates || failed != c.failed {
				t.Errorf("%d gates, %d failed; want %d, %d: %+v", len(gates), failed, c.gates, c.failed, gates)
			}
			if c.wantErr == "" {
				if err != nil {
					t.Errorf("error %v; want none", err)
				}
				return
			}
			var me *MissingError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("error %v; want a *MissingError with %q", err, c.wantErr)
			}
		})
	}
}

// A cost whose cost per operation is not constant in N is held by what
// it costs at the N it was counted at: its dearer slope against a
// constant baseline, each slope against a growing baseline's of the same
// interval (which holds only at its own N); a ceiling on allocations that
// grow holds the dearer slope. In every failing case below the mean per
// op alone would pass.
func TestGateHoldsCostsThatGrow(t *testing.T) {
	flat := func(ops int, perOp float64) Cost {
		return Cost{Name: "op", Ops: ops, InstructionsPerOp: perOp, InstructionSlopes: [2]float64{perOp, perOp}, Exact: true, Source: "valgrind"}
	}
	grows := func(ops int, s0, s1 float64) Cost {
		c := Cost{Name: "op", Ops: ops, InstructionsPerOp: (s0 + s1) / 2, InstructionSlopes: [2]float64{s0, s1}, Source: "valgrind"}
		c.Growth = growing(c.InstructionSlopes, [2]float64{}, [2]float64{})
		c.Inexact = []string{figInstructions}
		return c
	}
	cases := []struct {
		name        string
		c, base     Cost
		failed      bool
		value, lim  float64
		message     string
		missingWant string // a *MissingError with this, and no gate
	}{
		{"constant against constant", flat(100, 1040), flat(100, 1000), false, 1040, 1050, "op: 1040.0 instructions per op, +4.00 % against the baseline's 1000.0", ""},
		{"grows 8 % per doubling against constant", grows(100, 1000, 1080), flat(100, 1000), true, 1080, 1050,
			"op: its instructions grow: 1,000 → 1,080 per op from 100→200 to 200→400 ops, about ×1.08 per doubling: superlinear; the dearer, 1,080 per op, is +8.00 % against the baseline's 1000.0", ""},
		{"grows 3 % per doubling against constant", grows(100, 1000, 1030), flat(100, 1000), false, 1030, 1050, "the dearer, 1,030 per op, is +3.00 %", ""},
		{"constant against constant at another N", flat(400, 1000), flat(100, 1000), false, 1000, 1050, "+0.00 %", ""},
		{"grows as its baseline", grows(100, 1000, 2000), grows(100, 1000, 2000), false, 1000, 1050,
			"op: 1,000 → 2,000 instructions per op from 100→200 to 200→400 ops, +0.00 % and +0.00 % against the baseline's 1,000 → 2,000", ""},
		{"its first slope grew beyond a growing baseline's", grows(100, 1060, 1990), grows(100, 1000, 2000), true, 1060, 1050, "+6.00 % and -0.50 %", ""},
		{"its second slope grew beyond a growing baseline's", grows(100, 1000, 2150), grows(100, 1000, 2000), true, 2150, 2100, "+0.00 % and +7.50 %", ""},
		{"a growing baseline at another N", grows(50, 600, 1200), grows(100, 1000, 2000), false, 0, 0, "", `has entry "op", but it cannot gate a valgrind count: ` +
			"its instructions grow: 1,000 → 2,000 per op from 100→200 to 200→400 ops, about ×2.00 per doubling: superlinear, so it holds only a count at its own N: --ops 100, not 50"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gates, err := Check([]Cost{c.c}, &Baseline{File: "base.json", Costs: []Cost{c.base}}, 5, -1)
			if c.missingWant != "" {
				var me *MissingError
				if len(gates) != 0 || !errors.As(err, &me) || !strings.Contains(err.Error(), c.missingWant) {
					t.Errorf("gates %+v, error %v; want no gate and a *MissingError with %q", gates, err, c.missingWant)
				}
				if err := (&Baseline{File: "base.json", Costs: []Cost{c.base}}).Holds("op", "valgrind", c.c.Ops); err == nil {
					t.Error("Holds, before counting, found the entry usable")
				}
				return
			}
			if err != nil || len(gates) != 1 {
				t.Fatalf("gates %+v, error %v; want one gate", gates, err)
			}
			g := gates[0]
			if g.Failed != c.failed || g.Value != c.value || math.Abs(g.Limit-c.lim) > 1e-9 || !strings.Contains(g.Message, c.message) {
				t.Errorf("%+v; want failed %v, value %v, limit %v, a message with %q", g, c.failed, c.value, c.lim, c.message)
			}
		})
	}
	allocs := Cost{Name: "op", Ops: 100, AllocationsPerOp: 3, AllocationSlopes: [2]float64{2, 4}, Source: "valgrind"}
	allocs.Growth = growing([2]float64{}, allocs.AllocationSlopes, [2]float64{})
	g, err := Check([]Cost{allocs}, nil, 5, 3)
	if err != nil || len(g) != 1 || !g[0].Failed || g[0].Value != 4 || !strings.Contains(g[0].Message, "its allocations grow: 2.00 → 4.00 per op") {
		t.Errorf("allocations growing from 2 to 4 per op under a ceiling of 3: %+v, %v", g, err)
	}
}

// The repository's own gates (test.sh) hold their costs against the
// committed baselines: those must have the entries, or the gates would
// stop the build.
func TestRepoBaselinesHoldTheirGates(t *testing.T) {
	cases := []struct {
		file, name, source string
		ops                int
	}{
		{"../bench/cost-baseline.json", "http-request", "valgrind", 2000},
		{"../bench/allocs-baseline.json", "BenchmarkDo", "go-bench", 0},
	}
	for _, c := range cases {
		b, err := ReadBaseline(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Holds(c.name, c.source, c.ops); err != nil {
			t.Errorf("%s: %v", c.file, err)
		}
	}
}

func TestReadBaselineRejects(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, content, want string }{
		{"results.json", `{"schema": "tandem.results/v1", "costs": []}`, `not a tandem.cost/v1 file (schema "tandem.results/v1")`},
		{"garbage.json", `{"schema": `, "not a tandem.cost/v1 file: unexpected end of JSON input"},
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadBaseline(p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
	if _, err := ReadBaseline(filepath.Join(dir, "none.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// drift.c changes one figure of an operation from its seventh run on (the
// run of 4N), so Measure's second slope disagrees with its first in that
// figure only: the cost must name it.
func TestMeasureNamesTheInexactFigure(t *testing.T) {
	v := valgrind(t)
	cases := []struct {
		name    string
		defines []string
		want    []string
	}{
		{"steady", nil, nil},
		{"more work", []string{"-DLATER_WORK=25000"}, []string{"instructions"}},
		{"more, smaller blocks", []string{"-DLATER_BLOCKS=4", "-DLATER_SIZE=48"}, []string{"allocations"}},
		{"bigger blocks", []string{"-DLATER_SIZE=128"}, []string{"bytes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := cc(t, "testdata/drift.c", c.defines...)
			runs := filepath.Join(t.TempDir(), "runs")
			got, err := v.Measure(context.Background(), "drift", []string{bin, "{ops}", runs}, 100)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Inexact, c.want) || got.Exact != (len(c.want) == 0) {
				t.Errorf("inexact %q, exact %v; want %q (instruction slopes %v, allocation slopes %v, bytes %v)",
					got.Inexact, got.Exact, c.want, got.InstructionSlopes, got.AllocationSlopes, got.BytesPerOp)
			}
			var b strings.Builder
			if err := Text(&b, &Report{Costs: []Cost{got}}); err != nil {
				t.Fatal(err)
			}
			for _, f := range c.want {
				if !strings.Contains(b.String(), "no: "+f) {
					t.Errorf("the report does not name %s:\n%s", f, b.String())
				}
			}
		})
	}
}

// Several runs of a Go benchmark must agree in allocations and in bytes
// per op; the cost names those that do not.
func TestFromBenchNamesTheInexactFigure(t *testing.T) {
	cases := []struct {
		name, out string
		want      []string
	}{
		{"agree", "BenchmarkA-2 100 5 ns/op 64 B/op 1 allocs/op\nBenchmarkA-2 200 5 ns/op 64 B/op 1 allocs/op\n", nil},
		{"allocations", "BenchmarkA-2 100 5 ns/op 64 B/op 1 allocs/op\nBenchmarkA-2 200 5 ns/op 64 B/op 2 allocs/op\n", []string{"allocations"}},
		{"bytes", "BenchmarkA-2 100 5 ns/op 64 B/op 1 allocs/op\nBenchmarkA-2 200 5 ns/op 72 B/op 1 allocs/op\n", []string{"bytes"}},
		{"both, over three runs", "BenchmarkA-2 100 5 ns/op 64 B/op 1 allocs/op\nBenchmarkA-2 200 5 ns/op 72 B/op 1 allocs/op\n" +
			"BenchmarkA-2 200 5 ns/op 80 B/op 2 allocs/op\n", []string{"bytes", "allocations"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			costs, err := FromBench("x", strings.NewReader(c.out))
			if err != nil || len(costs) != 1 {
				t.Fatalf("%+v, %v", costs, err)
			}
			if got := costs[0]; !slices.Equal(got.Inexact, c.want) || got.Exact != (len(c.want) == 0) || got.AllocationsPerOp != 1 || got.BytesPerOp != 64 {
				t.Errorf("%+v; want inexact %q and the first run's figures", got, c.want)
			}
		})
	}
}

// The report's exact column names the figures that disagree, not a bare
// "no" with the instruction slopes whatever disagreed.
func TestTextExactColumn(t *testing.T) {
	cases := []struct {
		name string
		c    Cost
		want string
	}{
		{"exact", Cost{Exact: true, Source: "valgrind"}, "yes"},
		{"allocations", Cost{Inexact: []string{"allocations"}, InstructionSlopes: [2]float64{1900, 1901}, AllocationSlopes: [2]float64{3, 4}, Source: "valgrind"},
			"no: allocations (slopes 3, 4)"},
		{"instructions and bytes", Cost{Inexact: []string{"instructions", "bytes"}, InstructionSlopes: [2]float64{1900, 2375}, Source: "valgrind"},
			"no: instructions (slopes 1900.0, 2375.0), bytes"},
		{"go benchmark", Cost{Inexact: []string{"bytes"}, Source: "go-bench"}, "no: bytes"},
		{"written before inexact was recorded", Cost{Source: "valgrind"}, "no"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.c.Name = "cost"
			var b strings.Builder
			if err := Text(&b, &Report{Costs: []Cost{c.c}}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(b.String()), "\n")
			if got := lines[len(lines)-1]; !strings.HasSuffix(got, "  "+c.want) {
				t.Errorf("%q; want the exact column %q", got, c.want)
			}
		})
	}
}

// A study's results.json carries Inexact and Growth: the schema lists them,
// their figures and shapes.
func TestInexactInResultsSchema(t *testing.T) {
	r := results.New()
	r.Tool.Name = "tandem"
	r.Costs = []results.Cost{{Name: "c", Ops: 10, Inexact: []string{"instructions", "allocations", "bytes"}, Source: "valgrind",
		Growth: []results.Growth{{Figure: "instructions", Slopes: [2]float64{10, 20}, PerDoubling: 2, Shape: results.Superlinear}}}}
	data, err := results.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Validate(data); err != nil {
		t.Fatalf("a cost with inexact figures does not validate: %v", err)
	}
	for _, c := range []struct{ from, to, what string }{
		{`"bytes"`, `"time"`, "an inexact figure"},
		{`"superlinear"`, `"cubic"`, "a growth shape"},
	} {
		bad := strings.Replace(string(data), c.from, c.to, 1)
		if bad == string(data) {
			t.Fatalf("replacement of %s did not apply", c.from)
		}
		if err := results.Validate([]byte(bad)); err == nil {
			t.Errorf("%s the schema does not list validated", c.what)
		}
	}
}

// Failed joins the failed gates' messages, then what is missing; without
// a failed gate it is nil, whatever is missing.
func TestFailed(t *testing.T) {
	ok := Gate{Cost: "a", Message: "a: fine"}
	bad := Gate{Cost: "b", Failed: true, Message: "b: rose"}
	worse := Gate{Cost: "c", Failed: true, Message: "c: over the ceiling"}
	missing := errors.New(`baseline x.json has no entry "d"`)
	for _, c := range []struct {
		name    string
		gates   []Gate
		missing error
		want    string
	}{
		{"none", nil, nil, ""},
		{"all pass", []Gate{ok}, nil, ""},
		{"all pass, one missing", []Gate{ok}, missing, ""},
		{"one fails", []Gate{ok, bad}, nil, "b: rose"},
		{"two fail, one missing", []Gate{bad, ok, worse}, missing, `b: rose; c: over the ceiling; baseline x.json has no entry "d"`},
	} {
		err := Failed(c.gates, c.missing)
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
}

// Collect reads Go benchmark output from a file, or stdin for "-",
// naming either in its errors; a command must be one that can scale, and
// its cost must have an entry in the baseline before it is counted (none
// of these cases runs valgrind).
func TestCollect(t *testing.T) {
	data, err := os.ReadFile("testdata/bench.txt")
	if err != nil {
		t.Fatal(err)
	}
	base := &Baseline{File: "base.json", Costs: []Cost{{Name: "decode", Ops: 100, InstructionsPerOp: 100, Source: "valgrind"}}}
	for _, c := range []struct {
		name  string
		src   Source
		base  *Baseline
		costs int
		err   string
	}{
		{"a bench file", Source{Bench: "testdata/bench.txt"}, nil, 2, ""},
		{"bench output on stdin", Source{Bench: "-", Stdin: strings.NewReader(string(data))}, nil, 2, ""},
		{"no benchmarks on stdin", Source{Bench: "-", Stdin: strings.NewReader("PASS\n")}, nil, 0, "-: no benchmark results"},
		{"no bench file", Source{Bench: "testdata/none.txt"}, nil, 0, "open testdata/none.txt"},
		{"bench and a command", Source{Bench: "-", Command: []string{"echo"}}, nil, 0, "--bench reads benchmark output; give no command"},
		{"nothing", Source{Ops: 10}, nil, 0, "no command: tandem cost -- CMD ARGS…"},
		{"no ops", Source{Command: []string{"echo", "{ops}"}}, nil, 0, "--ops 0: want at least 1"},
		{"no {ops}", Source{Command: []string{"echo", "hi"}, Ops: 10}, nil, 0, "the command has no {ops}"},
		{"no entry, unnamed", Source{Command: []string{"echo", "{ops}"}, Ops: 10}, base, 0, `has no entry "echo {ops}"; it holds: decode (--name names the cost)`},
		{"no entry", Source{Command: []string{"echo", "{ops}"}, Ops: 10, Name: "encode"}, base, 0, `has no entry "encode"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Collect(context.Background(), c.src, c.base)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("error %v; want %q", err, c.err)
				}
				return
			}
			if err != nil || len(rep.Costs) != c.costs || rep.Schema != Schema || rep.Gates != nil {
				t.Errorf("%+v, %v; want %d costs and no gates yet", rep, err, c.costs)
			}
		})
	}
}
