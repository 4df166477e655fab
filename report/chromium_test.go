package report

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/results"
)

// chromium finds a headless Chromium. The test command installs the Debian
// package and sets TANDEM_REQUIRE_CHROMIUM=1, so there a missing browser
// fails the test.
func chromium(t *testing.T) string {
	t.Helper()
	return tooltest.Need(t, "TANDEM_REQUIRE_CHROMIUM", "chromium", "chromium-browser", "google-chrome")
}

// browse renders the page in headless Chromium at 1280×800 and returns the
// DOM as Chromium built it, the console lines it logged, and the
// screenshot's path.
func browse(t *testing.T, page []byte) (dom, console, shot string) {
	t.Helper()
	bin := chromium(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	shot = filepath.Join(dir, "shot.png")
	common := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=0", "--window-size=1280,800"}
	run := func(extra ...string) (string, string) {
		cmd := exec.Command(bin, append(append(common, extra...), "file://"+file)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("chromium: %v\n%s", err, errb.String())
			}
		case <-time.After(90 * time.Second):
			cmd.Process.Kill()
			t.Fatal("chromium did not finish in 90 s")
		}
		return out.String(), errb.String()
	}
	dom, log1 := run("--dump-dom")
	_, log2 := run("--screenshot=" + shot)
	var lines []string
	for _, l := range strings.Split(log1+log2, "\n") {
		if strings.Contains(l, ":CONSOLE") {
			lines = append(lines, l)
		}
	}
	return dom, strings.Join(lines, "\n"), shot
}

var tag = regexp.MustCompile(`<(table|svg|figure|script|img|iframe|object|embed|a |link|style|meta|form)\b`)

func countTags(dom string) map[string]int {
	n := map[string]int{}
	for _, m := range tag.FindAllStringSubmatch(dom, -1) {
		n[strings.TrimSpace(m[1])]++
	}
	return n
}

// The demo's report, as a person sees it: every table and chart rendered,
// nothing logged to the console (no script, nothing blocked by the page's
// policy), a screenshot at 1280×800 that is not blank.
func TestDemoReportInChromium(t *testing.T) {
	res, err := results.Read("testdata/demo-results.json")
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := HTML(&page, res); err != nil {
		t.Fatal(err)
	}
	dom, console, shot := browse(t, page.Bytes())
	if console != "" {
		t.Errorf("console output:\n%s", console)
	}
	n := countTags(dom)
	wantTables := len(tables(res, htmlDiffRows))
	for _, f := range res.Findings {
		if len(f.Evidence) > 0 {
			wantTables++ // each finding's evidence
		}
	}
	if n["table"] != wantTables || wantTables < 10 {
		t.Errorf("%d tables in the DOM; want %d (at least 10)", n["table"], wantTables)
	}
	if n["svg"] < 10 || n["figure"] != n["svg"] {
		t.Errorf("%d charts (svg), %d figures; want at least 10, one per figure", n["svg"], n["figure"])
	}
	if n["script"] != 1 || !strings.Contains(dom, `<script type="application/json" id="tandem-results">`) {
		t.Errorf("%d script elements; want only the embedded results data", n["script"])
	}
	for _, want := range []string{"Compatibility", "Sweep getblock-saturation on a", "Startup from empty", "delayed-ack-stall", "Latency spectrum"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	checkShot(t, shot)
}

func checkShot(t *testing.T, path string) {
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
	if b.Dx() != 1280 || b.Dy() != 800 {
		t.Errorf("screenshot %dx%d; want 1280x800", b.Dx(), b.Dy())
	}
	dark := 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r+g+bl < 3*0x8000 {
				dark++
			}
		}
	}
	if dark < 500 {
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
	res, err := results.Read("testdata/demo-results.json")
	if err != nil {
		t.Fatal(err)
	}
	h := strings.Join(hostile, " ")
	res.Study.Name, res.Study.Description = h, h
	res.Targets[0].Error = h
	res.Warnings = append(res.Warnings, h)
	res.Findings = append(res.Findings, results.Finding{ID: h, Target: h, Summary: h, Evidence: map[string]string{h: h}})
	if len(res.Scenarios) > 0 {
		res.Scenarios[0].Name = h
		res.Scenarios[0].Rounds[0].Sample.Errors = map[string]int64{h: 1}
	}
	if c := res.Compat; c != nil && len(c.Cases) > 0 {
		c.Cases[0].Vars = map[string]any{h: h}
		c.Cases[0].Differences = append(c.Cases[0].Differences, results.Difference{Target: h, Path: h, Kind: "value", Reference: h, Value: h})
	}
	var page bytes.Buffer
	if err := HTML(&page, res); err != nil {
		t.Fatal(err)
	}
	dom, console, _ := browse(t, page.Bytes())
	if console != "" {
		t.Errorf("console output (something ran or loaded):\n%s", console)
	}
	n := countTags(dom)
	for _, el := range []string{"img", "iframe", "object", "embed", "a", "link", "form"} {
		if n[el] != 0 {
			t.Errorf("%d <%s> elements in the DOM: a hostile string became markup", n[el], el)
		}
	}
	if n["script"] != 1 || n["style"] != 1 || n["meta"] != 3 {
		t.Errorf("script %d, style %d, meta %d; want the page's own 1, 1, 3", n["script"], n["style"], n["meta"])
	}
	if !strings.Contains(dom, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the hostile name is not shown as text")
	}
}
