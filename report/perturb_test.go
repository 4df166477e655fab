package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/internal/browsertest"
	"github.com/tandem-bench/tandem/results"
)

// TestPerturbationsInReports: a run with a kill, a pause and a
// wipe-and-restart under load (testdata/perturbed-results.json, as the
// runner wrote it) lists each perturbation with its recovery in the text
// report, marks it on the scenario's time charts, and Chromium draws the
// marks.
func TestPerturbationsInReports(t *testing.T) {
	res, err := results.Read("testdata/perturbed-results.json")
	if err != nil {
		t.Fatal(err)
	}
	var txt bytes.Buffer
	if err := Text(&txt, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Perturbations: outage", "kill", "Perturbations: stall", "pause", "wipe-and-restart", "ok/s before → during"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, txt.String())
		}
	}
	figs := scenarioFigures("s0", &res.Scenarios[0], targetColours(res))
	var answers, seconds *figure
	for i := range figs {
		switch {
		case strings.Contains(figs[i].ID, "-answers-"):
			answers = &figs[i]
		case strings.Contains(figs[i].ID, "-seconds-"):
			seconds = &figs[i]
		}
	}
	if answers == nil || seconds == nil {
		t.Fatalf("figures %v; want the answers and the latency per second", figs)
	}
	ev := res.Scenarios[0].Rounds[0].Perturbations[0]
	for _, f := range []*figure{answers, seconds} {
		if len(f.Marks) != 1 || f.Marks[0].X != float64(ev.AtNs)/1e9 || f.Marks[0].Label != "a kill" {
			t.Errorf("figure %s marks %+v; want one, a kill at %.3f s", f.ID, f.Marks, float64(ev.AtNs)/1e9)
		}
	}
	if len(answers.Series) != 2 {
		t.Errorf("answers figure has %d series; want ok and failed", len(answers.Series))
	}

	page := htmlPage(t, res)
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	b := browsertest.Open(t, 1280, 800)
	b.Go(t, "file://"+file)
	marked := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('figure .plot')].filter(p => p.dataset.marks && p.querySelector('canvas')).map(p => p.closest('figure').id)`)
	if len(marked) != 8 { // four scenarios, two time charts each
		t.Errorf("figures drawn with marks: %v; want 8", marked)
	}
	if c := b.Console(); len(c) > 0 {
		t.Errorf("console output:\n%s", strings.Join(c, "\n"))
	}
}
