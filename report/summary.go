package report

import (
	"fmt"
	"strings"

	"github.com/tandem-bench/tandem/results"
)

// findingGroup is the findings of one kind on one target: the scenarios
// they came from and the first one's summary (one stall found in six
// scenarios is one finding to read, not six).
type findingGroup struct {
	ID, Target, Summary string
	Scenarios           []string
	// First is the index of the first finding of the group.
	First int
}

// groupFindings groups findings by kind and target, in order of first
// appearance.
func groupFindings(fs []results.Finding) []findingGroup {
	var out []findingGroup
	at := map[[2]string]int{}
	for i, f := range fs {
		k := [2]string{f.ID, f.Target}
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, findingGroup{ID: f.ID, Target: f.Target, Summary: f.Summary, First: i})
		}
		if f.Scenario != "" {
			out[j].Scenarios = append(out[j].Scenarios, f.Scenario)
		}
	}
	return out
}

// head names the group: its kind, target and scenarios.
func (g findingGroup) head() string {
	h := g.ID
	if g.Target != "" {
		h += " on " + g.Target
	}
	switch n := len(g.Scenarios); {
	case n == 1:
		h += " (" + g.Scenarios[0] + ")"
	case n > 1:
		h += fmt.Sprintf(" (%d scenarios: %s)", n, strings.Join(g.Scenarios, ", "))
	}
	return h
}

// writeSummary ends the terminal report with what a reader came for: one
// line per comparison, the compatibility tests in one line, sweeps'
// knees, findings grouped, costs, and what weakens the numbers; each line
// wrapped to width (0: no limit).
func writeSummary(b *strings.Builder, r *results.Results, color bool, width int) {
	g := newGlance(r)
	var lines []string
	add := func(ms []mark, prefix string, paint bool) {
		for _, m := range ms {
			c := ""
			if paint && color {
				c = m.Tone.ansi()
			}
			for _, l := range wrapLine(prefix+m.Head+": ", m.Text, width) {
				if c != "" {
					l = c + l + reset
				}
				lines = append(lines, l)
			}
		}
	}
	add(g.Verdicts, "", true)
	add(g.Compat, "compat ", false)
	add(g.Sweeps, "sweep ", false)
	add(g.Findings, "finding ", false)
	add(g.Costs, "cost ", false)
	for _, t := range g.Trust {
		lines = append(lines, wrapLine("note: ", t, width)...)
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\nSummary\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
}

// wrapLine writes head then text, wrapped at spaces to width (0: one
// line), continuation lines indented by two.
func wrapLine(head, text string, width int) []string {
	s := head + text
	if width <= 0 {
		return []string{s}
	}
	out := wrap(s, max(width-2, 20), 1<<20)
	for i := 1; i < len(out); i++ {
		out[i] = "  " + out[i]
	}
	return out
}
