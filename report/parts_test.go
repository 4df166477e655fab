package report

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
)

// withPartsFixture makes the fixture's first scenario a mix (or a flow)
// of two parts, each a copy of it as its part scenario.
func withPartsFixture(t *testing.T, kind string) *results.Results {
	t.Helper()
	r := fixture(t)
	whole := r.Scenarios[0]
	whole.Name, whole.Call, whole.Kind = "rw", "", kind
	parts := make([]results.Scenario, 2)
	for k, call := range []string{"get", "put"} {
		p := r.Scenarios[0]
		p.Name, p.Call, p.Part = "rw/"+call, call, &results.Part{Of: "rw", Index: k}
		if kind == results.KindMix {
			p.Part.Weight, p.Part.Share = float64(90-80*k), 0.9-0.8*float64(k)
		}
		parts[k] = p
	}
	if kind == results.KindMix {
		whole.Picks = &results.ValuesDigest{Requests: 1200, SHA256: strings.Repeat("cd", 32)}
	}
	r.Scenarios = append([]results.Scenario{whole}, append(parts, r.Scenarios[1:]...)...)
	return r
}

// A mix's or a flow's table has a row per target for the whole and then
// for each part (a call with its share, a step by its number), each with
// its verdict; no part has a table of its own in the text and Markdown
// reports.
func TestPartRows(t *testing.T) {
	for _, c := range []struct {
		kind  string
		whole string
		parts []string
	}{
		{results.KindMix, "mix", []string{"get (90 %)", "put (10 %)"}},
		{results.KindFlow, "flow (pass)", []string{"1. get", "2. put"}},
	} {
		r := withPartsFixture(t, c.kind)
		targets := len(r.Scenarios[0].Summary)
		for name, render := range map[string]func(io.Writer, *results.Results) error{"text": Text, "md": Markdown} {
			var b bytes.Buffer
			if err := render(&b, r); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if strings.Contains(out, "Scenario rw/") {
				t.Errorf("%s %s: a part has a table of its own:\n%s", c.kind, name, out)
			}
			lines := strings.Split(out, "\n")
			for _, label := range append([]string{c.whole}, c.parts...) {
				rows := slices.DeleteFunc(slices.Clone(lines), func(l string) bool {
					return !strings.HasPrefix(strings.TrimLeft(l, "| "), label+" ")
				})
				if len(rows) != targets {
					t.Errorf("%s %s: %d rows of %q; want one per target (%d):\n%s", c.kind, name, len(rows), label, targets, out)
				}
			}
		}
	}
	var b bytes.Buffer
	if err := Text(&b, withPartsFixture(t, results.KindMix)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "the calls drawn by weight, the same sequence to every target (sha256 cdcdcdcdcdcd… over 1200 requests)") {
		t.Errorf("the mix's picks are not noted:\n%s", b.String())
	}
}
