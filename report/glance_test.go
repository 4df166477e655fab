package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// The glance says each verdict in words and colours it by what it is: a
// run that was unhealthy is said to be so, never judged.
func TestGlanceVerdicts(t *testing.T) {
	for _, c := range []struct {
		name       string
		comparison results.Comparison
		class      string
		text       string
	}{
		{"slower", results.Comparison{Base: "a", Candidate: "b", Ratio: 2, Verdict: stats.Slower}, "slower", "b is 2.00× slower than a"},
		{"faster", results.Comparison{Base: "a", Candidate: "b", Ratio: 0.5, Verdict: stats.Faster}, "faster", "b is 2.00× faster than a"},
		{"indistinguishable", results.Comparison{Base: "a", Candidate: "b", Ratio: 1.01, Verdict: stats.Indistinguishable}, "indistinguishable", "b and a are indistinguishable"},
		{"errors", results.Comparison{Base: "a", Candidate: "b", Verdict: stats.Failing, Reason: "failing: 40.0 % of requests failed (http:503 ×400)"},
			"failing", "b is failing: 40.0 % of requests failed (http:503 ×400)"},
		{"busy generator", results.Comparison{Base: "a", Candidate: "b", Verdict: stats.Withheld, Reason: "client-bound: the generator used 97.0 %"},
			"withheld", "b vs a: verdict withheld (client-bound: the generator used 97.0 %)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &results.Results{Scenarios: []results.Scenario{{Name: "s", Direction: "lower", Load: results.Load{Model: "closed"},
				Summary:     []results.Summary{{Target: "a", Concurrency: 1}, {Target: "b", Concurrency: 1}},
				Comparisons: []results.Comparison{withLevel(c.comparison, 1)}}}}
			g := newGlance(r)
			if len(g.Verdicts) != 1 {
				t.Fatalf("%d verdict lines; want 1", len(g.Verdicts))
			}
			v := g.Verdicts[0]
			if v.Class != c.class || v.Text != c.text || v.Head != "s, 1 client" || v.Anchor != "scenario-1" {
				t.Errorf("glance line %+v; want class %q, text %q", v, c.class, c.text)
			}
		})
	}
}

func withLevel(c results.Comparison, level int) results.Comparison {
	c.Concurrency = level
	return c
}

// What weakens the numbers comes before them: an interruption, a failed
// target, a target on the generator's core, the run's warnings.
func TestGlanceTrust(t *testing.T) {
	r := &results.Results{Interrupted: true, Warnings: []string{"round 2 of b failed"},
		Machine: results.Machine{GeneratorCPUs: []int{0}},
		Targets: []results.Target{{Name: "a", CPUs: []int{1}}, {Name: "b", CPUs: []int{0, 1}, Error: "exit status 2\nstack"}}}
	g := newGlance(r)
	all := strings.Join(g.Trust, "\n")
	for _, want := range []string{"b shares CPUs [0] with the generator", "interrupted", "target b failed: exit status 2", "round 2 of b failed"} {
		if !strings.Contains(all, want) {
			t.Errorf("trust lines lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "a shares") || strings.Contains(all, "stack") {
		t.Errorf("trust lines blame a, or print a whole error:\n%s", all)
	}
	r = &results.Results{Machine: results.Machine{GeneratorCPUs: []int{0}}, Targets: []results.Target{{Name: "a", CPUs: []int{1}}}}
	if g := newGlance(r); len(g.Trust) != 0 || g.Pinning != "a on [1]" {
		t.Errorf("a clean, pinned run: trust %v, pinning %q; want none and where a ran", g.Trust, g.Pinning)
	}
}

// The compatibility line counts the answers as the table does, and fails
// only where agreement is required.
func TestGlanceCompat(t *testing.T) {
	sent := []results.Answer{{Target: "a"}, {Target: "b"}}
	c := &results.Compat{Reference: "a", Targets: []string{"a", "b"}, Cases: []results.Case{
		{Call: "get", Answers: sent, Agreement: "identical"},
		{Call: "get", Answers: sent, Agreement: "content differs", Differences: []results.Difference{{Target: "b"}}},
		{Call: "put", Answers: sent, Agreement: "status differs", Differences: []results.Difference{{Target: "b"}}},
	}, Matrix: []results.MatrixRow{{Call: "get", Target: "b", Counts: map[string]int{"identical": 1, "content differs": 1}},
		{Call: "put", Target: "b", Counts: map[string]int{"status differs": 1}}}}
	m := compatMark(c)
	if m.Text != "3 cases over 2 calls: 1 identical, 2 differ (content 1, status 1)" || m.Class != "withheld" {
		t.Errorf("report-only differences: %+v", m)
	}
	c.Failed = 1
	if m := compatMark(c); !strings.HasSuffix(m.Text, "; 1 fail where agreement is required") || m.Class != string(stats.Failing) {
		t.Errorf("a required agreement broken: %+v", m)
	}
	c = &results.Compat{Reference: "a", Cases: []results.Case{{Call: "get", Answers: sent, Agreement: "identical"}},
		Matrix: []results.MatrixRow{{Call: "get", Target: "b", Counts: map[string]int{"identical": 1}}}}
	if m := compatMark(c); m.Class != string(stats.Indistinguishable) || !strings.HasSuffix(m.Text, "1 identical, 0 differ") {
		t.Errorf("full agreement: %+v", m)
	}
}

// Answers that failed alike are not differences: the summary says how
// many are identical, differ, differ in their errors and failed alike,
// each the sum of its column of the Compatibility table (two candidates,
// so answers, not cases, are counted).
func TestCompatSummaryMatchesTable(t *testing.T) {
	sent := []results.Answer{{Target: "a"}, {Target: "b"}, {Target: "c"}}
	c := &results.Compat{Reference: "a", Targets: []string{"a", "b", "c"}, Cases: []results.Case{
		{Call: "get", Answers: sent, Agreement: "identical"},
		{Call: "get", Answers: sent, Agreement: "both http:400"},
		{Call: "get", Answers: sent, Agreement: "error differs", Differences: []results.Difference{{Target: "c", Path: "error.message"}}},
		{Call: "put", Answers: sent, Agreement: "both grpc:NOT_FOUND"},
		{Call: "put", Answers: sent, Agreement: "content differs", Differences: []results.Difference{{Target: "b", Path: "n"}}},
	}, Matrix: []results.MatrixRow{
		{Call: "get", Target: "b", Counts: map[string]int{"identical": 1, "both http:400": 2}},
		{Call: "get", Target: "c", Counts: map[string]int{"identical": 1, "both http:400": 1, "error differs": 1}},
		{Call: "put", Target: "b", Counts: map[string]int{"both grpc:NOT_FOUND": 1, "content differs": 1}},
		{Call: "put", Target: "c", Counts: map[string]int{"both grpc:NOT_FOUND": 1, "identical": 1}},
	}}
	m := compatMark(c)
	want := "5 cases over 2 calls, 10 answers of 2 candidates: 3 identical, 1 differ (content 1), 1 error differs, 5 both failed alike (2 grpc:NOT_FOUND, 3 http:400)"
	if m.Text != want || m.Class != "withheld" {
		t.Errorf("summary %+v; want %q, withheld", m, want)
	}
	tab := compatTables(c, shortDiffRows)[0]
	sums := map[string]int{}
	for _, row := range tab.Rows {
		for i, cell := range row[2 : len(row)-1] {
			n := 0
			fmt.Sscan(cell, &n) // "–" is 0; "5 (…)" is 5
			sums[tab.Header[2+i]] += n
		}
	}
	for col, words := range map[string]string{"identical": "identical", "content differs": "differ (content", "error differs": "error differs",
		"both failed alike": "both failed alike"} {
		if said := fmt.Sprintf("%d %s", sums[col], words); !strings.Contains(m.Text, said) || !strings.Contains(tab.Note, said) {
			t.Errorf("column %q sums to %d; the summary %q or the table's note %q does not say %q", col, sums[col], m.Text, tab.Note, said)
		}
	}
}

// Counted costs, sweeps and findings each get a line; a cost that could
// not be counted says so.
func TestGlanceCostsSweepsFindings(t *testing.T) {
	r := &results.Results{
		Costs: []results.Cost{{Name: "decode", Ops: 1000, InstructionsPerOp: 12345, AllocationsPerOp: 2, BytesPerOp: 64, Exact: true},
			{Name: "encode", Error: "valgrind: not found\nmore"}},
		Sweeps:   []results.Sweep{{Scenario: "grid", Target: "a", Saturation: []results.SaturationPoint{{Connections: 1, HighestOK: 100, LowestSaturated: 200}}}},
		Findings: []results.Finding{{ID: "stall", Target: "b", Scenario: "s", Summary: "b stalls 40 ms"}},
	}
	g := newGlance(r)
	if len(g.Costs) != 2 || !strings.HasPrefix(g.Costs[0].Text, "12,345 instructions, 2 allocations, 64 bytes per operation") ||
		g.Costs[1].Class != string(stats.Failing) || g.Costs[1].Text != "failed: valgrind: not found" {
		t.Errorf("costs %+v", g.Costs)
	}
	if len(g.Sweeps) != 1 || g.Sweeps[0].Text != "c=1 keeps up to 100/s per connection, saturates at 200/s" || g.Sweeps[0].Anchor != "sweep-1" {
		t.Errorf("sweeps %+v", g.Sweeps)
	}
	if len(g.Findings) != 1 || g.Findings[0].Head != "stall on b (s)" || g.Findings[0].Anchor != "finding-1" {
		t.Errorf("findings %+v", g.Findings)
	}
}
