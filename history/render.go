package history

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/stats"
)

// FormatValue prints a point's value in its unit: a duration for ns, a
// percentage for a share, else the number and the unit.
func FormatValue(v float64, unit string) string {
	switch unit {
	case "ns":
		return human.Duration(v)
	case "share":
		return stats.Percent(v)
	}
	return human.Number(v) + " " + unit
}

func changeText(r GateRow) string {
	switch r.State {
	case New, Missing:
		return "–"
	}
	if math.IsInf(r.Change, 0) {
		return "from 0"
	}
	word := "worse"
	if r.Change < 0 {
		word = "better"
	}
	return stats.Percent(math.Abs(r.Change)) + " " + word
}

func pText(r GateRow) string {
	if r.BaseRounds < MinRounds || r.HeadRounds < MinRounds {
		return "–"
	}
	return fmt.Sprintf("%.2g", r.P)
}

// outcome is the gate's first line.
func (g Gate) outcome() string {
	if g.Failed {
		return "FAIL: " + strings.Join(g.Reasons, "; ")
	}
	count := map[string]int{}
	for _, r := range g.Rows {
		count[r.State]++
	}
	var parts []string
	for _, s := range []string{Regressed, Improved, Unchanged, LowConfidence, NotComparable, New, Missing} {
		if count[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
		}
	}
	if len(g.BaseRuns) == 0 {
		return "pass, without a baseline"
	}
	return "pass: " + strings.Join(parts, ", ")
}

// Text writes the gate for a terminal.
func (g Gate) Text(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "gate against %s", g.Baseline)
	if len(g.BaseRuns) > 0 {
		fmt.Fprintf(&b, " (%d run%s, newest %.12s)", len(g.BaseRuns), map[bool]string{true: "", false: "s"}[len(g.BaseRuns) == 1], g.BaseRuns[0])
	}
	fmt.Fprintf(&b, ": %s\n", g.outcome())
	for _, wn := range g.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wn)
	}
	for _, r := range g.Rows {
		line := fmt.Sprintf("%-16s %s: %s → %s (%s, p %s)", r.State, r.Series, FormatValue(r.Base, r.Unit), FormatValue(r.Head, r.Unit), changeText(r), pText(r))
		if r.Note != "" {
			line += "; " + r.Note
		}
		b.WriteString(line + "\n")
	}
	_, err := io.WriteString(w, human.Printable(b.String()))
	return err
}

// Markdown writes the gate for a CI job's summary.
func (g Gate) Markdown(w io.Writer) error {
	esc := func(s string) string {
		return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ").Replace(human.Printable(s))
	}
	var b strings.Builder
	verdict := "passed"
	if g.Failed {
		verdict = "**failed**"
	}
	fmt.Fprintf(&b, "## tandem history gate: %s\n\nagainst %s", verdict, esc(g.Baseline))
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
	if len(g.Rows) > 0 {
		b.WriteString("\n| series | state | base | head | change | p | note |\n|---|---|---|---|---|---|---|\n")
		for _, r := range g.Rows {
			state := r.State
			if state == Regressed {
				state = "**regressed**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", esc(r.Series.String()), state, FormatValue(r.Base, r.Unit),
				FormatValue(r.Head, r.Unit), changeText(r), pText(r), esc(r.Note))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSON writes the gate as indented JSON.
func (g Gate) JSON(w io.Writer) error {
	if g.Rows == nil {
		g.Rows = []GateRow{}
	}
	for i := range g.Rows {
		if math.IsInf(g.Rows[i].Change, 0) {
			g.Rows[i].Change = 0 // JSON has no infinity; "from 0" has no ratio
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(g)
}
