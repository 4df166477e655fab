package report

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/tandem-bench/tandem/internal/browsertest"
	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/verdict"
)

// view is a page as headless Chromium showed it at one window size.
type view struct {
	// DOM is the document as Chromium built it, scripts run.
	DOM string
	// Console holds what the page logged: messages, exceptions and the
	// browser's own entries (a blocked script or request).
	Console []string
	// Requests are the URLs the page asked for, the page itself first.
	Requests []string
	// Layout is what the page measured of itself.
	Layout layout
	// Shot is a screenshot of the window.
	Shot string
	page string
	// ctx drives the page further (hover, drag) until the test ends.
	ctx context.Context
}

// layout is measured in the page.
type layout struct {
	ScrollWidth int       `json:"scrollWidth"`
	InnerWidth  int       `json:"innerWidth"`
	Glance      string    `json:"glance"`
	Figures     []placed  `json:"figures"`
	Sections    []string  `json:"sections"`
	Wide        []string  `json:"wide"`
	Legend      []string  `json:"legend"`
	Axis        [2]string `json:"axis"`
	// Cut are tables wider than their scroll box: columns a reader must
	// scroll sideways to see.
	Cut []string `json:"cut"`
}

// placed is a figure and the section it sits in.
type placed struct {
	ID      string  `json:"id"`
	Section string  `json:"section"`
	Canvas  bool    `json:"canvas"`
	Width   float64 `json:"width"`
}

const measure = `(() => {
  const axisText = (f) => f ? [...f.querySelectorAll('.u-axis')].map(a => a.innerText).join(' | ') : '';
  return {
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    glance: (document.getElementById('glance') || {}).innerText || '',
    sections: [...document.querySelectorAll('body > section')].map(s => s.id),
    figures: [...document.querySelectorAll('figure')].map(f => ({id: f.id, section: (f.closest('section') || {}).id || '',
      canvas: !!f.querySelector('canvas'), width: f.getBoundingClientRect().width})),
    wide: [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.scroll') && !e.closest('.u-wrap'))
      .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + (e.innerText || '').slice(0, 40)),
    cut: [...document.querySelectorAll('.scroll > table')].filter(tb => tb.offsetParent !== null && tb.scrollWidth > tb.parentElement.clientWidth + 1)
      .map(tb => ((tb.closest('section') || {}).id || '') + ': ' + [...tb.querySelectorAll('th')].map(th => th.innerText).join('|') + ' ' + tb.scrollWidth + ' > ' + tb.parentElement.clientWidth),
  };
})()`

// browse opens the page in headless Chromium at width×height and
// measures it.
func browse(t *testing.T, page []byte, width, height int) *view {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	b := browsertest.Open(t, width, height)
	b.Go(t, "file://"+file)
	v := &view{Shot: filepath.Join(dir, "shot.png"), page: file, ctx: b.Ctx}
	v.Layout = browsertest.Eval[layout](t, b, measure)
	v.DOM = browsertest.Eval[string](t, b, "document.documentElement.outerHTML")
	if err := os.WriteFile(v.Shot, b.Screenshot(t, t.Name()), 0o644); err != nil {
		t.Fatal(err)
	}
	v.Console, v.Requests = b.Console(), b.Requests()
	return v
}

// foreign lists the requests other than the page itself.
func (v *view) foreign() []string {
	var out []string
	for _, u := range v.Requests {
		if u != "file://"+v.page {
			out = append(out, u)
		}
	}
	return out
}

var tag = regexp.MustCompile(`<(table|figure|canvas|script|img|iframe|object|embed|a |link|style|meta|form)\b`)

func countTags(dom string) map[string]int {
	n := map[string]int{}
	for _, m := range tag.FindAllStringSubmatch(dom, -1) {
		n[strings.TrimSpace(m[1])]++
	}
	return n
}

func demoResults(t *testing.T) *results.Results {
	t.Helper()
	res, err := results.Read("testdata/demo-results.json")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func htmlPage(t *testing.T, res *results.Results) []byte {
	t.Helper()
	var page bytes.Buffer
	if err := HTML(&page, res); err != nil {
		t.Fatal(err)
	}
	return page.Bytes()
}

// The demo's report, as a person sees it on a laptop and on a phone: no
// page-level horizontal scroll, the answer at the top naming every
// scenario's verdict, every chart drawn inside its scenario's section,
// nothing logged, nothing fetched, a screenshot that is not blank.
func TestDemoReportInChromium(t *testing.T) {
	res := demoResults(t)
	page := htmlPage(t, res)
	if len(page) > 2<<20 {
		t.Errorf("the page is %d bytes; want under 2 MB", len(page))
	}
	for _, size := range [][2]int{{1920, 1080}, {1280, 800}, {390, 844}} {
		t.Run(fmt.Sprintf("%dpx", size[0]), func(t *testing.T) {
			v := browse(t, page, size[0], size[1])
			if size[0] >= 1280 && len(v.Layout.Cut) > 0 { // a phone scrolls a wide table; a desktop must not
				t.Errorf("tables cut at %d px (wider than their box): %v", size[0], v.Layout.Cut)
			}
			// b's rounds sit 20× and more above a's: a log axis, and it says so
			if !regexp.MustCompile(`data-ylabel="[^"]*\(log scale\)" data-yscale="log"`).MatchString(v.DOM) {
				t.Error("no chart axis reads (log scale)")
			}
			if len(v.Console) > 0 {
				t.Errorf("console output:\n%s", strings.Join(v.Console, "\n"))
			}
			if f := v.foreign(); len(f) > 0 {
				t.Errorf("the page asked for %v; want nothing", f)
			}
			l := v.Layout
			if l.InnerWidth != size[0] || l.ScrollWidth > l.InnerWidth {
				t.Errorf("scrollWidth %d, innerWidth %d: the page scrolls sideways (%v)", l.ScrollWidth, l.InnerWidth, l.Wide)
			}
			if len(l.Sections) == 0 || l.Sections[0] != "glance" {
				t.Errorf("sections %v; want the glance first", l.Sections)
			}
			for _, sc := range res.Scenarios {
				for _, c := range sc.Comparisons {
					if !strings.Contains(l.Glance, sc.Name) || !strings.Contains(l.Glance, shortVerdict(&sc, c)) {
						t.Errorf("the glance lacks %s: %q", sc.Name, shortVerdict(&sc, c))
					}
				}
			}
			for _, want := range []string{"42 cases over 7 calls", "getblock-saturation on a", "delayed-ack-stall on b"} {
				if !strings.Contains(l.Glance, want) {
					t.Errorf("the glance lacks %q", want)
				}
			}
			checkFigures(t, res, l, size[0])
			n := countTags(v.DOM)
			if n["script"] != 4 {
				t.Errorf("%d script elements; want the results, the figures, uPlot and the page's script", n["script"])
			}
			checkShot(t, v.Shot, size[0], size[1])
		})
	}
}

// checkFigures holds every figure to its place: drawn (a canvas), inside
// the section of its scenario, sweep or the metrics, and no wider than the
// window.
func checkFigures(t *testing.T, res *results.Results, l layout, width int) {
	t.Helper()
	perSection := map[string]int{}
	for _, f := range l.Figures {
		perSection[f.Section]++
		if !f.Canvas {
			t.Errorf("figure %s was not drawn", f.ID)
		}
		if !strings.HasPrefix(f.ID, "fig-"+f.Section+"-") && !(f.Section == "metrics" && strings.HasPrefix(f.ID, "fig-metric-")) {
			t.Errorf("figure %s sits in section %q, not its own", f.ID, f.Section)
		}
		if f.Width > float64(width) {
			t.Errorf("figure %s is %.0f px wide in a %d px window", f.ID, f.Width, width)
		}
	}
	for i := range res.Scenarios {
		if perSection[scenarioAnchor(i)] == 0 {
			t.Errorf("scenario %s has no chart in its section", res.Scenarios[i].Name)
		}
	}
	if perSection["sweep-1"] == 0 || perSection["metrics"] != 4 {
		t.Errorf("charts per section %v; want the sweep's and 4 metrics (goroutines, RSS, CPU, the machine's load)", perSection)
	}
}

func checkShot(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() != w || b.Dy() != h {
		t.Errorf("screenshot %dx%d; want %dx%d", b.Dx(), b.Dy(), w, h)
	}
	dark := 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r+g+bl < 3*0x8000 {
				dark++
			}
		}
	}
	if dark < 300 {
		t.Errorf("the screenshot is nearly blank: %d dark samples", dark)
	}
}

// hostile are strings an attacker controls (a study's name, a target's
// output, an answer's body): each must render as text and run nothing.
var hostile = []string{
	`<script>alert(1)</script>`,
	`<img src=x onerror=alert(2)>`,
	`"><svg onload=alert(3)>`,
	`</script><script>alert(4)</script>`,
	`<iframe src="javascript:alert(5)"></iframe>`,
	`<a href="javascript:alert(6)">x</a>`,
	`<style>body{display:none}</style>`,
	`<meta http-equiv="refresh" content="0;url=http://example.invalid/">`,
	`<link rel=stylesheet href=http://example.invalid/x.css>`,
	"\u202e<b>rtl</b>\u0000",
	`{{.R}}`,
	`]]><!--`,
}

func TestHostileStringsRenderAsText(t *testing.T) {
	tooltest.Long(t)
	res := demoResults(t)
	h := strings.Join(hostile, " ")
	res.Study.Name, res.Study.Description = h, h
	res.Targets[0].Error = h
	res.Targets[1].Name = h
	res.Warnings = append(res.Warnings, h)
	res.Findings = append(res.Findings, results.Finding{ID: h, Target: h, Summary: h, Evidence: map[string]string{h: h, "long " + h: strings.Repeat(h, 10)}})
	for i := range res.Scenarios[0].Rounds {
		rd := &res.Scenarios[0].Rounds[i]
		if rd.Target == "b" {
			rd.Target = h
		}
	}
	for i := range res.Scenarios[0].Summary {
		if s := &res.Scenarios[0].Summary[i]; s.Target == "b" {
			s.Target = h
		}
	}
	res.Scenarios[0].Name = h
	res.Scenarios[0].Rounds[0].Sample.Errors = map[string]int64{h: 1}
	if tg := &res.Targets[0]; tg.Metrics != nil && len(tg.Metrics.Series) > 0 {
		tg.Metrics.Series[0].Name = h
		tg.Metrics.Series[0].Labels = map[string]string{h: h}
	}
	if c := res.Compat; c != nil && len(c.Cases) > 0 {
		c.Cases[0].Vars = map[string]any{h: h}
		c.Cases[0].Differences = append(c.Cases[0].Differences, results.Difference{Target: h, Path: h, Kind: "value", Reference: h, Value: h})
	}
	v := browse(t, htmlPage(t, res), 1280, 800)
	if len(v.Console) > 0 {
		t.Errorf("console output (something ran or was blocked):\n%s", strings.Join(v.Console, "\n"))
	}
	if f := v.foreign(); len(f) > 0 {
		t.Errorf("the page asked for %v", f)
	}
	n := countTags(v.DOM)
	for _, el := range []string{"img", "iframe", "object", "embed", "link", "form"} {
		if n[el] != 0 {
			t.Errorf("%d <%s> elements in the DOM: a hostile string became markup", n[el], el)
		}
	}
	for _, a := range regexp.MustCompile(`<a [^>]*>`).FindAllString(v.DOM, -1) {
		if !regexp.MustCompile(`^<a href="#[a-z0-9-]+">$`).MatchString(a) {
			t.Errorf("a link that is not the page's own: %s", a)
		}
	}
	if n["script"] != 4 || n["style"] != 1 || n["meta"] != 4 {
		t.Errorf("script %d, style %d, meta %d; want the page's own 4, 1, 4", n["script"], n["style"], n["meta"])
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(2)&gt;"} {
		if !strings.Contains(v.DOM, want) {
			t.Errorf("the hostile string %q is not shown as text", want)
		}
	}
	if len(v.Layout.Figures) < 10 {
		t.Errorf("%d figures drawn; hostile labels must not stop the charts", len(v.Layout.Figures))
	}
}

// Charts can be read precisely: hovering a spectrum shows each target's
// exact latency at that percentile, and dragging across a time series
// zooms it (its axis shows another range).
func TestDemoChartsHoverAndZoom(t *testing.T) {
	tooltest.Long(t)
	v := browse(t, htmlPage(t, demoResults(t)), 1280, 800)
	over := func(id string) (x, y, w, h float64) {
		t.Helper()
		box, err := chromedp.Run(v.ctx, chromedp.Evaluate[[4]float64](`(() => {
		  const o = document.querySelector('#`+id+` .u-over');
		  o.scrollIntoView({block: 'center'});
		  const r = o.getBoundingClientRect();
		  return [r.left, r.top, r.width, r.height];
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		return box[0], box[1], box[2], box[3]
	}
	read := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(v.ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	legend := `[...document.querySelectorAll('#fig-scenario-1-spectrum-0 .u-legend .u-value')].map(e => e.textContent).join(' | ')`
	if before := read(legend); strings.Trim(before, "–| ") != "" {
		t.Errorf("legend before hovering: %q; want no values", before)
	}
	x, y, w, h := over("fig-scenario-1-spectrum-0")
	if err := chromedp.Do(v.ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x+w*0.5, y+h*0.5)); err != nil {
		t.Fatal(err)
	}
	got := read(legend)
	if !regexp.MustCompile(`^[0-9.]+% \| [0-9.,]+ (ns|µs|ms|s) \| [0-9.,]+ (ns|µs|ms|s)$`).MatchString(got) {
		t.Errorf("legend while hovering the spectrum: %q; want the percentile and both targets' latency", got)
	}

	// the time under the cursor at the chart's middle, before and after
	// dragging from 30 % to 60 % of its width
	at := func() string {
		t.Helper()
		x, y, w, h := over("fig-metric-0")
		if err := chromedp.Do(v.ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x+w*0.5, y+h*0.5)); err != nil {
			t.Fatal(err)
		}
		return read(`document.querySelector('#fig-metric-0 .u-legend .u-value').textContent`)
	}
	before := at()
	x, y, w, h = over("fig-metric-0")
	err := chromedp.Do(v.ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x+w*0.3, y+h*0.5),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x+w*0.3, y+h*0.5, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x+w*0.45, y+h*0.5, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x+w*0.6, y+h*0.5, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x+w*0.6, y+h*0.5, chromedp.ButtonLeft))
	if err != nil {
		t.Fatal(err)
	}
	if after := at(); after == before || !strings.HasSuffix(after, " s") {
		t.Errorf("time under the cursor after dragging across the chart: %q, before %q; want another (zoomed) time", after, before)
	}
}

// swapped is the demo's run with targets a and b trading names: held
// against the demo, a regresses and b improves wherever they differ.
func swapped(t *testing.T) *results.Results {
	t.Helper()
	r := demoResults(t)
	swap := func(s *string) {
		switch *s {
		case "a":
			*s = "b"
		case "b":
			*s = "a"
		}
	}
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		for j := range sc.Rounds {
			swap(&sc.Rounds[j].Target)
		}
		for j := range sc.Summary {
			swap(&sc.Summary[j].Target)
		}
		for j := range sc.Comparisons {
			swap(&sc.Comparisons[j].Base)
			swap(&sc.Comparisons[j].Candidate)
		}
	}
	return r
}

// tandem compare --format html: the tally and every change at a glance,
// each scenario's spectra of both runs overlaid, readable on a phone.
func TestComparisonPageInChromium(t *testing.T) {
	tooltest.Long(t)
	base, head := demoResults(t), swapped(t)
	cmp, err := verdict.CompareRuns(base, head, verdict.Options{MaxRegression: 5})
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Regressions == 0 {
		t.Fatal("swapping a and b regressed nothing; the test has nothing to show")
	}
	var page bytes.Buffer
	if err := Comparison(&page, "html", cmp); err != nil {
		t.Fatal(err)
	}
	v := browse(t, page.Bytes(), 390, 844)
	if len(v.Console) > 0 || len(v.foreign()) > 0 {
		t.Errorf("console %v, requests %v; want neither", v.Console, v.foreign())
	}
	l := v.Layout
	if l.ScrollWidth > l.InnerWidth {
		t.Errorf("scrollWidth %d > innerWidth %d (%v)", l.ScrollWidth, l.InnerWidth, l.Wide)
	}
	regressed := 0
	for _, ch := range cmp.Changes {
		if changeClass(ch) == "regressed" {
			regressed++
		}
	}
	want := fmt.Sprintf("%d regressed", regressed)
	if !strings.Contains(l.Glance, "(beyond 5 %") || !strings.Contains(l.Glance, want) || !strings.Contains(l.Glance, "improved") {
		t.Errorf("glance lacks the tally (%q):\n%s", want, l.Glance)
	}
	for _, ch := range cmp.Changes {
		if !strings.Contains(l.Glance, fmt.Sprintf("%s, %s, %s", ch.Scenario, ch.Target, ch.Where())) {
			t.Errorf("glance lacks %s %s %s", ch.Scenario, ch.Target, ch.Where())
		}
	}
	if len(l.Figures) < len(base.Scenarios) {
		t.Errorf("%d spectra; want one per scenario and level at least (%d scenarios)", len(l.Figures), len(base.Scenarios))
	}
	for _, f := range l.Figures {
		if !f.Canvas || !strings.HasPrefix(f.ID, "fig-"+f.Section+"-spectrum-") {
			t.Errorf("figure %s in %q, drawn %v", f.ID, f.Section, f.Canvas)
		}
	}
	if n := strings.Count(v.DOM, "head (median") + strings.Count(v.DOM, "base (median"); n < 4*len(base.Scenarios) {
		t.Errorf("%d legend entries of base and head; want a and b in both runs on every spectrum", n)
	}
}

// Dark mode follows the system setting, charts included; print drops the
// buttons and keeps every chart.
func TestDemoReportDarkAndPrint(t *testing.T) {
	tooltest.Long(t)
	v := browse(t, htmlPage(t, demoResults(t)), 1280, 800)
	style := func() [3]string {
		t.Helper()
		s, err := chromedp.Run(v.ctx, chromedp.Evaluate[[3]string](`(() => {
		  const st = (sel) => getComputedStyle(document.querySelector(sel));
		  return [st('html').backgroundColor, st('button').display, String(document.querySelectorAll('figure canvas').length)];
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	media := func(m string, features ...*emulation.MediaFeature) {
		t.Helper()
		if _, err := chromedp.Call(v.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: m, Features: features}); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(v.ctx, chromedp.Reload(), chromedp.WaitReady("body")); err != nil {
			t.Fatal(err)
		}
	}
	light := style()
	media("", &emulation.MediaFeature{Name: "prefers-color-scheme", Value: "dark"})
	dark := style()
	if light[0] != "rgb(255, 255, 255)" || dark[0] != "rgb(21, 21, 21)" {
		t.Errorf("background light %s, dark %s; want white, then near black", light[0], dark[0])
	}
	media("print")
	printed := style()
	if printed[1] != "none" || light[1] == "none" || printed[2] != light[2] || light[2] == "0" {
		t.Errorf("print: button display %s (screen %s), %s charts (screen %s); want no buttons and every chart", printed[1], light[1], printed[2], light[2])
	}
}

// A finding's histogram is not printed: its button saves it as a file,
// made in the page from the embedded results.
func TestFindingEvidenceDownloads(t *testing.T) {
	tooltest.Long(t)
	res := demoResults(t)
	v := browse(t, htmlPage(t, res), 1280, 800)
	for k, ev := range res.Findings[0].Evidence {
		if strings.HasSuffix(k, "hdr") && strings.Contains(v.DOM, "<td>"+ev+"</td>") {
			t.Errorf("histogram %s is printed in the page", k)
		}
	}
	dir := t.TempDir()
	_, err := chromedp.CallBrowser(v.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir})
	if err != nil {
		t.Fatal(err)
	}
	key, err := chromedp.Run(v.ctx, chromedp.Evaluate[string](`(() => {
	  const b = document.querySelector('#finding-1 button[data-download=evidence]');
	  b.click();
	  return b.dataset.key;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	want := res.Findings[0].Evidence[key]
	if len(want) <= longEvidence && !strings.HasSuffix(key, "hdr") {
		t.Fatalf("evidence %q of %d characters has a download button", key, len(want))
	}
	deadline := time.Now().Add(time.Minute)
	for {
		files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
		if len(files) == 1 {
			got, err := os.ReadFile(files[0])
			if err == nil && string(got) == want {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no download of %q with its whole value in %s (files %v)", key, dir, files)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
