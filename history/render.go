package history

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/verdict"
)

// FormatValue prints a point's value in its unit: a duration for ns, a
// percentage for a share, else the number and the unit.
func FormatValue(v float64, unit string) string {
	switch unit {
	case "ns":
		return human.Duration(v)
	case "share":
		return stats.Percent(v)
	case "bytes":
		return human.Bytes(int64(v))
	}
	return human.Number(v) + " " + unit
}

// outcome is the gate's first line.
func (g Gate) outcome() string {
	if g.Failed {
		return "FAIL: " + strings.Join(g.Reasons, "; ")
	}
	if len(g.BaseRuns) == 0 {
		return "pass, without a baseline"
	}
	count := map[stats.Verdict]int{}
	var order []stats.Verdict
	for _, ch := range g.Changes {
		if count[ch.Verdict] == 0 {
			order = append(order, ch.Verdict)
		}
		count[ch.Verdict]++
	}
	var parts []string
	for _, v := range order {
		parts = append(parts, fmt.Sprintf("%d %s", count[v], v))
	}
	return "pass: " + strings.Join(parts, ", ")
}

// TextHead writes the gate's outcome and warnings for a terminal; its
// rows are a comparison's (report.ComparisonRows).
func (g Gate) TextHead(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "gate against %s", g.Baseline)
	if len(g.BaseRuns) > 0 {
		fmt.Fprintf(&b, " (%d run%s, newest %.12s)", len(g.BaseRuns), map[bool]string{true: "", false: "s"}[len(g.BaseRuns) == 1], g.BaseRuns[0])
	}
	fmt.Fprintf(&b, ": %s\n", g.outcome())
	for _, wn := range g.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wn)
	}
	_, err := io.WriteString(w, human.Printable(b.String()))
	return err
}

// MarkdownHead writes the gate's outcome, reasons and warnings for a CI
// job's summary; its rows are a comparison's (report.ComparisonRows).
func (g Gate) MarkdownHead(w io.Writer) error {
	esc := func(s string) string {
		return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ").Replace(human.Printable(s))
	}
	var b strings.Builder
	outcome := "passed"
	if g.Failed {
		outcome = "**failed**"
	}
	fmt.Fprintf(&b, "## tandem history gate: %s\n\nagainst %s", outcome, esc(g.Baseline))
	if len(g.BaseRuns) > 0 {
		fmt.Fprintf(&b, " (newest run `%.12s`)", g.BaseRuns[0])
	}
	b.WriteString("\n\n")
	for _, r := range g.Reasons {
		fmt.Fprintf(&b, "- %s\n", esc(r))
	}
	for _, wn := range g.Warnings {
		fmt.Fprintf(&b, "> warning: %s\n\n", esc(wn))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// JSON writes the gate as indented JSON.
func (g Gate) JSON(w io.Writer) error {
	if g.Changes == nil {
		g.Changes = []verdict.Change{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(g)
}
