package cost

import (
	"context"
	"errors"
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

// The repository's own gates (test.sh) hold their costs against the
// committed baselines: those must have the entries, or the gates would
// stop the build.
func TestRepoBaselinesHoldTheirGates(t *testing.T) {
	cases := []struct{ file, name, source string }{
		{"../bench/cost-baseline.json", "http-request", "valgrind"},
		{"../bench/allocs-baseline.json", "BenchmarkDo", "go-bench"},
	}
	for _, c := range cases {
		b, err := ReadBaseline(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Holds(c.name, c.source); err != nil {
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

// drift.c changes one figure of an operation from its seventh run on, so
// Measure's second pair of slopes disagrees with its first in that figure
// only: the cost must name it.
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

// A study's results.json carries Inexact: the schema lists it and its
// figures.
func TestInexactInResultsSchema(t *testing.T) {
	r := results.New()
	r.Tool.Name = "tandem"
	r.Costs = []results.Cost{{Name: "c", Ops: 10, Inexact: []string{"instructions", "allocations", "bytes"}, Source: "valgrind"}}
	data, err := results.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Validate(data); err != nil {
		t.Fatalf("a cost with inexact figures does not validate: %v", err)
	}
	bad := strings.Replace(string(data), `"bytes"`, `"time"`, 1)
	if bad == string(data) {
		t.Fatal("replacement did not apply")
	}
	if err := results.Validate([]byte(bad)); err == nil {
		t.Error("an inexact figure the schema does not list validated")
	}
}
