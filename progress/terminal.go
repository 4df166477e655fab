// Package progress shows a long run while it goes: a live status area on
// a terminal (Area) that prints each finished level above it, a line per
// step of the plan in a log (StepLines), one JSON object per event
// (JSONEvents), and tandem load's status line (LoadLine); Console is
// stderr shared between the area and whatever else writes there.
package progress

import (
	"io"
	"os"
	"sync"

	"github.com/mattn/go-runewidth"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
	"golang.org/x/term"
)

// NewConsole is a Console writing to f.
func NewConsole(f *os.File) *Console { return &Console{f: f} }

// Console is stderr as tandem writes to it. While a live status area is
// drawn, what else is written there (the signal handler's notice) goes
// through the area, which prints it above itself, rather than under it,
// where the area's next redraw would overdraw it.
type Console struct {
	f  *os.File
	mu sync.Mutex
	to io.Writer // nil: f
}

func (c *Console) Write(b []byte) (int, error) {
	c.mu.Lock()
	to := c.to
	c.mu.Unlock()
	if to != nil {
		if n, err := to.Write(b); err == nil {
			return n, nil
		} // the area closed meanwhile: write under it
	}
	return c.f.Write(b)
}

// File is the terminal (or file) underneath, for terminal checks and for
// the status area itself.
func (c *Console) File() *os.File { return c.f }

// Route sends writes to w until the returned function is called.
func (c *Console) Route(w io.Writer) (restore func()) {
	c.mu.Lock()
	c.to = w
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.to = nil
		c.mu.Unlock()
	}
}

// FileOf is the file a writer writes to, if it is one (or a console).
func FileOf(w io.Writer) (*os.File, bool) {
	switch f := w.(type) {
	case *os.File:
		return f, true
	case interface{ File() *os.File }:
		return f.File(), true
	}
	return nil, false
}

// IsTerminal reports whether w writes to a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := FileOf(w)
	return ok && term.IsTerminal(int(f.Fd()))
}

// LiveTerminal reports whether w can take a live status area: a terminal
// whose user has not asked for plain output (NO_COLOR, TERM=dumb).
func LiveTerminal(w io.Writer) bool {
	if _, off := os.LookupEnv("NO_COLOR"); off || os.Getenv("TERM") == "dumb" {
		return false
	}
	return IsTerminal(w)
}

// Fit cuts s to a window's width.
func Fit(s string, width int) string {
	if width <= 0 {
		return s
	}
	return runewidth.Truncate(s, width, "…")
}

// TextReport is the terminal report for w: on a terminal fitted to its
// width and in colour, unless NO_COLOR is set (https://no-color.org).
func TextReport(w io.Writer) func(io.Writer, *results.Results) error {
	if !IsTerminal(w) {
		return report.Text
	}
	_, off := os.LookupEnv("NO_COLOR")
	width := 0
	if f, ok := FileOf(w); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			width = cols
		}
	}
	return func(w io.Writer, r *results.Results) error { return report.TextWidth(w, r, !off, width) }
}
