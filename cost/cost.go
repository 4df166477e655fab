// Package cost counts what an operation costs instead of timing it:
// instructions (valgrind's callgrind) and heap allocations (DHAT) per
// operation, as the slopes between runs of N, 2N and 4N operations, exact
// only when the two agree (a cost per operation that does not change with
// N); and allocations per operation from Go benchmarks. Counts do not move
// with a shared machine's noise, so they can gate a build.
package cost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tandem-bench/tandem/results"
)

// Schema names the JSON that tandem cost writes.
const Schema = "tandem.cost/v1"

// Report is what tandem cost writes.
type Report struct {
	Schema string `json:"schema"`
	// Valgrind is the valgrind version used; Flags the tools' flags.
	Valgrind string   `json:"valgrind,omitempty"`
	Flags    []string `json:"flags,omitempty"`
	Costs    []Cost   `json:"costs"`
	Gates    []Gate   `json:"gates"`
}

// Cost is the counted cost of one operation (results.Cost, so that a
// study's results carry it too).
type Cost = results.Cost

// Gate is one check against a baseline or a ceiling.
type Gate struct {
	Cost    string  `json:"cost"`
	Check   string  `json:"check"`
	Base    float64 `json:"base,omitempty"`
	Value   float64 `json:"value"`
	Limit   float64 `json:"limit"`
	Failed  bool    `json:"failed"`
	Message string  `json:"message"`
}

// ErrNotScaling is a command whose cost does not grow with its operation
// count: it ignores {ops}, or does its work elsewhere.
var ErrNotScaling = errors.New("the cost does not scale with the operation count")

// Valgrind runs commands under valgrind's tools.
type Valgrind struct {
	Path    string
	Version string
	// Env is added to the measured command's environment.
	Env []string
	// Toggle, if set, counts instructions only inside functions matching
	// it (callgrind's --toggle-collect).
	Toggle string
}

// FindValgrind locates valgrind and its version.
func FindValgrind() (*Valgrind, error) {
	p, err := exec.LookPath("valgrind")
	if err != nil {
		return nil, fmt.Errorf("valgrind is not installed (Debian: apt-get install valgrind): %w", err)
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("valgrind --version: %w", err)
	}
	return &Valgrind{Path: p, Version: strings.TrimSpace(string(out))}, nil
}

// Flags are the tools' flags, for the report.
func (v *Valgrind) Flags() []string {
	f := []string{"--tool=callgrind", "--tool=dhat"}
	for _, t := range v.toggles() {
		f = append(f, "--toggle-collect="+t)
	}
	return append(f, v.Env...)
}

func (v *Valgrind) toggles() []string {
	if v.Toggle == "" {
		return nil
	}
	return strings.Split(v.Toggle, ",")
}

func (v *Valgrind) run(ctx context.Context, args, argv []string) error {
	cmd := exec.CommandContext(ctx, v.Path, append(args, argv...)...)
	cmd.Env = append(os.Environ(), v.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		var tail []string
		for _, l := range lines {
			if !strings.HasPrefix(l, "==") {
				tail = append(tail, l)
			}
		}
		if len(tail) > 5 {
			tail = tail[len(tail)-5:]
		}
		return fmt.Errorf("%s failed: %v; last output: %s", strings.Join(argv, " "), err, strings.Join(tail, " | "))
	}
	return nil
}

var totals = regexp.MustCompile(`(?m)^(?:totals|summary):\s+(\d+)`)

// Instructions counts the instructions a command executes (callgrind).
func (v *Valgrind) Instructions(ctx context.Context, argv []string) (int64, error) {
	dir, err := os.MkdirTemp("", "tandem-cost-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "callgrind.out")
	args := []string{"--tool=callgrind", "--callgrind-out-file=" + out}
	for _, t := range v.toggles() {
		args = append(args, "--toggle-collect="+t)
	}
	if err := v.run(ctx, args, argv); err != nil {
		return 0, err
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return 0, err
	}
	m := totals.FindSubmatch(data)
	if m == nil {
		return 0, errors.New("callgrind wrote no totals")
	}
	return strconv.ParseInt(string(m[1]), 10, 64)
}

// Heap counts the heap blocks a command allocates and their bytes (DHAT).
func (v *Valgrind) Heap(ctx context.Context, argv []string) (blocks, bytes int64, err error) {
	dir, err := os.MkdirTemp("", "tandem-cost-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "dhat.json")
	if err := v.run(ctx, []string{"--tool=dhat", "--dhat-out-file=" + out}, argv); err != nil {
		return 0, 0, err
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return 0, 0, err
	}
	var d struct {
		PPs []struct {
			TB  int64 `json:"tb"`
			TBK int64 `json:"tbk"`
		} `json:"pps"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return 0, 0, fmt.Errorf("DHAT output: %w", err)
	}
	for _, p := range d.PPs {
		blocks += p.TBK
		bytes += p.TB
	}
	return blocks, bytes, nil
}

// Argv replaces {ops} in every argument with n; a command without {ops}
// cannot scale and is an error.
func Argv(command []string, n int) ([]string, error) {
	out := make([]string, len(command))
	found := false
	for i, a := range command {
		found = found || strings.Contains(a, "{ops}")
		out[i] = strings.ReplaceAll(a, "{ops}", strconv.Itoa(n))
	}
	if !found {
		return nil, errors.New("the command has no {ops} for the operation count")
	}
	return out, nil
}

// Measure counts one command's cost: the cold run of 1 operation, then N,
// 2N and 4N operations, each under callgrind and DHAT. Each figure has two
// slopes, (X(2N) − X(N)) / N and (X(4N) − X(2N)) / 2N; its cost per
// operation is their mean, and the cost is exact when every figure's two
// agree within 1 %. A figure whose slopes do not agree is named in
// Inexact and described in Growth.
func (v *Valgrind) Measure(ctx context.Context, name string, command []string, n int) (Cost, error) {
	c := Cost{Name: name, Ops: n, Source: "valgrind"}
	if n < 1 || n > math.MaxInt32 {
		return c, fmt.Errorf("%d operations: want 1 to %d", n, math.MaxInt32)
	}
	type point struct{ ins, blocks, bytes int64 }
	at := func(ops int) (point, error) {
		argv, err := Argv(command, ops)
		if err != nil {
			return point{}, err
		}
		var p point
		if p.ins, err = v.Instructions(ctx, argv); err != nil {
			return point{}, err
		}
		if p.blocks, p.bytes, err = v.Heap(ctx, argv); err != nil {
			return point{}, err
		}
		return p, nil
	}
	cold, err := at(1)
	if err != nil {
		return c, err
	}
	c.ColdInstructions, c.ColdAllocations = cold.ins, cold.blocks
	var pts [3]point // N, 2N, 4N
	for i := range pts {
		if pts[i], err = at(n << i); err != nil {
			return c, err
		}
		if i == 1 {
			a, b := pts[0], pts[1]
			if d := b.ins - a.ins; d < max(int64(n), a.ins/1000) { // before the longest run
				return c, fmt.Errorf("%w: %d instructions for %d operations, %d for %d", ErrNotScaling, a.ins, n, b.ins, 2*n)
			}
		}
	}
	var bytesSlopes [2]float64
	for i := range 2 {
		a, b, d := pts[i], pts[i+1], float64(n<<i) // from n<<i to n<<(i+1) operations
		c.InstructionSlopes[i] = float64(b.ins-a.ins) / d
		c.AllocationSlopes[i] = float64(b.blocks-a.blocks) / d
		bytesSlopes[i] = float64(b.bytes-a.bytes) / d
	}
	c.InstructionsPerOp = (c.InstructionSlopes[0] + c.InstructionSlopes[1]) / 2
	c.AllocationsPerOp = (c.AllocationSlopes[0] + c.AllocationSlopes[1]) / 2
	c.BytesPerOp = (bytesSlopes[0] + bytesSlopes[1]) / 2
	c.Growth = growing(c.InstructionSlopes, c.AllocationSlopes, bytesSlopes)
	for _, g := range c.Growth {
		c.Inexact = append(c.Inexact, g.Figure)
	}
	c.Exact = len(c.Inexact) == 0
	return c, nil
}

// The figures that Cost.Inexact names.
const (
	figInstructions = "instructions"
	figAllocations  = "allocations"
	figBytes        = "bytes"
)

// growing describes the figures whose slopes from N to 2N and from 2N to
// 4N disagree by more than 1 %: nil when all agree.
func growing(ins, allocs, bytes [2]float64) []results.Growth {
	var out []results.Growth
	for _, f := range []struct {
		name   string
		slopes [2]float64
	}{{figInstructions, ins}, {figAllocations, allocs}, {figBytes, bytes}} {
		if agree(f.slopes) {
			continue
		}
		g := results.Growth{Figure: f.name, Slopes: f.slopes, Shape: results.Sublinear}
		if f.slopes[1] > f.slopes[0] {
			g.Shape = results.Superlinear
		}
		if f.slopes[0] > 0 && f.slopes[1] >= 0 {
			g.PerDoubling = f.slopes[1] / f.slopes[0]
		}
		out = append(out, g)
	}
	return out
}

// agree reports whether two measurements are within 1 % of each other.
func agree(s [2]float64) bool {
	m := math.Max(math.Abs(s[0]), math.Abs(s[1]))
	return m == 0 || math.Abs(s[0]-s[1]) <= 0.01*m
}
