package server

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/tandem-bench/tandem/history"
	"github.com/tandem-bench/tandem/internal/browsertest"
	"github.com/tandem-bench/tandem/internal/tooltest"
)

// The pages as a person uses them, in Chromium: 500 runs paged to the
// last, a trend drawn with its band and its points linked to their runs,
// two runs picked and compared; nothing blocked by the pages' policy,
// nothing fetched from elsewhere, no sideways scroll on a phone.
func TestPagesInChromium(t *testing.T) {
	tooltest.Long(t)
	ts, st := newServer(t)
	ctx := context.Background()
	var first, last string
	newest := map[string]bool{} // the newest ten
	for m := range 500 {
		v := 100.0
		if m >= 490 {
			v = 130 // the newest ten are slower
		}
		r, _, err := st.Add(ctx, runOf(t, "svc", m, v, v+1, v-1, v+0.5), history.Meta{Branch: "main", Commit: "c"})
		if err != nil {
			t.Fatal(err)
		}
		if m == 0 {
			first = r.ID
		}
		if m >= 490 {
			newest[r.ID] = true
		}
		last = r.ID
	}
	for _, width := range []int{1280, 390} {
		b := browsertest.Open(t, width, 900)
		// pagination: follow "Older runs" to the end
		b.Go(t, ts.URL+"/studies/svc/main/runs")
		rows, pages := 0, 0
		for {
			rows += browsertest.Eval[int](t, b, `document.querySelectorAll('tbody tr').length`)
			pages++
			more := browsertest.Eval[string](t, b, `(document.getElementById('older') || {}).href || ''`)
			if more == "" || pages > 20 {
				break
			}
			b.Go(t, more)
		}
		if rows != 500 || pages != 10 {
			t.Errorf("%d px: %d runs on %d pages; want 500 on 10", width, rows, pages)
		}
		// the trend: drawn, 500 points, the slow ten visible in the data
		series := history.Series{Scenario: "lat", Target: "a", Level: 1, Metric: "headline"}
		b.Go(t, ts.URL+"/studies/svc/main/trend?"+url.Values{"series": {series.Key()}}.Encode())
		if !browsertest.Eval[bool](t, b, `!!document.querySelector('#trend-plot canvas')`) {
			t.Errorf("%d px: the trend was not drawn", width)
		}
		if n := browsertest.Eval[int](t, b, `JSON.parse(document.getElementById('trend-data').textContent).points.length`); n != 500 {
			t.Errorf("%d px: %d trend points; want 500", width, n)
		}
		if sw := browsertest.Eval[[2]int](t, b, `[document.documentElement.scrollWidth, window.innerWidth]`); sw[0] > sw[1] {
			t.Errorf("%d px: the trend page scrolls sideways: %v", width, sw)
		}
		// numbered axes (no tick label without a number, the axis from
		// zero), the slowdown drawn as a labelled change point
		ticks := browsertest.Eval[string](t, b, `document.getElementById('trend-plot').dataset.yticks || ''`)
		if ticks == "" || !strings.HasPrefix(ticks, "0") {
			t.Errorf("%d px: value axis ticks %q; want numbers from zero", width, ticks)
		}
		for _, tk := range strings.Split(ticks, "|") {
			if !strings.ContainsAny(tk, "0123456789") {
				t.Errorf("%d px: a tick label without a number: %q (all: %q)", width, tk, ticks)
			}
		}
		if ch := browsertest.Eval[string](t, b, `document.getElementById('trend-plot').dataset.changes || ''`); !strings.Contains(ch, "×1.3 regression") {
			t.Errorf("%d px: change points drawn: %q; want the ×1.3 regression", width, ch)
		}
		b.Go(t, ts.URL+"/changes")
		if txt := browsertest.Eval[string](t, b, `document.body.innerText`); !strings.Contains(txt, "Open change points") || !strings.Contains(txt, "×1.3") {
			t.Errorf("%d px: the change points page:\n%s", width, txt)
		}
		if sw := browsertest.Eval[[2]int](t, b, `[document.documentElement.scrollWidth, window.innerWidth]`); sw[0] > sw[1] {
			t.Errorf("%d px: the change points page scrolls sideways: %v", width, sw)
		}
		b.Go(t, ts.URL+"/studies/svc/main/trend?"+url.Values{"series": {series.Key()}}.Encode())
		// a click on the chart's right end opens one of the newest runs
		box := browsertest.Eval[[4]float64](t, b, `(() => { const r = document.querySelector('#trend-plot .u-over').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
		x, y := box[0]+box[2]-2, box[1]+box[3]/2
		if err := chromedp.Do(b.Ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y)); err != nil {
			t.Fatal(err)
		}
		// hovering names the run and its commit, in the legend too
		hover := browsertest.Eval[string](t, b, `document.getElementById('trend-plot').dataset.hover || ''`)
		legend := browsertest.Eval[string](t, b, `(document.querySelector('#trend-plot .u-legend') || {}).innerText || ''`)
		if id, commit, _ := strings.Cut(hover, " "); !newest[id] || commit != "c" || !strings.Contains(legend, "· c") {
			t.Errorf("%d px: hovering the chart's right end names %q, the legend %q; want one of the newest runs and its commit c", width, hover, legend)
		}
		if err := chromedp.Do(b.Ctx, chromedp.MouseClickXY(x, y)); err != nil {
			t.Fatal(err)
		}
		loc := ""
		// the click navigates: wait for the run's page (a hang guard of 30 s:
		// Chromium on a busy machine takes seconds)
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if loc = browsertest.Eval[string](t, b, `location.pathname`); strings.HasPrefix(loc, "/runs/") {
				break
			}
		}
		if err := chromedp.Do(b.Ctx, chromedp.WaitReady("body")); err != nil {
			t.Fatal(err)
		}
		if id, _ := strings.CutPrefix(loc, "/runs/"); !newest[id] {
			t.Errorf("%d px: a click on the chart's right end went to %s; want one of the newest runs", width, loc)
		}
		if !browsertest.Eval[bool](t, b, `!!document.getElementById('glance')`) {
			t.Errorf("%d px: the run's page is not its report", width)
		}
		// compare: pick the oldest as base and the newest as head on the runs page
		b.Go(t, ts.URL+"/studies/svc/main/runs")
		browsertest.Eval[bool](t, b, `(() => { document.querySelector('input[name=head][value="`+last+`"]').checked = true;
			document.querySelector('input[name=base]').checked = true; return true; })()`)
		browsertest.Eval[bool](t, b, `(() => { document.querySelector('input[name=base]').value = "`+first+`"; document.querySelector('form').submit(); return true; })()`)
		if err := chromedp.Do(b.Ctx, chromedp.WaitReady("#glance")); err != nil {
			t.Fatal(err)
		}
		glance := browsertest.Eval[string](t, b, `document.getElementById('glance').innerText`)
		if !strings.Contains(glance, "(beyond 5 %") || !strings.Contains(glance, "1 regressed") {
			t.Errorf("%d px: the comparison's glance:\n%s", width, glance)
		}
		if c := b.Console(); len(c) > 0 {
			t.Errorf("%d px: console: %v", width, c)
		}
		for _, u := range b.Requests() {
			if !strings.HasPrefix(u, ts.URL+"/") {
				t.Errorf("%d px: a request elsewhere: %s", width, u)
			}
		}
	}
}
