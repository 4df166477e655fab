package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/internal/tooltest"
)

// tandemProcess runs tandem as a child process (the test binary, see
// TestMain) with stdin, as a pipeline feeds it.
func tandemProcess(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// A baseline without an entry for a cost is bad input (exit 2) that names
// the entries it does hold, on every path: a gate against nothing cannot
// fail. The repository's own gates (test.sh) hold against the committed
// baselines.
func TestCostGateNeedsBaselineEntry(t *testing.T) {
	const (
		bench    = "../../cost/testdata/bench.txt"
		allocs   = "../../bench/allocs-baseline.json"
		counts   = "../../bench/cost-baseline.json"
		benchDo  = "BenchmarkDo-2   \t 100000\t 12000 ns/op\t 0 B/op\t 0 allocs/op\n"
		benchDo2 = "BenchmarkDoMore-2   \t 100000\t 12000 ns/op\t 0 B/op\t 0 allocs/op\n"
	)
	data, err := os.ReadFile(bench)
	if err != nil {
		t.Fatal(err)
	}
	benchOut := string(data)
	dir := t.TempDir()
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"schema":"tandem.cost/v1","costs":[{"name":"BenchmarkOther","allocations_per_op":1,"source":"go-bench"},`+
		`{"name":"decode","instructions_per_op":100,"source":"valgrind"}],"gates":[]}`), 0o644)
	small := filepath.Join(dir, "small.json")
	os.WriteFile(small, []byte(`{"schema":"tandem.cost/v1","costs":[{"name":"BenchmarkParse/small","allocations_per_op":11,"source":"go-bench"}],"gates":[]}`), 0o644)
	quadratic := filepath.Join(dir, "quadratic.json")
	os.WriteFile(quadratic, []byte(`{"schema":"tandem.cost/v1","costs":[{"name":"quad","ops":100,"instructions_per_op":17969,"exact":false,`+
		`"inexact":["instructions"],"instruction_slopes":[11969,23969],"growth":[{"figure":"instructions","slopes":[11969,23969],`+
		`"per_doubling":2.0026,"shape":"superlinear"}],"source":"valgrind"}],"gates":[]}`), 0o644)
	results := filepath.Join(dir, "results.json")
	os.WriteFile(results, []byte(`{"schema":"tandem.results/v1","costs":[]}`), 0o644)
	// A command whose cost scales with {ops}; it is never counted here:
	// the missing entry is found before valgrind runs.
	loop := []string{"--", "sh", "-c", `i=0; while [ $i -lt $1 ]; do i=$((i+1)); done`, "sh", "{ops}"}

	cases := []struct {
		name       string
		stdin      string
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{"bench file, no entry", "", []string{"--bench", bench, "--baseline", other}, exitBadInput, "BenchmarkParse/small",
			`baseline ` + other + ` has no entries "BenchmarkParse/small", "BenchmarkParse/large"; it holds: BenchmarkOther, decode`},
		{"bench from stdin, no entry", benchOut, []string{"--bench", "-", "--baseline", other}, exitBadInput, "BenchmarkParse/large",
			`has no entries "BenchmarkParse/small", "BenchmarkParse/large"; it holds: BenchmarkOther, decode`},
		{"bench from stdin, json", benchOut, []string{"--bench", "-", "--baseline", other, "--format", "json"}, exitBadInput, `"gates": []`,
			`has no entries "BenchmarkParse/small", "BenchmarkParse/large"`},
		{"bench from stdin, one held and rising, one missing", benchOut, []string{"--bench", "-", "--baseline", small}, exitCheckFailed, "FAILED",
			`BenchmarkParse/small: 12 allocations per op against the baseline's 11 (may not rise); baseline ` + small + ` has no entry "BenchmarkParse/large"`},
		{"the repository's allocation gate", benchDo, []string{"--bench", "-", "--baseline", allocs}, exitOK,
			"ok: BenchmarkDo: 0 allocations per op against the baseline's 0 (may not rise)", ""},
		{"a benchmark the repository's baseline lacks", benchDo2, []string{"--bench", "-", "--baseline", allocs}, exitBadInput, "BenchmarkDoMore",
			`baseline ` + allocs + ` has no entry "BenchmarkDoMore"; it holds: BenchmarkDo`},
		{"command, no entry", "", append([]string{"--ops", "50", "--name", "http-requests", "--baseline", counts}, loop...), exitBadInput, "",
			`baseline ` + counts + ` has no entry "http-requests"; it holds: http-request (--name names the cost)`},
		{"command, unnamed", "", append([]string{"--ops", "50", "--baseline", counts}, loop...), exitBadInput, "",
			`has no entry "sh -c i=0; while`},
		{"command, the entry is a Go benchmark's", "", append([]string{"--ops", "50", "--name", "BenchmarkDo", "--baseline", allocs}, loop...), exitBadInput, "",
			`has entry "BenchmarkDo", but it cannot gate a valgrind count: it is a go-bench count, not valgrind; it holds: BenchmarkDo`},
		{"command, the entry grows with N and was counted at another", "", append([]string{"--ops", "50", "--name", "quad", "--baseline", quadratic}, loop...),
			exitBadInput, "", `has entry "quad", but it cannot gate a valgrind count: its instructions grow: 11,969 → 23,969 per op from 100→200 to 200→400 ops, ` +
				`about ×2.00 per doubling: superlinear, so it holds only a count at its own N: --ops 100, not 50`},
		{"not a cost report", benchOut, []string{"--bench", "-", "--baseline", results}, exitBadInput, "",
			`not a tandem.cost/v1 file (schema "tandem.results/v1")`},
		{"--max-increase without a baseline", benchOut, []string{"--bench", "-", "--max-increase", "3"}, exitBadInput, "",
			"--max-increase needs a --baseline"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := tandemProcess(t, c.stdin, append([]string{"cost"}, c.args...)...)
			if code != c.code || !strings.Contains(stdout, c.wantStdout) || !strings.Contains(stderr, c.wantStderr) {
				t.Errorf("tandem cost %s: exit %d; want %d with %q on stdout and %q on stderr\nstdout:\n%s\nstderr:\n%s",
					strings.Join(c.args, " "), code, c.code, c.wantStdout, c.wantStderr, stdout, stderr)
			}
		})
	}
}

// Counted under valgrind, a command held against a baseline of its own
// name gets its gate; the report it wrote (-o) is that baseline.
func TestCostGateCommandAgainstItsBaseline(t *testing.T) {
	t.Parallel() // child processes and waits; asserts outcomes, not speed
	tooltest.Need(t, "TANDEM_REQUIRE_VALGRIND", "valgrind")
	base := filepath.Join(t.TempDir(), "base.json")
	loop := []string{"--", "sh", "-c", `i=0; while [ $i -lt $1 ]; do i=$((i+1)); done`, "sh", "{ops}"}
	if code, out, stderr := tandem(t, append([]string{"cost", "--ops", "200", "--name", "loop", "-o", base}, loop...)...); code != exitOK {
		t.Fatalf("writing the baseline: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr := tandem(t, append([]string{"cost", "--ops", "200", "--name", "loop", "--baseline", base, "--max-increase", "50", "--format", "json"}, loop...)...)
	var rep struct {
		Gates []struct {
			Cost   string `json:"cost"`
			Failed bool   `json:"failed"`
		} `json:"gates"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Gates) != 1 || rep.Gates[0].Cost != "loop" || rep.Gates[0].Failed {
		t.Errorf("against its own baseline: exit %d, gates %+v\n%s\n%s", code, rep.Gates, out, stderr)
	}
}
