package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/metrics"
	"github.com/tandem-bench/tandem/results"
)

// figure is one chart of the HTML page as data, drawn by the page's
// script: the x values every series shares and one y per x (null where a
// series has no point), so hovering shows each series' exact value.
type figure struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Kind is spectrum (x is a percentile, placed on a log scale of its
	// tail), time (x in seconds) or xy.
	Kind string `json:"kind"`
	X    string `json:"x"`
	Y    string `json:"y"`
	// XUnit and YUnit say how to print a value: ns (a duration), /s (a
	// rate), B (bytes) or empty (a number).
	XUnit string `json:"xunit,omitempty"`
	YUnit string `json:"yunit,omitempty"`
	LogY  bool   `json:"logy,omitempty"`
	// XInt marks whole-number x values (rounds): ticks at whole numbers.
	XInt   bool        `json:"xint,omitempty"`
	Xs     []float64   `json:"xs"`
	Series []figSeries `json:"series"`
	// Derived are the figures quoted beside the chart: a metric's mean,
	// max and slope per target.
	Derived []string `json:"-"`
	// Marks are events drawn as vertical lines across a time chart.
	Marks []figMark `json:"marks,omitempty"`
}

// figMark is an event on a time chart: a perturbation of a target.
type figMark struct {
	X     float64 `json:"x"`
	Label string  `json:"label"`
	Color int     `json:"color"`
}

// perturbationMarks are the marks of a round's perturbations, at their
// second of the round.
func perturbationMarks(rd *results.Round, col colours) []figMark {
	var out []figMark
	for _, ev := range rd.Perturbations {
		label := eventWho(ev) + " " + ev.Action
		out = append(out, figMark{X: float64(ev.AtNs) / 1e9, Label: label, Color: col[ev.Target]})
	}
	return out
}

// figSeries is one line of a figure, in its target's colour.
type figSeries struct {
	Label string     `json:"label"`
	Color int        `json:"color"`
	Dash  bool       `json:"dash,omitempty"`
	Ys    []*float64 `json:"ys"`
}

// line is a series before the figure aligns it on the shared x values.
type line struct {
	label string
	color int
	dash  bool
	pts   [][2]float64
}

// maxFigures bounds the charts of one page.
const maxFigures = 80

// aligned lays the lines on the sorted union of their x values; a figure
// without a point is nil.
func aligned(f figure, lines []line) *figure {
	var xs []float64
	for _, l := range lines {
		for _, p := range l.pts {
			if finite(p[0]) && finite(p[1]) {
				xs = append(xs, p[0])
			}
		}
	}
	if len(xs) == 0 {
		return nil
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	f.Xs = xs
	for _, l := range lines {
		ys := make([]*float64, len(xs))
		n := 0
		for _, p := range l.pts {
			if !finite(p[0]) || !finite(p[1]) {
				continue
			}
			i, _ := slices.BinarySearch(xs, p[0])
			v := p[1]
			ys[i] = &v
			n++
		}
		if n > 0 {
			f.Series = append(f.Series, figSeries{Label: l.label, Color: l.color, Dash: l.dash, Ys: ys})
		}
	}
	if !f.LogY && spansDecades(f.Series) {
		f.LogY = true
		f.Y += " (log scale)"
	}
	return &f
}

// logSpan is how far apart a chart's values must be for a log axis: a
// linear one would draw the smaller values flat on zero.
const logSpan = 20

// spansDecades reports whether every value of the series is above zero
// and the largest is more than logSpan times the smallest.
func spansDecades(series []figSeries) bool {
	lo, hi := math.Inf(1), 0.0
	for _, s := range series {
		for _, y := range s.Ys {
			if y == nil {
				continue
			}
			if *y <= 0 {
				return false // a log axis cannot show it
			}
			lo, hi = min(lo, *y), max(hi, *y)
		}
	}
	return hi > logSpan*lo
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// colours gives each target one colour for the whole page: its place
// among the run's targets.
type colours map[string]int

func targetColours(r *results.Results) colours {
	c := colours{}
	add := func(name string) {
		if _, ok := c[name]; !ok {
			c[name] = len(c)
		}
	}
	for _, t := range r.Targets {
		add(t.Name)
	}
	for i := range r.Scenarios {
		for _, t := range targetsOf(&r.Scenarios[i]) {
			add(t)
		}
	}
	for _, sw := range r.Sweeps {
		add(sw.Target)
	}
	return c
}

// nines places a percentile on a log scale of its tail: 0 for the
// minimum, 1 for the 90th, 2 for the 99th … 5 for the 99.999th.
func nines(q float64) float64 { return -math.Log10(1 - q/100) }

// spectrumQuantiles are the percentiles a spectrum shows, as far as a
// histogram's count can tell them apart.
var spectrumQuantiles = []float64{0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999}

// spectrum is a round's latency at each percentile its count supports, in
// nanoseconds.
func spectrum(enc string) [][2]float64 {
	h, err := hdr.Merge(enc)
	if err != nil || h.TotalCount() == 0 {
		return nil
	}
	var pts [][2]float64
	for _, q := range spectrumQuantiles {
		if q > 0 && float64(h.TotalCount())*(1-q/100) < 1 {
			break // beyond what this many samples can say
		}
		v := h.ValueAtQuantile(q)
		if q == 0 {
			v = h.Min()
		}
		pts = append(pts, [2]float64{nines(q), math.Max(float64(v), 1)})
	}
	return pts
}

// medianRound is the round whose headline is a target's median at a level.
func medianRound(sc *results.Scenario, tgt string, level int) *results.Round {
	var rs []*results.Round
	for i := range sc.Rounds {
		r := &sc.Rounds[i]
		if r.Target == tgt && r.Concurrency == level && !r.Failed && r.Sample.HDR != "" {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	slices.SortStableFunc(rs, func(a, b *results.Round) int { return cmp.Compare(a.Headline, b.Headline) })
	return rs[(len(rs)-1)/2]
}

// roundOf names a round for a legend: "round 2 of 3".
func roundOf(sc *results.Scenario, rd *results.Round) string {
	n := 0
	for _, r := range sc.Rounds {
		if r.Target == rd.Target && r.Concurrency == rd.Concurrency {
			n++
		}
	}
	return fmt.Sprintf("round %d of %d", rd.Round, n)
}

// scenarioFigures draws a scenario per level: the latency spectrum of each
// target's median round overlaid on one percentile axis, and the same
// rounds' p50 and p99 per second.
func scenarioFigures(id string, sc *results.Scenario, col colours) []figure {
	var out []figure
	for li, level := range levels(sc) {
		name := sc.Name
		if len(levels(sc)) > 1 || sc.Load.Model == results.ModelClosed {
			name = fmt.Sprintf("%s, %s", sc.Name, loadCell(sc.Load, level))
		}
		var spec, secs, answers []line
		var marks []figMark
		longest := 0
		for _, tgt := range targetsOf(sc) {
			rd := medianRound(sc, tgt, level)
			if rd == nil {
				continue
			}
			label := fmt.Sprintf("%s (median %s)", tgt, roundOf(sc, rd))
			spec = append(spec, line{label: label, color: col[tgt], pts: spectrum(rd.Sample.HDR)})
			var p50, p99 [][2]float64
			for _, s := range rd.Sample.Series {
				if s.OK > 0 {
					p50 = append(p50, [2]float64{float64(s.T), float64(s.P50Ns)})
					p99 = append(p99, [2]float64{float64(s.T), float64(s.P99Ns)})
				}
			}
			secs = append(secs, line{label: tgt + " p50, " + roundOf(sc, rd), color: col[tgt], pts: p50},
				line{label: tgt + " p99, " + roundOf(sc, rd), color: col[tgt], dash: true, pts: p99})
			longest = max(longest, len(p50))
			if len(rd.Perturbations) > 0 { // the load through the faults: answers and failures per second
				marks = append(marks, perturbationMarks(rd, col)...)
				var ok, failed [][2]float64
				for _, s := range rd.Sample.Series {
					ok = append(ok, [2]float64{float64(s.T), float64(s.OK)})
					failed = append(failed, [2]float64{float64(s.T), float64(s.Errors)})
				}
				answers = append(answers, line{label: tgt + " ok, " + roundOf(sc, rd), color: col[tgt], pts: ok},
					line{label: tgt + " failed, " + roundOf(sc, rd), color: col[tgt], dash: true, pts: failed})
			}
		}
		if f := roundsFigure(fmt.Sprintf("%s-rounds-%d", id, li), name, sc, level, col); f != nil {
			out = append(out, *f)
		}
		if f := aligned(figure{ID: fmt.Sprintf("%s-spectrum-%d", id, li), Title: "Latency spectrum: " + name, Kind: "spectrum",
			X: "percentile", Y: "latency", XUnit: "%", YUnit: "ns", LogY: true}, spec); f != nil {
			out = append(out, *f)
		}
		if longest < 3 && len(marks) == 0 {
			continue // a run of a second or two has no time course to show
		}
		if f := aligned(figure{ID: fmt.Sprintf("%s-seconds-%d", id, li), Title: "Per second: " + name, Kind: "time",
			X: "second of the round", Y: "latency (p50 solid, p99 dashed)", XUnit: "s", YUnit: "ns", Marks: marks}, secs); f != nil {
			out = append(out, *f)
		}
		if f := aligned(figure{ID: fmt.Sprintf("%s-answers-%d", id, li), Title: "Answers per second through the perturbations: " + name,
			Kind: "time", X: "second of the round", Y: "answers (ok solid, failed dashed)", XUnit: "s", YUnit: "/s", Marks: marks}, answers); f != nil {
			out = append(out, *f)
		}
	}
	return out
}

// roundsFigure draws each round's headline (the figure the verdict
// compares) per target, in the order the rounds ran: the spread a verdict
// weighs, and any drift over the run. Nil with fewer than two rounds.
func roundsFigure(id, name string, sc *results.Scenario, level int, col colours) *figure {
	by := map[string][][2]float64{}
	n := 0
	for _, rd := range sc.Rounds {
		if rd.Concurrency != level || rd.Failed {
			continue
		}
		by[rd.Target] = append(by[rd.Target], [2]float64{float64(rd.Round), rd.Headline})
		n = max(n, len(by[rd.Target]))
	}
	if n < 2 {
		return nil
	}
	var lines []line
	for _, tgt := range targetsOf(sc) {
		lines = append(lines, line{label: tgt, color: col[tgt], pts: by[tgt]})
	}
	what, unit := "p50 latency", "ns"
	if sc.Direction == results.Higher {
		what, unit = "throughput ("+sc.Unit+"s)", "/s"
	}
	if sc.Load.Model == results.ModelDrain && sc.Direction == results.Lower {
		what = "drain time"
	}
	return aligned(figure{ID: id, Title: "Each round: " + name, Kind: "xy", X: "round", Y: what, YUnit: unit, XInt: true}, lines)
}

// sweepFigures draws one sweep scenario's targets together: mean latency
// against confirmed throughput, one line per target and connection count,
// and latency per block over the sweep's time.
func sweepFigures(id, scenario string, sweeps []results.Sweep, col colours) []figure {
	var lt, ot []line
	for _, sw := range sweeps {
		byConns := map[int][][2]float64{}
		for _, c := range sw.Cells {
			if c.Confirmed > 0 {
				byConns[c.Connections] = append(byConns[c.Connections], [2]float64{c.ConfirmedPerSecond(), c.LatencyNs.Mean})
			}
		}
		conns := slices.Sorted(maps.Keys(byConns))
		for i, n := range conns {
			pts := byConns[n]
			slices.SortFunc(pts, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
			label := sw.Target
			if len(conns) > 1 {
				label = fmt.Sprintf("%s, %d connection%s", sw.Target, n, map[bool]string{true: "", false: "s"}[n == 1])
			}
			lt = append(lt, line{label: label, color: col[sw.Target], dash: i%2 == 1, pts: pts})
		}
		var pts [][2]float64
		var t0 int64
		for i, c := range sw.Cells {
			if i == 0 {
				t0 = c.StartUnixNs
			}
			for _, b := range c.Blocks {
				if b.Txs == 0 {
					continue // a block without the cell's transactions has no latency
				}
				pts = append(pts, [2]float64{float64(b.TimeUnixNs-t0) / 1e9, float64(b.MeanLatencyNs)})
			}
		}
		ot = append(ot, line{label: sw.Target, color: col[sw.Target], pts: pts})
	}
	var out []figure
	if f := aligned(figure{ID: id + "-throughput", Title: "Latency against throughput: " + scenario, Kind: "xy",
		X: "confirmed per second", Y: "mean latency", XUnit: "/s", YUnit: "ns"}, lt); f != nil {
		out = append(out, *f)
	}
	if f := aligned(figure{ID: id + "-blocks", Title: "Latency per block over the sweep: " + scenario, Kind: "time",
		X: "seconds since the sweep began", Y: "mean latency per block", XUnit: "s", YUnit: "ns"}, ot); f != nil {
		out = append(out, *f)
	}
	return out
}

// machineWide reports whether a series describes the machine rather than
// a target: every target's scrape carries the same values.
func machineWide(name string) bool {
	return name == metrics.Load1 || strings.HasPrefix(name, "machine_")
}

// metricFigures draws each scraped series once, every target overlaid on
// one time axis (seconds since the first scrape); a machine-wide series
// once, from the first target that has it. Beside each: mean, max and
// the slope per minute per target.
func metricFigures(r *results.Results, col colours) []figure {
	targets := r.Targets
	type key struct{ name, labels string }
	var keys []key
	lines := map[key][]line{}
	derived := map[key][]string{}
	var t0 int64
	for _, tg := range targets {
		if m := tg.Metrics; m != nil && (t0 == 0 || m.StartUnixNs < t0) {
			t0 = m.StartUnixNs
		}
	}
	for _, tg := range targets {
		m := tg.Metrics
		if m == nil {
			continue
		}
		kindOf := metrics.Kinds(*m)
		figs := map[string]metrics.Figure{}
		for _, f := range metrics.Figures(*m) {
			figs[f.Name+"\x00"+labelText(f.Labels)] = f
		}
		for _, s := range m.Series {
			if len(s.Points) < 2 {
				continue
			}
			kind, drawn := kindOf(s)
			if !drawn {
				continue // a histogram's buckets and sum: its observations' chart sums it up
			}
			// a group's nodes share a chart: one line (and colour) each
			node, labels := s.Labels["node"], s.Labels
			if node != "" {
				labels = maps.Clone(labels)
				delete(labels, "node")
			}
			if kind != metrics.KindGauge {
				d := rateLine(s, kind, figs, m.StartUnixNs-t0, tg.Name, node)
				k := key{d.title, labelText(labels)}
				if _, seen := lines[k]; !seen {
					keys = append(keys, k)
				}
				d.line.color = col[tg.Name]
				if node != "" {
					d.line.color = len(col) + len(lines[k])
				}
				lines[k] = append(lines[k], d.line)
				derived[k] = append(derived[k], d.derived)
				continue
			}
			k := key{s.Name, labelText(labels)}
			if _, seen := lines[k]; seen && machineWide(s.Name) {
				continue
			}
			if _, seen := lines[k]; !seen {
				keys = append(keys, k)
			}
			pts := make([][2]float64, len(s.Points))
			sum, hi := 0.0, math.Inf(-1)
			for i, p := range s.Points {
				pts[i] = [2]float64{(float64(m.StartUnixNs-t0) + p[0]) / 1e9, p[1]}
				sum += p[1]
				hi = max(hi, p[1])
			}
			who, colour := tg.Name, col[tg.Name]
			if node != "" {
				who = tg.Name + " " + node
				colour = len(col) + len(lines[k]) // each node a colour no target has
			}
			if machineWide(s.Name) {
				who = "machine"
			}
			lines[k] = append(lines[k], line{label: who, color: colour, pts: pts})
			unit := metricUnit(s.Name)
			d := fmt.Sprintf("%s: mean %s, max %s", who, unitText(sum/float64(len(pts)), unit), unitText(hi, unit))
			if v := metrics.Slope(s.Points); finite(v) {
				d += fmt.Sprintf(", %s per minute", unitText(v, unit))
			}
			derived[k] = append(derived[k], d)
		}
	}
	var out []figure
	for i, k := range keys {
		title := k.name
		if k.labels != "" {
			title += " {" + k.labels + "}"
		}
		f := aligned(figure{ID: fmt.Sprintf("metric-%d", i), Title: title, Kind: "time", X: "seconds since scraping began", Y: k.name,
			XUnit: "s", YUnit: metricUnit(k.name), Derived: derived[k], Marks: runMarks(r, t0, col)}, lines[k])
		if f != nil {
			out = append(out, *f)
		}
	}
	return out
}

func labelText(labels map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		out = append(out, k+"="+labels[k])
	}
	return strings.Join(out, " ")
}

// rateDrawing is a counter's, or a histogram's observations', chart line:
// its rate per second between scrapes.
type rateDrawing struct {
	title, derived string
	line           line
}

// rateLine draws a counter (or a histogram's _count) as its rate per
// second between scrapes; its derived text is the rate over the run, and a
// histogram's quantiles. shift moves the series onto the first target's
// clock (ns).
func rateLine(s results.Series, kind metrics.Kind, figs map[string]metrics.Figure, shift int64, target, node string) rateDrawing {
	who := target
	if node != "" {
		who = target + " " + node
	}
	var pts [][2]float64
	for _, p := range metrics.PerSecond(s.Points) {
		pts = append(pts, [2]float64{(float64(shift) + p[0]) / 1e9, p[1]})
	}
	d := rateDrawing{title: s.Name + " per second", line: line{label: who, pts: pts}}
	if kind == metrics.KindHistogram {
		family := strings.TrimSuffix(s.Name, "_count")
		d.title = family + " observations per second"
		d.derived = who + ": " + figureWords(figs[family+"\x00"+labelText(s.Labels)])
		return d
	}
	d.derived = who + ": " + figureWords(figs[s.Name+"\x00"+labelText(s.Labels)]) + " over the run"
	return d
}

// metricUnit guesses a Prometheus series' unit from its name's suffix.
func metricUnit(name string) string {
	switch {
	case strings.HasSuffix(name, "_bytes"):
		return "B"
	case strings.HasSuffix(name, "_seconds"):
		return "s"
	}
	return ""
}

func unitText(v float64, unit string) string {
	switch unit {
	case "B":
		if v >= 0 && v < math.MaxInt64 {
			return human.Bytes(int64(v))
		}
	case "ns":
		return human.Duration(v)
	case "s":
		return human.Duration(v * 1e9)
	case "/s":
		return human.Number(v) + "/s"
	}
	return human.Number(v)
}

// levels lists a scenario's levels in order of first appearance.
func levels(sc *results.Scenario) []int {
	return firstSeen(sc.Summary, func(s results.Summary) int { return s.Concurrency })
}

// targetsOf lists a scenario's targets in order of first appearance.
func targetsOf(sc *results.Scenario) []string {
	return firstSeen(sc.Summary, func(s results.Summary) string { return s.Target })
}

// firstSeen lists the distinct keys of a summary, in order.
func firstSeen[K comparable](sum []results.Summary, key func(results.Summary) K) []K {
	var out []K
	for _, s := range sum {
		if k := key(s); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// runMarks are the run's perturbations on the metrics' time axis (seconds
// since t0, in unix ns).
func runMarks(r *results.Results, t0 int64, col colours) []figMark {
	var out []figMark
	for _, sc := range r.Scenarios {
		for _, rd := range sc.Rounds {
			for _, ev := range rd.Perturbations {
				label := eventWho(ev) + " " + ev.Action
				out = append(out, figMark{X: float64(ev.Time.UnixNano()-t0) / 1e9, Label: label, Color: col[ev.Target]})
			}
		}
	}
	return out
}
