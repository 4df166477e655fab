package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
)

// Text writes the results as aligned terminal tables, ending with a
// summary.
func Text(w io.Writer, r *results.Results) error { return text(w, r, false, 0) }

// TextColor is Text with verdicts and saturated cells in colour, for a
// terminal (callers check for one, and for NO_COLOR).
func TextColor(w io.Writer, r *results.Results) error { return text(w, r, true, 0) }

// TextWidth is Text, in colour if color is set, with every table and the
// summary fitted to width columns (a terminal's): cells wrap at spaces.
func TextWidth(w io.Writer, r *results.Results, color bool, width int) error {
	return text(w, r, color, width)
}

// ANSI colours of verdict words.
const (
	red, green, yellow, dim, reset = "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[2m", "\x1b[0m"
)

// ansi is the tone's colour in a terminal ("" for none).
func (k tone) ansi() string {
	switch k {
	case toneBad:
		return red
	case toneGood:
		return green
	case toneUnsure:
		return yellow
	case toneQuiet:
		return dim
	}
	return ""
}

func text(w io.Writer, r *results.Results, color bool, width int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s\n", human.Printable(r.Study.Name), r.CreatedAt.Format("2006-01-02 15:04 UTC"))
	if r.Interrupted {
		b.WriteString("INTERRUPTED: the run was cancelled; what follows is what was measured before.\n")
	}
	for _, t := range tables(r, shortDiffRows) {
		writeTable(&b, t, color, width)
	}
	if line := familyLine(r.Family); line != "" {
		fmt.Fprintf(&b, "\n%s\n", fit(line, width))
	}
	for _, t := range r.Targets {
		if t.Error != "" {
			fmt.Fprintf(&b, "\ntarget %s failed: %s\n", human.Printable(t.Name), human.Printable(t.Error))
		}
	}
	fmt.Fprintf(&b, "\n%s\n", fit("machine: "+human.Printable(machineLine(r)), width))
	writeSummary(&b, r, color, width)
	_, err := io.WriteString(w, b.String())
	return err
}

// fit wraps a paragraph at spaces to width (0: as it is).
func fit(s string, width int) string {
	if width <= 0 {
		return s
	}
	return strings.Join(wrap(s, width, 1<<20), "\n")
}

// writeTable lays a table out in columns, under its title and note; a
// scenario's or sweep's verdicts in colour when color is set. With a width,
// the widest columns wrap narrower (at spaces) until the table fits, or
// every column is down to minColumn.
func writeTable(b *strings.Builder, t table, color bool, width int) {
	fmt.Fprintf(b, "\n%s\n", t.Title)
	if t.Note != "" {
		note := "(" + t.Note + ")"
		fmt.Fprintf(b, "%s\n", fit(note, width))
	}
	limits := make([]int, len(t.Header))
	for i := range limits {
		limits[i] = maxCell
	}
	rows, widths := layoutCells(t, limits)
	floors := wordFloors(t)
	stuck := make([]bool, len(widths)) // a column that wraps no narrower
	for width > 0 {
		total := 2 * (len(widths) - 1)
		widest := -1
		for i, w := range widths {
			total += w
			if !stuck[i] && w > floors[i] && (widest < 0 || w > widths[widest]) {
				widest = i
			}
		}
		if total <= width || widest < 0 {
			break
		}
		was := widths[widest]
		limits[widest] = max(floors[widest], was-(total-width))
		rows, widths = layoutCells(t, limits)
		if widths[widest] >= was {
			stuck[widest] = true
		}
	}
	toned := color && len(t.Tones) == len(t.Rows)
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
	for i, row := range rows {
		paint := ""
		if i > 0 && toned {
			paint = t.Tones[i-1].ansi()
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

// minColumn is the narrowest a column wraps to when a table must fit a
// width; longWord is the longest run without a space kept whole.
const (
	minColumn = 10
	longWord  = 24
)

// wordFloors is, per column of t, the narrowest it wraps to without
// breaking a word: its longest word, and minColumn. A run of more than
// longWord runes without a space (a hash, a hex or base64 value) is not a
// word: it may break anywhere.
func wordFloors(t table) []int {
	floors := make([]int, len(t.Header))
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		for j, c := range row {
			if j >= len(floors) {
				continue
			}
			for _, w := range strings.Fields(c) {
				if n := utf8.RuneCountInString(w); n <= longWord {
					floors[j] = max(floors[j], n)
				}
			}
		}
	}
	for j := range floors {
		floors[j] = max(floors[j], minColumn)
	}
	return floors
}

// layoutCells wraps each cell of t to its column's limit and returns the
// cells' lines, the header's first, and the columns' widths.
func layoutCells(t table, limits []int) ([][][]string, []int) {
	rows := make([][][]string, len(t.Rows))
	for i, row := range t.Rows {
		rows[i] = make([][]string, len(row))
		for j, c := range row {
			limit := maxCell
			if j < len(limits) {
				limit = limits[j]
			}
			rows[i][j] = wrap(c, limit, max(maxCellLines, maxCellLines*maxCell/limit))
		}
	}
	head := make([][]string, len(t.Header))
	for j, c := range t.Header {
		head[j] = wrap(c, limits[j], 1<<20)
	}
	rows = append([][][]string{head}, rows...)
	widths := make([]int, len(t.Header))
	for _, row := range rows {
		for i, lines := range row {
			for _, l := range lines {
				if i < len(widths) {
					widths[i] = max(widths[i], utf8.RuneCountInString(l))
				}
			}
		}
	}
	return rows, widths
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
	writeTable(&b, printable([]table{scenarioTable(&one)})[0], color, 0)
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
