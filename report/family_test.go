package report

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/verdict"
)

// Every format of a run's report and of a comparison says how the
// verdicts' false alarms were held together: how many comparisons, α,
// each one's share and Holm's step-down; a run without a family (the
// spread rule) says nothing of it.
func TestFamilyLine(t *testing.T) {
	demo, err := results.Read("testdata/demo-results.json") // 12 planned, 10 judged
	if err != nil {
		t.Fatal(err)
	}
	spread := fixture(t) // written before families were recorded
	upgraded := results.Family{Method: results.FamilyHolm, Alpha: 0.05, Planned: 4, Size: 4, Upgraded: 1}
	cmp := verdict.Comparison{Family: upgraded, Policy: stats.DefaultPolicy(), MaxRegression: 5,
		Changes: []verdict.Change{{Scenario: "lat", Target: "a", Concurrency: 1, Verdict: stats.Indistinguishable}}}
	const (
		demoLine     = "verdicts: 10 comparisons (12 planned), the chance of any false alarm held at 0.0500 (each at 0.00417 first; Holm's step-down at the end)"
		upgradedLine = "verdicts: 4 comparisons, the chance of any false alarm held at 0.0500 (each at 0.0125 first; Holm's step-down at the end decided 1 more)"
	)
	renders := map[string]func(*bytes.Buffer, *results.Results) error{
		"text": func(b *bytes.Buffer, r *results.Results) error { return Text(b, r) },
		"md":   func(b *bytes.Buffer, r *results.Results) error { return Markdown(b, r) },
		"html": func(b *bytes.Buffer, r *results.Results) error { return HTML(b, r) },
	}
	for format, render := range renders {
		for _, c := range []struct {
			r    *results.Results
			want string
		}{{demo, demoLine}, {spread, ""}} {
			var b bytes.Buffer
			if err := render(&b, c.r); err != nil {
				t.Fatal(err)
			}
			out := html.UnescapeString(b.String())
			if c.want == "" && strings.Contains(out, "chance of any false alarm") {
				t.Errorf("%s: a run without a family states one:\n%s", format, out)
			}
			if c.want != "" && !strings.Contains(out, c.want) {
				t.Errorf("%s: no %q in\n%s", format, c.want, out)
			}
		}
		var b bytes.Buffer
		if err := Comparison(&b, format, cmp); err != nil {
			t.Fatal(err)
		}
		if out := html.UnescapeString(b.String()); !strings.Contains(out, upgradedLine) {
			t.Errorf("%s comparison: no %q in\n%s", format, upgradedLine, out)
		}
	}
}
