package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
)

// Hostile strings from a study or a target's output reach no terminal or
// text report as control characters.
func TestReportsCarryNoControlCharacters(t *testing.T) {
	r := fixture(t)
	r.Study.Name = "evil\x1b]0;title\x07\x1b[2J"
	r.Warnings = append(r.Warnings, "carriage\rreturn")
	r.Targets[0].Error = "exited; last output:\n    \x1b[31mred"
	r.Scenarios[0].Name = "scen\x1b[Kario"
	for _, f := range []struct {
		name   string
		render func(*bytes.Buffer, *results.Results) error
	}{
		{"text", func(b *bytes.Buffer, r *results.Results) error { return Text(b, r) }},
		{"md", func(b *bytes.Buffer, r *results.Results) error { return Markdown(b, r) }},
	} {
		var b bytes.Buffer
		if err := f.render(&b, r); err != nil {
			t.Fatal(err)
		}
		if i := strings.IndexAny(b.String(), "\x1b\r\x07"); i >= 0 {
			t.Errorf("%s: a control character at byte %d: %q", f.name, i, b.String()[max(0, i-20):min(b.Len(), i+20)])
		}
		if !strings.Contains(b.String(), `evil\x1b`) {
			t.Errorf("%s: the study's name is not shown escaped", f.name)
		}
	}
}
