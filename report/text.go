package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
)

// Text writes the results as aligned terminal tables.
func Text(w io.Writer, r *results.Results) error { return text(w, r, false) }

// TextColor is Text with verdicts and saturated cells in colour, for a
// terminal (callers check for one, and for NO_COLOR).
func TextColor(w io.Writer, r *results.Results) error { return text(w, r, true) }

// ANSI colours of verdict words.
const (
	red, green, yellow, dim, reset = "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[2m", "\x1b[0m"
)

// colour picks the colour of a verdict or state cell by what it says ("" for
// none).
func colour(c string) string {
	switch {
	case strings.Contains(c, " slower") || strings.Contains(c, " is failing: ") || strings.HasPrefix(c, "SATURATED"):
		return red
	case strings.Contains(c, " faster"):
		return green
	case strings.Contains(c, "withheld") || strings.Contains(c, "inconclusive"):
		return yellow
	case strings.Contains(c, "indistinguishable") || strings.HasPrefix(c, "noise reference"):
		return dim
	}
	return ""
}

func text(w io.Writer, r *results.Results, color bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s\n", human.Printable(r.Study.Name), r.CreatedAt.Format("2006-01-02 15:04 UTC"))
	if r.Interrupted {
		b.WriteString("INTERRUPTED: the run was cancelled; what follows is what was measured before.\n")
	}
	for _, t := range tables(r, shortDiffRows) {
		writeTable(&b, t, color)
	}
	if line := familyLine(r.Family); line != "" {
		fmt.Fprintf(&b, "\n%s\n", line)
	}
	for _, t := range r.Targets {
		if t.Error != "" {
			fmt.Fprintf(&b, "\ntarget %s failed: %s\n", human.Printable(t.Name), human.Printable(t.Error))
		}
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\nfinding %s: %s\n", human.Printable(f.ID), human.Printable(f.Summary))
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "\nwarning: %s\n", human.Printable(wn))
	}
	fmt.Fprintf(&b, "\nmachine: %s\n", human.Printable(machineLine(r)))
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTable lays a table out in columns, under its title and note; a
// scenario's or sweep's verdicts in colour when color is set.
func writeTable(b *strings.Builder, t table, color bool) {
	fmt.Fprintf(b, "\n%s\n", t.Title)
	if t.Note != "" {
		fmt.Fprintf(b, "(%s)\n", t.Note)
	}
	// each cell as its lines: a long one wraps onto continuation lines
	rows := make([][][]string, len(t.Rows))
	for i, row := range t.Rows {
		rows[i] = make([][]string, len(row))
		for j, c := range row {
			rows[i][j] = wrap(c, maxCell, maxCellLines)
		}
	}
	widths := make([]int, len(t.Header))
	for i, c := range t.Header {
		widths[i] = utf8.RuneCountInString(c)
	}
	for _, row := range rows {
		for i, lines := range row {
			for _, l := range lines {
				widths[i] = max(widths[i], utf8.RuneCountInString(l))
			}
		}
	}
	verdicts := color && (strings.HasPrefix(t.Title, "Scenario ") || strings.HasPrefix(t.Title, "Sweep "))
	line := func(row []string, paint string) {
		var l strings.Builder
		for i, c := range row {
			if i == len(row)-1 {
				if paint != "" && c != "" {
					c = paint + c + reset
				}
				l.WriteString(c)
				break
			}
			l.WriteString(c + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	line(t.Header, "")
	for i, row := range rows {
		paint := ""
		if last := t.Rows[i]; verdicts && len(last) > 0 {
			paint = colour(last[len(last)-1])
		}
		height := 0
		for _, lines := range row {
			height = max(height, len(lines))
		}
		for k := range height {
			cells := make([]string, len(row))
			for j, lines := range row {
				if k < len(lines) {
					cells[j] = lines[k]
				}
			}
			line(cells, paint)
		}
	}
}

// ScenarioLevel writes one level of a scenario as the text report shows
// it (title, note, a row per target with its verdict): what a live run
// prints when the level is done. The verdicts are in colour when color is
// set.
func ScenarioLevel(w io.Writer, sc *results.Scenario, level int, color bool) error {
	one := *sc
	one.Summary = nil
	for _, s := range sc.Summary {
		if s.Concurrency == level {
			one.Summary = append(one.Summary, s)
		}
	}
	var b strings.Builder
	writeTable(&b, printable([]table{scenarioTable(&one)})[0], color)
	_, err := io.WriteString(w, b.String())
	return err
}

// A terminal table cell wraps at maxCell runes onto at most maxCellLines
// lines: a longer one (a whole answer in a compatibility table) keeps its
// first lines and its end, so the marks at the end of a verdict always
// show. The other formats show whole values.
const (
	maxCell      = 72
	maxCellLines = 4
)

// wrap breaks s into lines of at most width runes, at spaces where it
// can. Beyond maxLines lines it keeps the first maxLines − 1 and, after
// "…", the last width − 1 runes of s.
func wrap(s string, width, maxLines int) []string {
	r := []rune(strings.ReplaceAll(s, "\n", " "))
	all := r
	var lines []string
	for len(r) > width {
		i := width
		for i > 0 && r[i] != ' ' {
			i--
		}
		if i == 0 {
			lines, r = append(lines, string(r[:width])), r[width:] // no space to break at
			continue
		}
		lines, r = append(lines, strings.TrimRight(string(r[:i]), " ")), r[i+1:]
	}
	lines = append(lines, string(r))
	if len(lines) > maxLines {
		lines = append(lines[:maxLines-1], "…"+string(all[len(all)-(width-1):]))
	}
	return lines
}

// cut shortens s to at most n runes, marking the cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
