package report

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/runfixture"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/verdict"
)

var (
	eNotation = regexp.MustCompile(`\d[eE][+-]\d`) // as %g writes it: 1.235e+04
	scripts   = regexp.MustCompile(`(?s)<script.*?</script>`)
)

// visible is a report's text as a reader sees it: for a page, without its
// scripts and embedded data, entities decoded.
func visible(format, out string) string {
	if format == "html" {
		return html.UnescapeString(scripts.ReplaceAllString(out, ""))
	}
	return out
}

// A figure whole prints without decimals, a fractional one with three
// significant digits, both with thousands separators and never in
// e-notation: grid rates, search knees, allocations and bytes per
// operation, and a ratio of a thousand and more.
func TestFiguresInPlainNotation(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{20000, "20,000"}, {50, "50"}, {2, "2"}, {12345.6, "12,346"}, {0.25, "0.250"}, {12.5, "12.5"}, {1234567.25, "1,234,567"}} {
		if got := wholeOrSig(c.v); got != c.want {
			t.Errorf("wholeOrSig(%v) = %q; want %q", c.v, got, c.want)
		}
	}
	r := fixture(t)
	c := &r.Scenarios[1].Comparisons[0] // b slower than a
	c.Ratio = 1450.4
	c.Estimate = &stats.Estimate{Paired: true, N: 8, Rounds: 8, Ratio: 1450.4, Lo: 1234.5, Hi: 12345.6, Confidence: 0.99}
	r.Sweeps = []results.Sweep{{Scenario: "grid", Target: "a", Load: "open", Confirm: "answer", Rule: "confirmed < 95 % of expected",
		Cells: []results.Cell{
			{Connections: 1, Rate: 12345.6, DurationNs: 3e9, Expected: 24691, Sent: 24691, OK: 24691, Confirmed: 24691},
			{Connections: 2, Rate: 0.25, DurationNs: 9e9, Expected: 4, Sent: 4, OK: 4, Confirmed: 4},
		},
		Saturation: []results.SaturationPoint{{Connections: 1, HighestOK: 12345.6, LowestSaturated: 20000.5}},
		Search:     []results.SearchResult{{Connections: 4, Sustained: 15811.4, Saturated: 17000.25, Probes: 5, StopRule: "hi/lo ≤ 1.1"}},
	}}
	r.Costs = []results.Cost{{Name: "decode", Ops: 1000, InstructionsPerOp: 123456, AllocationsPerOp: 12345.6, BytesPerOp: 0.25, Exact: true}}
	for format, render := range map[string]func(*bytes.Buffer, *results.Results) error{
		"text": func(b *bytes.Buffer, r *results.Results) error { return Text(b, r) },
		"md":   func(b *bytes.Buffer, r *results.Results) error { return Markdown(b, r) },
		"html": func(b *bytes.Buffer, r *results.Results) error { return HTML(b, r) },
	} {
		var b bytes.Buffer
		if err := render(&b, r); err != nil {
			t.Fatal(err)
		}
		out := visible(format, b.String())
		for _, want := range []string{"1,450× slower", "1,235× … 12,346×", "12,346", "0.250", "20,001", "15,811", "17,000"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in\n%s", format, want, out)
			}
		}
		if m := eNotation.FindString(out); m != "" {
			t.Errorf("%s: e-notation %q in\n%s", format, m, out)
		}
	}
}

// A row whose scenario changed between the runs is not comparable: no
// percentage and no ratio on its row (its verdict and head/base cells),
// in any format.
func TestNotComparableHasNoNumber(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base := runfixture.Latency("s", at, 100, 101, 99, 100.5, 100.2)
	head := runfixture.Latency("s", at, 150, 151, 149, 150.5, 150.2)
	head.Scenarios[0].Load.Concurrency = []int{8}
	cmp, err := verdict.CompareRuns(base, head, verdict.Options{MaxRegression: 5})
	if err != nil || len(cmp.Changes) != 1 || cmp.Changes[0].Verdict != stats.NotComparable {
		t.Fatalf("%+v, %v", cmp.Changes, err)
	}
	number := regexp.MustCompile(`\d\s*(%|×)`)
	for _, format := range []string{"text", "md", "html"} {
		var b bytes.Buffer
		if err := Comparison(&b, format, cmp); err != nil {
			t.Fatal(err)
		}
		out := visible(format, b.String())
		var cells []string // the row's verdict and head/base
		switch format {
		case "text":
			_, after, _ := strings.Cut(out, "lat a c=1 (errors 0.0 % → 0.0 %): ")
			line, _, _ := strings.Cut(after, "\n")
			cells = []string{line}
		case "md":
			i := strings.Index(out, "| lat | a | c=1 |")
			row, _, _ := strings.Cut(out[max(i, 0):], "\n")
			if parts := strings.Split(row, " | "); len(parts) == 6 {
				cells = parts[3:5]
			}
		case "html":
			i := strings.Index(out, "<tr><td>a</td>")
			row, _, _ := strings.Cut(out[max(i, 0):], "</tr>")
			if parts := strings.Split(row, "</td><td>"); len(parts) == 8 {
				cells = parts[2:4]
				cells[0] = strings.TrimSuffix(strings.TrimPrefix(cells[0], `<div class="long">`), "</div>")
			}
		}
		if len(cells) == 0 || !strings.HasPrefix(strings.TrimPrefix(cells[0], "**"), "not comparable: the scenario changed between the runs: load ") {
			t.Errorf("%s: no not comparable row (%q) in\n%s", format, cells, out)
			continue
		}
		for _, c := range cells {
			if m := number.FindString(c); m != "" {
				t.Errorf("%s: the not comparable row shows %q: %q", format, m, c)
			}
		}
	}
}
