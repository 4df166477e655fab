package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/runner"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Area shows a run on a terminal: a status area at the bottom (the step,
// the round and target being measured, elapsed, what is left, a bar, how
// to stop) while what finishes scrolls above it: each level of a scenario
// as the report's rows with its verdict, and the run's notable lines (every
// round's with verbose).
type Area struct {
	p       *mpb.Progress
	bar     *mpb.Bar
	verbose bool
	color   bool
	// restore, when set, gives the console back when the area closes.
	restore func()

	mu   sync.Mutex
	last runner.Event
	at   time.Time // when last arrived
	// doing is what is measured now: "round 2 of 3 · b".
	doing string
}

// NewArea starts the status area on w, for a run whose plan has steps
// taking about total; verbose prints every round's line above it, color
// the finished levels' verdicts in colour. Where w is a Console, what else
// is written to it meanwhile goes above the area.
func NewArea(w io.Writer, steps int, total time.Duration, verbose, color bool) *Area {
	l := &Area{verbose: verbose, color: color, at: time.Now()}
	l.last = runner.Event{Steps: steps, Left: total}
	c, _ := w.(*Console)
	if f, ok := FileOf(w); ok {
		w = f // the terminal itself
	}
	l.p = mpb.New(mpb.WithOutput(w), mpb.WithRefreshRate(200*time.Millisecond))
	if c != nil {
		l.restore = c.Route(l.p)
	}
	line := func(text func() string) mpb.BarFiller {
		return mpb.BarFillerFunc(func(w io.Writer, st decor.Statistics) error {
			_, err := io.WriteString(w, Fit(text(), st.AvailableWidth)+"\n")
			return err
		})
	}
	// the status area: the step and what is measured, how to stop, then
	// a bar with the time elapsed and left (drawn here, so it moves with
	// the clock between events)
	l.bar = l.p.New(1, mpb.NopStyle(),
		mpb.BarTopExtender(line(l.heading), line(func() string { return "Ctrl-C: stop and keep what is measured" })),
		mpb.PrependDecorators(decor.Any(func(st decor.Statistics) string { return Fit(l.clock(), st.AvailableWidth) })),
		mpb.BarRemoveOnComplete())
	return l
}

// heading is the status area's first line: the step and what is measured.
func (l *Area) heading() string {
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
func (l *Area) clock() string {
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

// Event takes the run's progress: the status area follows it; a finished
// level prints its rows above, as do lines that are not about one round.
func (l *Area) Event(e runner.Event) {
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

// Close removes the status area, so what follows (the report) starts on a
// clean line; a nil Area has none.
func (l *Area) Close() {
	if l == nil {
		return
	}
	if l.restore != nil {
		l.restore()
	}
	l.bar.Abort(true)
	l.p.Wait()
}
