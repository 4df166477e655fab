package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tandem-bench/tandem/results"
)

// sweepResults is one sweep whose c=2 row disagrees with itself: 50/s
// saturated, 200/s kept up.
func sweepResults() *results.Results {
	r := results.New()
	r.Study.Name = "sweep"
	r.Sweeps = []results.Sweep{{Scenario: "grid", Target: "a", Call: "get", Load: "batched", Confirm: "answer",
		Rule: "confirmed < 95 % of expected",
		Cells: []results.Cell{
			{Connections: 1, Rate: 50, DurationNs: 6e9, Expected: 250, Sent: 250, Confirmed: 250},
			{Connections: 1, Rate: 200, DurationNs: 6e9, Expected: 1000, Sent: 1000, Confirmed: 900, Saturated: true},
			{Connections: 2, Rate: 50, DurationNs: 6e9, Expected: 500, Sent: 500, Confirmed: 400, Saturated: true},
			{Connections: 2, Rate: 200, DurationNs: 6e9, Expected: 2000, Sent: 2000, Confirmed: 2000},
		},
		Saturation: []results.SaturationPoint{
			{Connections: 1, HighestOK: 50, LowestSaturated: 200, ThroughputAtBest: 100},
			{Connections: 2, HighestOK: 200, LowestSaturated: 50, ThroughputAtBest: 400},
		}}}
	return r
}

// The summary never says "keeps up to X, saturates at Y" with X ≥ Y: a
// grid that disagrees with itself is called not monotonic.
func TestSweepSummaryConsistent(t *testing.T) {
	note := sweepTables(sweepResults().Sweeps)[0].Note
	if !strings.Contains(note, "c=1 keeps up to 50/s per connection, saturates at 200/s") {
		t.Errorf("c=1: %s", note)
	}
	if !strings.Contains(note, "c=2 saturated at 50/s but kept up at 200/s per connection: not monotonic") {
		t.Errorf("c=2 is not called non-monotonic: %s", note)
	}
	up := regexp.MustCompile(`keeps up to ([0-9,.]+)/s per connection, saturates at ([0-9,.]+)/s`)
	for _, m := range up.FindAllStringSubmatch(note, -1) {
		if num(t, m[1]) >= num(t, m[2]) {
			t.Errorf("%q: keeps up at a rate it saturates below", m[0])
		}
	}
	if got := saturationText(results.SaturationPoint{Connections: 4, HighestOK: 100, LowestSaturated: 100}); !strings.Contains(got, "not monotonic") {
		t.Errorf("one rate both kept up and saturated: %s", got)
	}
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	var v float64
	for _, c := range strings.ReplaceAll(s, ",", "") {
		if c < '0' || c > '9' {
			t.Fatalf("not a whole rate: %q", s)
		}
		v = 10*v + float64(c-'0')
	}
	return v
}

// Every format prints the sweep's saturation rule.
func TestSweepRuleInEveryReport(t *testing.T) {
	r := sweepResults()
	for name, f := range map[string]func(*bytes.Buffer, *results.Results) error{
		"text":     func(b *bytes.Buffer, r *results.Results) error { return Text(b, r) },
		"markdown": func(b *bytes.Buffer, r *results.Results) error { return Markdown(b, r) },
		"html":     func(b *bytes.Buffer, r *results.Results) error { return HTML(b, r) },
	} {
		var b bytes.Buffer
		if err := f(&b, r); err != nil {
			t.Fatal(err)
		}
		if want := "saturated when confirmed &lt; 95 % of expected"; name != "text" && !strings.Contains(b.String(), want) ||
			name == "text" && !strings.Contains(b.String(), "saturated when confirmed < 95 % of expected") {
			t.Errorf("the %s report does not print the rule", name)
		}
	}
}

// A long verdict wraps onto continuation lines in the terminal table:
// its marks at the end stay visible.
func TestTextKeepsVerdictMarks(t *testing.T) {
	r := results.New()
	r.Study.Name = "marks"
	base, cand := "baseline-build-with-a-long-name", "candidate-build-with-a-long-name"
	r.Scenarios = []results.Scenario{{Name: "get", Call: "get", Direction: "lower", Unit: "request", Load: results.Load{Model: "closed"},
		Summary: []results.Summary{{Target: base, Concurrency: 1, N: 10, Best: 1e5, Median: 1.1e5, Worst: 1.2e5},
			{Target: cand, Concurrency: 1, N: 10, Best: 2e5, Median: 2.1e5, Worst: 2.2e5}},
		Comparisons: []results.Comparison{{Base: base, Candidate: cand, Concurrency: 1, Ratio: 2, Verdict: "slower", ServerBound: true,
			Paired: &results.Paired{Lo: 1.9, Hi: 2.1, Confidence: 0.95, SignP: 0.002, N: 10}}}}}
	for _, color := range []bool{false, true} {
		var b strings.Builder
		var err error
		if color {
			err = TextColor(&b, r)
		} else {
			err = Text(&b, r)
		}
		if err != nil {
			t.Fatal(err)
		}
		out := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(b.String(), "")
		flat := strings.Join(strings.Fields(out), " ")
		if !strings.Contains(flat, "server-bound") {
			t.Errorf("colour %v: the server-bound mark is lost:\n%s", color, out)
		}
		if !strings.Contains(flat, cand+" is 2.00× slower than "+base) {
			t.Errorf("colour %v: the verdict is not whole:\n%s", color, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasSuffix(strings.TrimSpace(l), "…") {
				t.Errorf("colour %v: a cell was cut: %q", color, l)
			}
		}
	}
}

// wrap breaks at spaces within the width, and keeps the end of a cell
// too long for its lines.
func TestTextWrap(t *testing.T) {
	long := strings.Repeat("word ", 100) + "[server-bound: round trips fill the run]"
	lines := wrap(long, maxCell, maxCellLines)
	if len(lines) != maxCellLines {
		t.Errorf("%d lines; want %d", len(lines), maxCellLines)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > maxCell {
			t.Errorf("line of %d runes: %q", n, l)
		}
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "…") || !strings.HasSuffix(last, "[server-bound: round trips fill the run]") {
		t.Errorf("last line %q; want the cell's end after …", last)
	}
	mid := strings.Repeat("word ", 20) + "[server-bound]"
	if got := strings.Join(wrap(mid, maxCell, maxCellLines), " "); got != mid {
		t.Errorf("wrapped and joined: %q; want %q", got, mid)
	}
	blob := strings.Repeat("x", 100)
	if got := wrap(blob, maxCell, maxCellLines); len(got) != 2 || got[0]+got[1] != blob {
		t.Errorf("a word longer than the width: %q", got)
	}
}
