package progress

import (
	"fmt"
	"io"
	"time"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/load"
	"golang.org/x/term"
)

// LoadLine redraws one status line on a terminal every half second
// until the returned function is called: elapsed, the rate and latency of
// the last whole second, the counts so far, and about how long is left
// (of the duration, or of the requests at the last second's rate).
func LoadLine(w io.Writer, live *load.Live, total time.Duration, requests int64) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	start := time.Now()
	width := 0
	if f, ok := FileOf(w); ok {
		width, _, _ = term.GetSize(int(f.Fd()))
	}
	go func() {
		defer close(stopped)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprint(w, "\r\033[K"+Fit(loadStatus(live, time.Since(start), total, requests), width-1))
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// loadStatus is tandem load's live line.
func loadStatus(live *load.Live, elapsed, total time.Duration, requests int64) string {
	el := elapsed.Round(100 * time.Millisecond)
	s := el.String()
	if total > 0 {
		s += " / " + total.String()
	}
	sent := live.Sent.Load()
	left := time.Duration(-1)
	if total > 0 {
		left = max(total-elapsed, 0)
	}
	if sec, ok := live.LastSecond(); ok {
		if rate := sec.OK + sec.Errors; rate > 0 {
			s += fmt.Sprintf(" · %s/s", human.Count(rate))
			if requests > 0 { // the run ends at whichever bound comes first
				byCount := time.Duration(float64(max(requests-sent, 0)) / float64(rate) * float64(time.Second))
				if left < 0 || byCount < left {
					left = byCount
				}
			}
		}
		if sec.OK > 0 {
			s += fmt.Sprintf(" · last second p50 %s, p99 %s", human.Duration(float64(sec.P50Ns)), human.Duration(float64(sec.P99Ns)))
		}
	}
	s += fmt.Sprintf(" · %s sent, %s ok, %s errors", human.Count(sent), human.Count(live.OK.Load()), human.Count(live.Errors.Load()))
	if left >= 0 {
		s += " · about " + left.Round(time.Second).String() + " left"
	}
	return s
}
