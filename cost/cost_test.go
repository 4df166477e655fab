package cost

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/results"
)

// valgrind finds valgrind; the test command installs it (Debian) and sets
// TANDEM_REQUIRE_VALGRIND=1, so there its absence fails.
func valgrind(t *testing.T) *Valgrind {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs valgrind")
	}
	v, err := FindValgrind()
	if err != nil {
		tooltest.Missing(t, "TANDEM_REQUIRE_VALGRIND", err.Error())
	}
	return v
}

// cc compiles a purpose-built C program with gcc.
func cc(t *testing.T, src string, defines ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c"))
	args := append([]string{"-O1", "-o", out, src}, defines...)
	if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	return out
}

// alloc.c allocates exactly three 64-byte blocks per operation and keeps a
// pointer to each (24 bytes per operation in its array): 3 allocations and
// 216 bytes per operation, whatever N.
func TestMeasureExactAllocations(t *testing.T) {
	v := valgrind(t)
	bin := cc(t, "testdata/alloc.c", "-DWORK=100")
	c, err := v.Measure(context.Background(), "alloc", []string{bin, "{ops}"}, 500)
	if err != nil {
		t.Fatal(err)
	}
	if c.AllocationsPerOp != 3 || c.BytesPerOp != 216 || !c.Exact {
		t.Errorf("allocations %v, bytes %v per op, exact %v; want 3, 216, true", c.AllocationsPerOp, c.BytesPerOp, c.Exact)
	}
	if c.InstructionsPerOp < 100 || c.ColdInstructions <= 0 || c.ColdAllocations < 3 || c.Source != "valgrind" {
		t.Errorf("cost %+v", c)
	}
}

// A cost is exact only when its cost per operation is constant: the same
// from N to 2N as from 2N to 4N. quadratic.c's operation i does work in
// proportion to i, so its cost per operation doubles with N: not exact,
// its instructions named as growing about ×2 per doubling, superlinear;
// alloc.c's is constant: exact, with no growth.
func TestMeasureExactMeansConstant(t *testing.T) {
	v := valgrind(t)
	cases := []struct {
		name    string
		bin     string
		inexact []string
		lo, hi  float64 // the instructions' growth per doubling
	}{
		{"quadratic", cc(t, "testdata/quadratic.c"), []string{"instructions"}, 1.8, 2.05},
		{"linear", cc(t, "testdata/alloc.c", "-DWORK=100"), nil, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := v.Measure(context.Background(), c.name, []string{c.bin, "{ops}"}, 100)
			if err != nil {
				t.Fatal(err)
			}
			if got.Exact != (c.inexact == nil) || !slices.Equal(got.Inexact, c.inexact) {
				t.Fatalf("exact %v, inexact %q; want %v, %q (instruction slopes %v)", got.Exact, got.Inexact, c.inexact == nil, c.inexact, got.InstructionSlopes)
			}
			var b strings.Builder
			if err := Text(&b, &Report{Costs: []Cost{got}}); err != nil {
				t.Fatal(err)
			}
			if c.inexact == nil {
				if len(got.Growth) != 0 || !strings.HasSuffix(strings.TrimSpace(b.String()), "  yes") {
					t.Errorf("a constant cost with growth %+v:\n%s", got.Growth, b.String())
				}
				return
			}
			if len(got.Growth) != 1 {
				t.Fatalf("growth %+v; want the instructions'", got.Growth)
			}
			g := got.Growth[0]
			s := got.InstructionSlopes
			if g.Figure != "instructions" || g.Shape != results.Superlinear || g.Slopes != s || g.PerDoubling < c.lo || g.PerDoubling > c.hi ||
				math.Abs(g.PerDoubling-s[1]/s[0]) > 1e-9 {
				t.Errorf("growth %+v; want instructions, superlinear, the slopes %v, ×%.2f–%.2f per doubling", g, s, c.lo, c.hi)
			}
			want := fmt.Sprintf("no: instructions grow: %s → %s per op from 100→200 to 200→400 ops, about ×%.2f per doubling: superlinear",
				human.Number(s[0]), human.Number(s[1]), g.PerDoubling)
			if !strings.Contains(b.String(), want) {
				t.Errorf("the report does not say how it grows (%q):\n%s", want, b.String())
			}
		})
	}
}

// A variant that does about 10 % more work per operation fails a 5 % gate
// against the first one's baseline; the same program passes against its
// own.
func TestGateCatchesCostlierVariant(t *testing.T) {
	v := valgrind(t)
	base, err := v.Measure(context.Background(), "alloc", []string{cc(t, "testdata/alloc.c", "-DWORK=100"), "{ops}"}, 500)
	if err != nil {
		t.Fatal(err)
	}
	again, err := v.Measure(context.Background(), "alloc", []string{cc(t, "testdata/alloc.c", "-DWORK=100"), "{ops}"}, 500)
	if err != nil {
		t.Fatal(err)
	}
	costlier, err := v.Measure(context.Background(), "alloc", []string{cc(t, "testdata/alloc.c", "-DWORK=125"), "{ops}"}, 500)
	if err != nil {
		t.Fatal(err)
	}
	if growth := costlier.InstructionsPerOp/base.InstructionsPerOp - 1; growth < 0.08 || growth > 0.2 {
		t.Fatalf("the variant costs %+.1f %%; want about +10 %%", growth*100)
	}
	baseline := &Baseline{File: "base.json", Costs: []Cost{base}}
	if g, err := Check([]Cost{again}, baseline, 5, -1); err != nil || len(g) != 1 || g[0].Failed {
		t.Errorf("the same program against its baseline: %+v, %v", g, err)
	}
	g, err := Check([]Cost{costlier}, baseline, 5, -1)
	if err != nil || len(g) != 1 || !g[0].Failed || !strings.Contains(g[0].Message, "against the baseline") {
		t.Errorf("the costlier variant passed: %+v, %v", g, err)
	}
	if g, err := Check([]Cost{base}, nil, 5, 2); err != nil || len(g) != 1 || !g[0].Failed {
		t.Errorf("3 allocations per op under a ceiling of 2: %+v, %v", g, err)
	}
}

func TestNotScalingAndFailures(t *testing.T) {
	v := valgrind(t)
	_, err := v.Measure(context.Background(), "flat", []string{cc(t, "testdata/flat.c"), "{ops}"}, 100)
	if !errors.Is(err, ErrNotScaling) {
		t.Errorf("a program that ignores {ops}: %v", err)
	}
	if _, err := v.Measure(context.Background(), "false", []string{"false", "{ops}"}, 10); err == nil || !strings.Contains(err.Error(), "failed") {
		t.Errorf("a failing command: %v", err)
	}
	if _, err := Argv([]string{"prog", "--n", "5"}, 10); err == nil {
		t.Error("a command without {ops} was accepted")
	}
	if got, _ := Argv([]string{"prog", "--n={ops}"}, 7); got[1] != "--n=7" {
		t.Errorf("Argv = %v", got)
	}
}

func TestFromBench(t *testing.T) {
	f, err := os.Open("testdata/bench.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	costs, err := FromBench("bench.txt", f)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Cost{}
	for _, c := range costs {
		got[c.Name] = c
	}
	if c := got["BenchmarkParse/small"]; c.AllocationsPerOp != 12 || c.BytesPerOp != 1024 || !c.Exact || c.Source != "go-bench" {
		t.Errorf("BenchmarkParse/small: %+v", c)
	}
	if c := got["BenchmarkParse/large"]; c.Exact {
		t.Errorf("runs with different allocation counts were called exact: %+v", c)
	}
	base := &Baseline{File: "base.json", Costs: []Cost{{Name: "BenchmarkParse/small", AllocationsPerOp: 11, Source: "go-bench"}}}
	if g, err := Check(costs[:1], base, 0, -1); err != nil || len(g) != 1 || !g[0].Failed {
		t.Errorf("12 allocations against a baseline of 11: %+v, %v", g, err)
	}
	if _, err := FromBench("x", strings.NewReader("BenchmarkX 100 5 ns/op\n")); err == nil {
		t.Error("a result without -benchmem was accepted")
	}
	if _, err := FromBench("x", strings.NewReader("hello\n")); err == nil {
		t.Error("text without results was accepted")
	}
}

// Benchmark output comes from a file or a pipe: the reader never panics.
func FuzzFromBench(f *testing.F) {
	f.Add("BenchmarkA-2 100 5 ns/op 0 B/op 0 allocs/op\n")
	f.Add("goos: linux\nBenchmarkB/x=1-8 \t 3 \t 1e3 ns/op \t 12 B/op \t 1 allocs/op\n")
	f.Fuzz(func(t *testing.T, s string) {
		costs, err := FromBench("fuzz", strings.NewReader(s))
		if err == nil && len(costs) == 0 {
			t.Fatal("no error and no costs")
		}
	})
}
