package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
)

// resultsWith writes a results file whose one scenario has target a's
// rounds at the given headline values (latency, lower is better).
func resultsWith(t *testing.T, name string, values ...float64) string {
	t.Helper()
	r := results.New()
	r.Machine = results.Machine{CPUModel: "cpu", Cores: 2, Kernel: "6.1"}
	sc := results.Scenario{Name: "lat", Call: "ping", Metric: "latency_p50_ns", Direction: "lower", Unit: "request",
		Load: results.Load{Model: "closed", Concurrency: []int{1}}, Rounds: []results.Round{}, Comparisons: []results.Comparison{}}
	for i, v := range values {
		sc.Rounds = append(sc.Rounds, results.Round{Round: i + 1, Order: 1, Target: "a", Concurrency: 1, Headline: v})
	}
	sc.Summary = []results.Summary{{Target: "a", Concurrency: 1, N: len(values)}}
	r.Scenarios = append(r.Scenarios, sc)
	path := filepath.Join(t.TempDir(), name)
	if err := results.Write(path, r); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompare(t *testing.T) {
	base := resultsWith(t, "base.json", 100, 102, 101)
	cases := []struct {
		name    string
		head    []float64
		args    []string
		code    int
		verdict string
	}{
		{"identical", []float64{100, 102, 101}, nil, exitOK, "indistinguishable"},
		{"noise", []float64{101, 99, 103}, nil, exitOK, "indistinguishable"},
		{"faster", []float64{50, 51, 52}, nil, exitOK, "faster"},
		{"slower", []float64{150, 151, 149}, nil, exitCheckFailed, "slower"},
		{"slower within the allowance", []float64{150, 151, 149}, []string{"--max-regression", "60"}, exitOK, "slower"},
	}
	for _, c := range cases {
		head := resultsWith(t, "head.json", c.head...)
		code, out, stderr := tandem(t, append([]string{"compare", base, head, "--format", "json"}, c.args...)...)
		var got struct {
			Changes []struct {
				Verdict    string
				Regression bool
			}
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Changes) != 1 {
			t.Fatalf("%s: output %q (%v)", c.name, out, err)
		}
		if code != c.code || got.Changes[0].Verdict != c.verdict {
			t.Errorf("%s: exit %d, verdict %s (%s); want exit %d, %s", c.name, code, got.Changes[0].Verdict, stderr, c.code, c.verdict)
		}
	}
	head := resultsWith(t, "head.json", 150, 151, 149)
	code, out, _ := tandem(t, "compare", base, head)
	if code != exitCheckFailed || !strings.Contains(out, "lat a c=1: slower (head/base 1.49)  REGRESSION") {
		t.Errorf("text: exit %d, %q", code, out)
	}
	code, out, _ = tandem(t, "compare", base, resultsWith(t, "same.json", 100, 102, 101))
	if code != exitOK || strings.Contains(out, "%") || strings.Contains(out, "head/base") {
		t.Errorf("indistinguishable pair shows a number: %q", out)
	}
	if code, _, stderr := tandem(t, "compare", base, filepath.Join(t.TempDir(), "missing.json")); code != exitBadInput || !strings.Contains(stderr, "no such file") {
		t.Errorf("missing head: exit %d, %q", code, stderr)
	}
	code, out, _ = tandem(t, "compare", base, head, "--format", "md")
	if code != exitCheckFailed || !strings.Contains(out, "| lat | a | c=1 | **slower, regression** | 1.49 |") || !strings.Contains(out, "**regression** beyond 0 %") {
		t.Errorf("md, slower: exit %d\n%s", code, out)
	}
	code, out, _ = tandem(t, "compare", base, resultsWith(t, "same2.json", 100, 102, 101), "--format", "md")
	if code != exitOK || !strings.Contains(out, "| lat | a | c=1 | indistinguishable | – |") {
		t.Errorf("md, indistinguishable: exit %d\n%s", code, out)
	}
	if code, _, _ := tandem(t, "compare", base, head, "--format", "xml"); code != exitBadInput {
		t.Errorf("--format xml: exit %d; want 2", code)
	}
}

func TestCostCommand(t *testing.T) {
	bench := "../../cost/testdata/bench.txt"
	code, out, stderr := tandem(t, "cost", "--bench", bench, "--format", "json", "-o", filepath.Join(t.TempDir(), "c.json"))
	if code != exitOK || !strings.Contains(out, `"schema": "tandem.cost/v1"`) || !strings.Contains(out, `"BenchmarkParse/small"`) {
		t.Errorf("--bench: exit %d\n%s\n%s", code, out, stderr)
	}
	base := filepath.Join(t.TempDir(), "base.json")
	os.WriteFile(base, []byte(`{"schema":"tandem.cost/v1","costs":[{"name":"BenchmarkParse/small","allocations_per_op":11,"source":"go-bench"}],"gates":[]}`), 0o644)
	if code, out, _ := tandem(t, "cost", "--bench", bench, "--baseline", base); code != exitCheckFailed || !strings.Contains(out, "FAILED") {
		t.Errorf("allocations rose: exit %d\n%s", code, out)
	}
	if code, _, _ := tandem(t, "cost", "--bench", bench, "--max-allocs", "400"); code != exitOK {
		t.Errorf("under the ceiling: exit %d", code)
	}
	for _, args := range [][]string{{"cost"}, {"cost", "--", "prog", "--n", "5"}, {"cost", "--bench", "missing.txt"}, {"cost", "--bench", bench, "--baseline", bench}} {
		if code, _, stderr := tandem(t, args...); code != exitBadInput || stderr == "" {
			t.Errorf("%v: exit %d, %q; want 2 with a message", args, code, stderr)
		}
	}
}
