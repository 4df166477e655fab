package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/cost"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// glance is the top of the HTML page: what a reader who stops there must
// know, each line linking down to its section.
type glance struct {
	// Summary is the one-line answer, when there is one (a comparison's
	// tally).
	Summary              string
	When, Where, Pinning string
	// Trust lists what weakens the numbers: an interrupted run, failed
	// targets, shared cores, a busy generator, the run's warnings.
	Trust []string
	// Family says how the verdicts' false alarms are held together.
	Family string
	// Verdicts has one line per scenario, level and candidate.
	Verdicts []mark
	Compat   []mark
	Sweeps   []mark
	Findings []mark
	Costs    []mark
}

// mark is one line of the glance: a head (what), the text (the outcome),
// a class that colours it and the section it links to.
type mark struct {
	Anchor, Head, Text, Class string
	// Tone is a verdict's (toneOf).
	Tone tone
}

// shortVerdict says a comparison in a few words: the ratio of a real
// difference, the reason of one withheld.
func shortVerdict(sc *results.Scenario, c results.Comparison) string {
	s := speedWords(c.Candidate, c.Base, c.Verdict, c.Ratio, sc.Direction == results.Higher, c.Reason, c.Estimate)
	if c.ClientBound && c.Verdict.Speed() {
		s += " (client-bound)"
	}
	return s
}

func scenarioAnchor(i int) string { return fmt.Sprintf("scenario-%d", i+1) }

func sweepAnchor(i int) string { return fmt.Sprintf("sweep-%d", i+1) }

func findingAnchor(i int) string { return fmt.Sprintf("finding-%d", i+1) }

// sweepGroups lists the sweeps by scenario, in order of first appearance.
func sweepGroups(sweeps []results.Sweep) [][]results.Sweep {
	var names []string
	by := map[string][]results.Sweep{}
	for _, sw := range sweeps {
		if _, ok := by[sw.Scenario]; !ok {
			names = append(names, sw.Scenario)
		}
		by[sw.Scenario] = append(by[sw.Scenario], sw)
	}
	out := make([][]results.Sweep, len(names))
	for i, n := range names {
		out[i] = by[n]
	}
	return out
}

func newGlance(r *results.Results) glance {
	g := glance{When: r.CreatedAt.Format("2006-01-02 15:04 UTC"), Where: machineLine(r), Family: familyLine(r.Family)}
	g.Pinning, g.Trust = pinning(r)
	if r.Interrupted {
		g.Trust = append(g.Trust, "the run was interrupted: these are the measurements made before")
	}
	for _, t := range r.Targets {
		if t.Error != "" {
			g.Trust = append(g.Trust, fmt.Sprintf("target %s failed: %s", t.Name, firstLine(t.Error)))
		}
	}
	g.Trust = append(g.Trust, r.Warnings...)
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		for _, level := range levels(sc) {
			head := sc.Name
			if len(levels(sc)) > 1 || sc.Load.Model == results.ModelClosed {
				head += ", " + loadCell(sc.Load, level)
			}
			n := 0
			for _, c := range sc.Comparisons {
				if c.Concurrency == level {
					g.Verdicts = append(g.Verdicts, mark{Anchor: scenarioAnchor(i), Head: head, Text: shortVerdict(sc, c), Class: verdictClass(c.Verdict),
						Tone: toneOf(c.Verdict)})
					n++
				}
			}
			if n == 0 { // one target: its headline is the result
				var parts []string
				for _, s := range sc.Summary {
					if s.Concurrency == level && s.N > 0 {
						parts = append(parts, fmt.Sprintf("%s %s", s.Target, value(sc, s.Median)))
					}
				}
				if len(parts) == 0 {
					parts = []string{"no successful round"}
				}
				g.Verdicts = append(g.Verdicts, mark{Anchor: scenarioAnchor(i), Head: head, Text: "median " + strings.Join(parts, ", ") + " (nothing to compare with)", Class: "single"})
			}
		}
	}
	if c := r.Compat; c != nil {
		g.Compat = []mark{compatMark(c)}
	}
	for i, group := range sweepGroups(r.Sweeps) {
		for _, sw := range group {
			var knees []string
			for _, p := range sw.Saturation {
				knees = append(knees, saturationText(p))
			}
			for _, s := range sw.Search {
				knees = append(knees, fmt.Sprintf("c=%d sustains %s/s, saturates at %s/s", s.Connections, rateText(s.Sustained), rateText(s.Saturated)))
			}
			if len(knees) == 0 {
				knees = []string{"no cell ran"}
			}
			g.Sweeps = append(g.Sweeps, mark{Anchor: sweepAnchor(i), Head: sw.Scenario + " on " + sw.Target, Text: strings.Join(knees, "; "), Class: "single"})
		}
	}
	for _, fg := range groupFindings(r.Findings) {
		g.Findings = append(g.Findings, mark{Anchor: findingAnchor(fg.First), Head: fg.head(), Text: fg.Summary, Class: "finding"})
	}
	for _, c := range r.Costs {
		m := mark{Anchor: "costs", Head: c.Name, Class: "single"}
		if c.Error != "" {
			m.Text, m.Class = "failed: "+firstLine(c.Error), verdictClass(stats.Failing)
		} else {
			m.Text = fmt.Sprintf("%s instructions, %s allocations, %s bytes per operation (%s)", human.Number(c.InstructionsPerOp),
				wholeOrSig(c.AllocationsPerOp), wholeOrSig(c.BytesPerOp), cost.Exactness(c))
		}
		g.Costs = append(g.Costs, m)
	}
	for _, ms := range [][]mark{g.Verdicts, g.Compat, g.Sweeps, g.Findings, g.Costs} {
		for i := range ms { // no mark hides or reorders text
			ms[i].Head, ms[i].Text = human.Printable(ms[i].Head), human.Printable(ms[i].Text)
		}
	}
	for i := range g.Trust {
		g.Trust[i] = human.Printable(g.Trust[i])
	}
	return g
}

// compatMark sums the differential tests up: cases, calls and the
// candidates' answers classed as the Compatibility table classes them
// (tallyCompat): answers that failed alike are not differences.
func compatMark(c *results.Compat) mark {
	calls := map[string]bool{}
	unsent := 0
	for _, cs := range c.Cases {
		calls[cs.Call] = true
		if len(cs.Answers) == 0 {
			unsent++
		}
	}
	t := tallyCompat(c)
	of := ""
	if n := len(c.Targets) - 1; n > 1 {
		of = fmt.Sprintf(", %d answers of %d candidates", t.answers, n)
	}
	text := fmt.Sprintf("%d cases over %d calls%s: %s", len(c.Cases), len(calls), of, t.words())
	if unsent > 0 {
		text += fmt.Sprintf("; %d not sent", unsent)
	}
	class := verdictClass(stats.Indistinguishable)
	if c.Failed > 0 {
		text += fmt.Sprintf("; %d fail where agreement is required", c.Failed)
		class = verdictClass(stats.Failing)
	} else if t.differ() > 0 || t.oracleFailed > 0 {
		class = "withheld"
	}
	return mark{Anchor: "compat", Head: "against " + c.Reference, Text: text, Class: class}
}

// pinning says where the targets ran (the machine line says where the
// generator did) and what about it
// weakens the numbers: a target sharing the generator's cores.
func pinning(r *results.Results) (string, []string) {
	gen := r.Machine.GeneratorCPUs
	var parts, trust []string
	if len(gen) == 0 {
		parts = append(parts, "generator not pinned")
	}
	for _, t := range r.Targets {
		if len(t.CPUs) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s on %v", t.Name, t.CPUs))
		var shared []int
		for _, c := range t.CPUs {
			if slices.Contains(gen, c) {
				shared = append(shared, c)
			}
		}
		if len(shared) > 0 {
			trust = append(trust, fmt.Sprintf("%s shares CPUs %v with the generator: both compete for them", t.Name, shared))
		}
	}
	return strings.Join(parts, ", "), trust
}
