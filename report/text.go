package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

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

// paint colours a verdict or state cell by what it says.
func paint(c string) string {
	switch {
	case strings.Contains(c, " slower") || strings.HasPrefix(c, "SATURATED"):
		return red + c + reset
	case strings.Contains(c, " faster"):
		return green + c + reset
	case strings.Contains(c, "withheld"):
		return yellow + c + reset
	case strings.Contains(c, "indistinguishable"):
		return dim + c + reset
	}
	return c
}

func text(w io.Writer, r *results.Results, color bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s\n", r.Study.Name, r.CreatedAt.Format("2006-01-02 15:04 UTC"))
	if r.Interrupted {
		b.WriteString("INTERRUPTED: the run was cancelled; what follows is what was measured before.\n")
	}
	for _, t := range tables(r, shortDiffRows) {
		fmt.Fprintf(&b, "\n%s\n", t.Title)
		if t.Note != "" {
			fmt.Fprintf(&b, "(%s)\n", t.Note)
		}
		rows := make([][]string, len(t.Rows))
		for i, row := range t.Rows {
			rows[i] = make([]string, len(row))
			for j, c := range row {
				rows[i][j] = cut(c, maxCell)
			}
		}
		t.Rows = rows
		widths := make([]int, len(t.Header))
		for _, row := range append([][]string{t.Header}, t.Rows...) {
			for i, c := range row {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
		}
		verdicts := color && (strings.HasPrefix(t.Title, "Scenario ") || strings.HasPrefix(t.Title, "Sweep "))
		line := func(row []string) {
			for i, c := range row {
				if i == len(row)-1 {
					if verdicts {
						c = paint(c)
					}
					b.WriteString(c)
					break
				}
				b.WriteString(c + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
			}
			b.WriteString("\n")
		}
		line(t.Header)
		for _, row := range t.Rows {
			line(row)
		}
	}
	for _, t := range r.Targets {
		if t.Error != "" {
			fmt.Fprintf(&b, "\ntarget %s failed: %s\n", t.Name, t.Error)
		}
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\nfinding %s: %s\n", f.ID, f.Summary)
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "\nwarning: %s\n", wn)
	}
	fmt.Fprintf(&b, "\nmachine: %s\n", machineLine(r))
	_, err := io.WriteString(w, b.String())
	return err
}

// maxCell bounds a terminal table cell, in runes; the other formats show
// whole values.
const maxCell = 72

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
