package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/metrics"
	"github.com/tandem-bench/tandem/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// chart is one figure of the HTML report: an inline SVG drawn from the
// results (gonum/plot escapes every label it writes).
type chart struct {
	Title string
	SVG   template.HTML
}

// palette is colour-blind safe (Okabe–Ito), in the order targets appear.
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255}, color.RGBA{213, 94, 0, 255}, color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255}, color.RGBA{230, 159, 0, 255}, color.RGBA{86, 180, 233, 255},
	color.RGBA{0, 0, 0, 255},
}

const (
	chartW = 16 * vg.Centimeter
	chartH = 8 * vg.Centimeter
	// maxCharts bounds the figures of one page.
	maxCharts = 60
)

// render draws a plot as inline SVG (without the XML prolog).
func render(p *plot.Plot) (template.HTML, error) {
	c := vgsvg.New(chartW, chartH)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	// let the page size the figure: keep the viewBox, drop fixed sizes
	s = strings.Replace(s, "<svg ", `<svg role="img" class="chart" preserveAspectRatio="xMinYMin meet" `, 1)
	return template.HTML(s), nil // #nosec: produced by vgsvg, which escapes text
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// addLine draws one named line with points, in the i-th colour.
func addLine(p *plot.Plot, i int, name string, xy plotter.XYs) error {
	if len(xy) == 0 {
		return nil
	}
	l, s, err := plotterLinePoints(xy)
	if err != nil {
		return err
	}
	col := palette[i%len(palette)]
	l.Color, s.Color = col, col
	s.Radius = vg.Points(1.5)
	p.Add(l, s)
	p.Legend.Add(name, l)
	return nil
}

func plotterLinePoints(xy plotter.XYs) (*plotter.Line, *plotter.Scatter, error) {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil, nil, err
	}
	s, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, nil, err
	}
	return l, s, nil
}

// nines places a percentile on a log scale of its tail: 0 for the
// median's neighbourhood … 5 for 99.999 %.
func nines(q float64) float64 { return -math.Log10(1 - q/100) }

type ninesTicks struct{}

func (ninesTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for _, q := range []float64{0, 50, 90, 99, 99.9, 99.99, 99.999} {
		if v := nines(q); v >= min-1e-9 && v <= max+1e-9 {
			ts = append(ts, plot.Tick{Value: v, Label: strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", q), "0"), ".") + "%"})
		}
	}
	return ts
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
	sort.Slice(rs, func(i, j int) bool { return rs[i].Headline < rs[j].Headline })
	return rs[(len(rs)-1)/2]
}

// charts draws the page's figures: per scenario and level the latency
// spectrum and the per-second series of each target's median round; per
// sweep latency against throughput and latency over time; per target its
// scraped metrics.
func charts(r *results.Results) []chart {
	var out []chart
	add := func(title string, p *plot.Plot) {
		if len(out) >= maxCharts {
			return
		}
		svg, err := render(p)
		if err == nil {
			out = append(out, chart{Title: title, SVG: svg})
		}
	}
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		for _, level := range levels(sc) {
			name := sc.Name
			if sc.Load.Model == "closed" {
				name = fmt.Sprintf("%s, %s", sc.Name, loadCell(sc.Load, level))
			}
			spec := newPlot("Latency spectrum: "+name, "percentile", "latency (ms)")
			spec.X.Tick.Marker = ninesTicks{}
			spec.Y.Scale = plot.LogScale{}
			spec.Y.Tick.Marker = plot.LogTicks{Prec: -1}
			ser := newPlot("Per second: "+name, "time (s)", "p50 and p99 latency (ms)")
			drawn, seconds := false, 0
			for ti, tgt := range targetsOf(sc) {
				rd := medianRound(sc, tgt, level)
				if rd == nil {
					continue
				}
				h, err := hdr.Merge(rd.Sample.HDR)
				if err != nil || h.TotalCount() == 0 {
					continue
				}
				var xy plotter.XYs
				for _, q := range []float64{0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999} {
					if q > 0 && float64(h.TotalCount())*(1-q/100) < 1 {
						break // beyond what this many samples can say
					}
					v := h.ValueAtQuantile(q)
					if q == 0 {
						v = h.Min()
					}
					xy = append(xy, plotter.XY{X: nines(q), Y: math.Max(float64(v)/1e6, 1e-3)})
				}
				addLine(spec, ti, tgt, xy)
				var p50, p99 plotter.XYs
				for _, s := range rd.Sample.Series {
					if s.OK > 0 {
						p50 = append(p50, plotter.XY{X: float64(s.T), Y: float64(s.P50Ns) / 1e6})
						p99 = append(p99, plotter.XY{X: float64(s.T), Y: float64(s.P99Ns) / 1e6})
					}
				}
				addLine(ser, 2*ti, tgt+" p50", p50)
				addLine(ser, 2*ti+1, tgt+" p99", p99)
				drawn = true
				seconds = max(seconds, len(p50))
			}
			if drawn {
				add(spec.Title.Text, spec)
				if seconds >= 3 { // a run of a second or two has no time course to show
					add(ser.Title.Text, ser)
				}
			}
		}
	}
	for _, sw := range r.Sweeps {
		lt := newPlot(fmt.Sprintf("Latency against throughput: %s on %s", sw.Scenario, sw.Target), "confirmed per second", "mean latency (ms)")
		byConns := map[int]plotter.XYs{}
		var conns []int
		for _, c := range sw.Cells {
			if c.Confirmed == 0 {
				continue
			}
			if _, ok := byConns[c.Connections]; !ok {
				conns = append(conns, c.Connections)
			}
			byConns[c.Connections] = append(byConns[c.Connections], plotter.XY{X: c.ConfirmedPerSecond(), Y: c.LatencyNs.Mean / 1e6})
		}
		sort.Ints(conns)
		for i, n := range conns {
			xy := byConns[n]
			sort.Slice(xy, func(a, b int) bool { return xy[a].X < xy[b].X })
			addLine(lt, i, fmt.Sprintf("%d connections", n), xy)
		}
		if len(conns) > 0 {
			add(lt.Title.Text, lt)
		}
		ot := newPlot(fmt.Sprintf("Latency over time: %s on %s", sw.Scenario, sw.Target), "time since the sweep began (s)", "mean latency per block (ms)")
		drawn := false
		var t0 int64
		for i, c := range sw.Cells {
			if i == 0 {
				t0 = c.StartUnixNs
			}
			var xy plotter.XYs
			for _, b := range c.Blocks {
				xy = append(xy, plotter.XY{X: float64(b.TimeUnixNs-t0) / 1e9, Y: float64(b.MeanLatencyNs) / 1e6})
			}
			if len(xy) > 0 {
				addLine(ot, i, fmt.Sprintf("c=%d r=%s", c.Connections, rateText(c.Rate)), xy)
				drawn = true
			}
		}
		if drawn {
			add(ot.Title.Text, ot)
		}
	}
	for _, tg := range r.Targets {
		if tg.Metrics == nil {
			continue
		}
		for _, s := range tg.Metrics.Series {
			if len(s.Points) < 2 {
				continue
			}
			p := newPlot(fmt.Sprintf("%s: %s", tg.Name, s.Name), "time (s)", s.Name)
			var xy plotter.XYs
			for _, pt := range s.Points {
				xy = append(xy, plotter.XY{X: pt[0] / 1e9, Y: pt[1]})
			}
			label := s.Name
			if v := metrics.Slope(s.Points); !math.IsNaN(v) && v != 0 {
				label += fmt.Sprintf(" (%s per min)", human.Number(v))
			}
			addLine(p, 0, label, xy)
			add(p.Title.Text, p)
		}
	}
	return out
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
