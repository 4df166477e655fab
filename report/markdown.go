package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
)

// mdEscape makes a string safe in a GitHub table cell: it cannot end the
// cell, start markup or raw HTML.
func mdEscape(s string) string {
	r := strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;", "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`)
	return r.Replace(s)
}

// Markdown writes the results as GitHub-flavoured Markdown, for CI job
// summaries and pull requests.
func Markdown(w io.Writer, r *results.Results) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", mdEscape(r.Study.Name))
	if r.Study.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", mdEscape(r.Study.Description))
	}
	if r.Interrupted {
		b.WriteString("> **Interrupted**: the run was cancelled; these are the measurements made before.\n\n")
	}
	for _, t := range tables(r, shortDiffRows) {
		fmt.Fprintf(&b, "## %s\n\n", mdEscape(t.Title))
		if t.Note != "" {
			fmt.Fprintf(&b, "%s\n\n", mdEscape(t.Note))
		}
		cells := func(row []string) {
			b.WriteString("|")
			for _, c := range row {
				b.WriteString(" " + mdEscape(c) + " |")
			}
			b.WriteString("\n")
		}
		cells(t.Header)
		b.WriteString(strings.Repeat("|---", len(t.Header)) + "|\n")
		for _, row := range t.Rows {
			cells(row)
		}
		b.WriteString("\n")
	}
	if line := familyLine(r.Family); line != "" {
		fmt.Fprintf(&b, "%s\n\n", mdEscape(line))
	}
	for _, t := range r.Targets {
		if t.Error != "" {
			fence := strings.Repeat("`", 3)
			fmt.Fprintf(&b, "**target %s failed**\n\n%s\n%s\n%s\n\n", mdEscape(t.Name), fence, strings.ReplaceAll(t.Error, fence, strings.Repeat("'", 3)), fence)
		}
	}
	if len(r.Findings) > 0 {
		b.WriteString("## Findings\n\n")
		for _, f := range findings(r.Findings) {
			fmt.Fprintf(&b, "- **%s**: %s\n", mdEscape(f.ID), mdEscape(f.Summary))
			for _, ev := range f.Evidence {
				fmt.Fprintf(&b, "  - %s: %s\n", mdEscape(ev.Key), mdEscape(ev.Value))
			}
		}
		b.WriteString("\n")
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "- warning: %s\n", mdEscape(wn))
	}
	fmt.Fprintf(&b, "\n<sub>%s · tandem %s · study sha256 %s</sub>\n", mdEscape(machineLine(r)), mdEscape(r.Tool.Version), r.Study.ConfigSHA256)
	_, err := io.WriteString(w, human.Printable(b.String()))
	return err
}
