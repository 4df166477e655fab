package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/verdict"
)

// changeClass sorts a change for the glance: regressed, improved,
// unchanged, inconclusive, not comparable, new, missing or withheld.
func changeClass(ch verdict.Change) string {
	switch {
	case ch.Regression && ch.Verdict == verdict.Missing:
		return string(verdict.Missing)
	case ch.Verdict == stats.Inconclusive: // undecided, failing the gate or not: no regression found
		return string(stats.Inconclusive)
	case ch.Regression:
		return "regressed"
	case ch.Verdict == verdict.New:
		return string(verdict.New)
	case ch.Verdict == stats.Faster && ch.Change < 0:
		return "improved"
	case ch.Verdict.Speed(), ch.Verdict == stats.Indistinguishable:
		return "unchanged"
	case ch.Verdict == stats.Inconclusive, ch.Verdict == stats.NotComparable:
		return string(ch.Verdict)
	}
	return string(stats.Withheld)
}

// changeColour colours a change's glance line as a verdict.
var changeColour = map[string]string{"regressed": verdictClass(stats.Failing), string(verdict.Missing): verdictClass(stats.Failing),
	"improved": verdictClass(stats.Faster), "unchanged": verdictClass(stats.Indistinguishable), string(verdict.New): "single",
	string(stats.Inconclusive): verdictClass(stats.Inconclusive), string(stats.NotComparable): "withheld", string(stats.Withheld): "withheld"}

// comparisonHTML writes base against head on one page: the tally and one
// line per change at a glance, then per scenario its changes and each
// target's latency spectrum in both runs overlaid (base dashed).
func comparisonHTML(w io.Writer, c verdict.Comparison) error {
	g := glance{Trust: c.Warnings, Family: familyLine(&c.Family)}
	tally := map[string]int{}
	for _, ch := range c.Changes {
		class := changeClass(ch)
		tally[class]++
		head := fmt.Sprintf("%s, %s, %s", ch.Scenario, ch.Target, ch.Where())
		text := changeText(ch)
		if !strings.HasPrefix(text, class) { // "inconclusive: …" says its class
			text = class + ": " + text
		}
		if ch.Verdict == stats.Inconclusive && ch.Regression {
			text += " (" + gateMark(ch) + ")"
		}
		g.Verdicts = append(g.Verdicts, mark{Anchor: compareAnchor(ch.Scenario, c), Head: human.Printable(head),
			Text: human.Printable(text), Class: changeColour[class]})
	}
	var parts []string
	for _, k := range []string{"regressed", "improved", "unchanged", string(stats.Inconclusive), string(stats.NotComparable), string(verdict.New), string(verdict.Missing), string(stats.Withheld)} {
		if tally[k] > 0 || k == "regressed" || k == "unchanged" {
			parts = append(parts, fmt.Sprintf("%d %s", tally[k], k))
		}
	}
	g.Summary = outcome(c)
	g.Trust = append(g.Trust, c.Failures...)
	g.Summary += ": " + strings.Join(parts, ", ")
	for i := range g.Trust {
		g.Trust[i] = human.Printable(g.Trust[i])
	}
	d := pageData{Title: "tandem compare", Glance: &g}
	col := colours{}
	if c.Base != nil && c.Head != nil {
		d.Title = human.Printable(fmt.Sprintf("%s: base %s vs head %s", c.Head.Study.Name,
			c.Base.CreatedAt.Format("2006-01-02 15:04"), c.Head.CreatedAt.Format("2006-01-02 15:04")))
		col = targetColours(c.Head)
		for name := range targetColours(c.Base) {
			if _, ok := col[name]; !ok {
				col[name] = len(col)
			}
		}
		g.Where = "both runs: " + machineLine(c.Head)
		if bm := machineLine(c.Base); bm != machineLine(c.Head) {
			g.Where = "base: " + bm + " · head: " + machineLine(c.Head)
		}
	}
	d.Targets = swatches(col)
	for i, name := range compareScenarios(c) {
		t := table{Header: []string{"target", "level", "verdict", "head/base", "base [best … worst]", "head [best … worst]", "p", "errors (base → head)"}}
		sc := scenarioIn(c, name)
		for _, ch := range c.Changes {
			if ch.Scenario != name {
				continue
			}
			ratio := "–"
			if ch.Verdict.Speed() {
				ratio = stats.Ratio(ch.Ratio)
			}
			text := changeText(ch)
			if mark := gateMark(ch); mark != "" {
				text += " (" + mark + ")"
			}
			p, baseRange, headRange := "–", "–", "–"
			switch {
			case ch.Verdict == verdict.New || ch.Verdict == verdict.Missing || ch.Kind == verdict.KindKnee || ch.Kind == verdict.KindCost:
			case ch.Rate > 0 || ch.Kind == verdict.KindStartup: // mean latencies, ready times
				p = stats.Sig(ch.P)
				baseRange = fmt.Sprintf("%s … %s", human.Duration(ch.BaseRange[0]), human.Duration(ch.BaseRange[1]))
				headRange = fmt.Sprintf("%s … %s", human.Duration(ch.HeadRange[0]), human.Duration(ch.HeadRange[1]))
			case sc != nil:
				p = stats.Sig(ch.P)
				baseRange = fmt.Sprintf("%s … %s", value(sc, ch.BaseRange[0]), value(sc, ch.BaseRange[1]))
				headRange = fmt.Sprintf("%s … %s", value(sc, ch.HeadRange[0]), value(sc, ch.HeadRange[1]))
			}
			t.Rows = append(t.Rows, []string{ch.Target, ch.Where(), text, ratio, baseRange, headRange, p, errorShares(ch)})
		}
		s := section{ID: fmt.Sprintf("scenario-%d", i+1), Title: "Scenario " + human.Printable(name), Tables: printable([]table{t})}
		if c.Base != nil && c.Head != nil {
			s.Figures = spectraCompared(s.ID, name, c.Base, c.Head, col)
		}
		d.Sections = append(d.Sections, s)
	}
	return render(w, d, nil)
}

// scenarioIn finds a scenario of the comparison's head (else its base),
// for its direction and unit; nil without the runs.
func scenarioIn(c verdict.Comparison, name string) *results.Scenario {
	for _, r := range []*results.Results{c.Head, c.Base} {
		if r == nil {
			continue
		}
		for i := range r.Scenarios {
			if r.Scenarios[i].Name == name {
				return &r.Scenarios[i]
			}
		}
	}
	return nil
}

// compareScenarios lists the changes' scenarios in order.
func compareScenarios(c verdict.Comparison) []string {
	var out []string
	for _, ch := range c.Changes {
		if !slices.Contains(out, ch.Scenario) {
			out = append(out, ch.Scenario)
		}
	}
	return out
}

func compareAnchor(scenario string, c verdict.Comparison) string {
	for i, name := range compareScenarios(c) {
		if name == scenario {
			return fmt.Sprintf("scenario-%d", i+1)
		}
	}
	return ""
}

// spectraCompared draws, per level of a scenario, each target's median
// round in the base (dashed) and the head (solid) on one percentile axis.
func spectraCompared(id, name string, base, head *results.Results, col colours) []figure {
	find := func(r *results.Results) *results.Scenario {
		for i := range r.Scenarios {
			if r.Scenarios[i].Name == name {
				return &r.Scenarios[i]
			}
		}
		return nil
	}
	bs, hs := find(base), find(head)
	var lvls []int
	for _, sc := range []*results.Scenario{hs, bs} {
		if sc == nil {
			continue
		}
		for _, l := range levels(sc) {
			if !slices.Contains(lvls, l) {
				lvls = append(lvls, l)
			}
		}
	}
	var out []figure
	for li, level := range lvls {
		var lines []line
		var load results.Load
		for _, side := range []struct {
			name string
			sc   *results.Scenario
		}{{"head", hs}, {"base", bs}} {
			if side.sc == nil {
				continue
			}
			load = side.sc.Load
			for _, tgt := range targetsOf(side.sc) {
				if rd := medianRound(side.sc, tgt, level); rd != nil {
					lines = append(lines, line{label: fmt.Sprintf("%s %s (median %s)", tgt, side.name, roundOf(side.sc, rd)),
						color: col[tgt], dash: side.name == "base", pts: spectrum(rd.Sample.HDR)})
				}
			}
		}
		f := aligned(figure{ID: fmt.Sprintf("%s-spectrum-%d", id, li), Title: fmt.Sprintf("Latency spectrum: %s, %s (base dashed, head solid)", name, loadCell(load, level)),
			Kind: "spectrum", X: "percentile", Y: "latency", XUnit: "%", YUnit: "ns", LogY: true}, lines)
		if f != nil {
			out = append(out, *f)
		}
	}
	return out
}
