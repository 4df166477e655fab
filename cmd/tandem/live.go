package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/runner"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// liveTerminal reports whether w can take a live status area: a terminal
// whose user has not asked for plain output (NO_COLOR, TERM=dumb).
func liveTerminal(w io.Writer) bool {
	if _, off := os.LookupEnv("NO_COLOR"); off || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(w)
}

// live shows a run on a terminal: a status area at the bottom (the step,
// the round and target being measured, elapsed, what is left, a bar, how
// to stop) while what finishes scrolls above it: each level of a scenario
// as the report's rows with its verdict, and the run's notable lines (every
// round's with verbose).
type live struct {
	p       *mpb.Progress
	bar     *mpb.Bar
	verbose bool
	color   bool
	// restore, when set, gives stderr back when the area closes.
	restore func()

	mu   sync.Mutex
	last runner.Event
	at   time.Time // when last arrived
	// doing is what is measured now: "round 2 of 3 · b".
	doing string
}

// newLive starts the status area on w, for a run whose plan has steps
// taking about total.
func newLive(w io.Writer, steps int, total time.Duration, verbose, color bool) *live {
	l := &live{verbose: verbose, color: color, at: time.Now()}
	l.last = runner.Event{Steps: steps, Left: total}
	if f, ok := fileOf(w); ok {
		w = f // the terminal itself
	}
	l.p = mpb.New(mpb.WithOutput(w), mpb.WithRefreshRate(200*time.Millisecond))
	line := func(text func() string) mpb.BarFiller {
		return mpb.BarFillerFunc(func(w io.Writer, st decor.Statistics) error {
			_, err := io.WriteString(w, fit(text(), st.AvailableWidth)+"\n")
			return err
		})
	}
	// the status area: the step and what is measured, how to stop, then
	// a bar with the time elapsed and left (drawn here, so it moves with
	// the clock between events)
	l.bar = l.p.New(1, mpb.NopStyle(),
		mpb.BarTopExtender(line(l.heading), line(func() string { return "Ctrl-C: stop and keep what is measured" })),
		mpb.PrependDecorators(decor.Any(func(st decor.Statistics) string { return fit(l.clock(), st.AvailableWidth) })),
		mpb.BarRemoveOnComplete())
	return l
}

// fit cuts s to a window's width.
func fit(s string, width int) string {
	if width <= 0 {
		return s
	}
	return runewidth.Truncate(s, width, "…")
}

// heading is the status area's first line: the step and what is measured.
func (l *live) heading() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.last
	if e.Step == 0 {
		return fmt.Sprintf("starting · %d steps planned", e.Steps)
	}
	s := fmt.Sprintf("[%d/%d] %s", e.Step, e.Steps, e.Phase)
	if e.Name != "" {
		s += " " + e.Name
	}
	if l.doing != "" {
		s += " · " + l.doing
	}
	return s
}

// barWidth is the status bar's width in cells.
const barWidth = 24

// clock is the status area's last line: a bar of the share done, the time
// elapsed and about how long is left, counted down between events.
func (l *live) clock() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	since := time.Since(l.at)
	elapsed := l.last.Elapsed + since
	left := max(l.last.Left-since, 0)
	share := 0.0
	if elapsed+left > 0 {
		share = min(float64(elapsed)/float64(elapsed+left), 0.99) // done only when the run is
	}
	full := int(share * barWidth)
	bar := strings.Repeat("=", full) + ">" + strings.Repeat(" ", barWidth-full-1)
	return fmt.Sprintf("[%s] %2.0f %% · %s elapsed · about %s left", bar, share*100, elapsed.Round(time.Second), left.Round(time.Second))
}

// event takes the run's progress: the status area follows it; a finished
// level prints its rows above, as do lines that are not about one round.
func (l *live) event(e runner.Event) {
	l.mu.Lock()
	l.last, l.at = e, time.Now()
	switch {
	case e.Status && e.Phase == "sweep" && e.Rounds > 0:
		l.doing = fmt.Sprintf("cell %d of %d · %s", e.Round, e.Rounds, e.Target)
	case e.Status && e.Phase == "sweep":
		l.doing = fmt.Sprintf("search probe %d · %s", e.Round, e.Target)
	case e.Status:
		l.doing = fmt.Sprintf("round %d of %d · %s", e.Round, e.Rounds, e.Target)
	case e.Target != "" && e.Round == 0:
		l.doing = "warm-up · " + e.Target
	case e.Line == "":
		l.doing = "" // a new step
	}
	l.mu.Unlock()
	switch {
	case e.Done != nil:
		var b strings.Builder
		report.ScenarioLevel(&b, e.Done, e.Level, l.color)
		io.WriteString(l.p, b.String())
	case e.Line != "" && (e.Target == "" || l.verbose):
		io.WriteString(l.p, e.Line+"\n")
	}
}

// close removes the status area, so what follows (the report) starts on a
// clean line.
func (l *live) close() {
	if l.restore != nil {
		l.restore()
	}
	l.bar.Abort(true)
	l.p.Wait()
}
