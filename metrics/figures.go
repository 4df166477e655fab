package metrics

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tandem-bench/tandem/results"
)

// Kind is how a scraped family is read: what its figures are.
type Kind string

// Kinds of family.
const (
	// KindCounter is read as its rate per second over the run.
	KindCounter Kind = "counter"
	// KindGauge is read as its last, mean and maximum.
	KindGauge Kind = "gauge"
	// KindHistogram is read as quantiles of the observations made during
	// the run and their rate per second.
	KindHistogram Kind = "histogram"
)

// Quantiles are the histogram quantiles a Figure gives.
var Quantiles = []float64{0.5, 0.9, 0.99}

// Figure is one family's series (one label set; a histogram's buckets
// together) summed up over the run.
type Figure struct {
	// Name is the family's name (a histogram's, without _bucket); Labels
	// are the series' (a histogram's without le).
	Name   string
	Labels map[string]string
	Kind   Kind
	// Unit is the values' unit: "s", "B" or "" (a count); a rate's is the
	// unit per second.
	Unit string
	// Points counts the scrapes that gave a value.
	Points int
	// Last, Mean and Max are a gauge's.
	Last, Mean, Max float64
	// Rate is a counter's increase, or a histogram's observations, per
	// second over the run; NaN with fewer than two points.
	Rate float64
	// Quantile holds a histogram's Quantiles over the observations made
	// between the first and the last scrape; nil when there were none.
	Quantile []float64
	// PerMinute is a gauge's least-squares slope per minute, for the
	// series whose slope is a rate worth quoting (heights); else NaN.
	PerMinute float64
}

// Figures reads every scraped family as its kind says: a histogram as
// quantiles and a rate (its _bucket, _sum and _count series folded into
// one figure), a counter as its rate, a gauge as last, mean and maximum.
// Kinds come from the exposition (m.Families) where it said, else from
// names: _bucket with an le label is a histogram's, _total a counter.
// Figures are in series order.
func Figures(m results.Metrics) []Figure {
	hist := histogramFamilies(m)
	var out []Figure
	byKey := map[string]int{}
	buckets := map[string][]bucketSeries{}
	for _, s := range m.Series {
		if len(s.Points) == 0 {
			continue
		}
		if fam, part, ok := histogramPart(s.Name, hist); ok {
			labels := maps.Clone(s.Labels)
			le := labels["le"]
			delete(labels, "le")
			key := seriesKey(fam, labels)
			i, seen := byKey[key]
			if !seen {
				i = len(out)
				byKey[key] = i
				out = append(out, Figure{Name: fam, Labels: labels, Kind: KindHistogram, Unit: unitOf(fam, m.Families[fam]),
					Rate: math.NaN(), PerMinute: math.NaN()})
			}
			switch part {
			case "_bucket":
				if ub, err := strconv.ParseFloat(le, 64); err == nil {
					buckets[key] = append(buckets[key], bucketSeries{le: ub, points: s.Points})
				}
			case "_count":
				out[i].Points = len(s.Points)
				out[i].Rate = Rate(s.Points)
			}
			continue
		}
		out = append(out, plain(s, m.Families))
	}
	for key, bs := range buckets {
		f := &out[byKey[key]]
		f.Quantile = quantilesOver(bs)
		if f.Points == 0 { // no _count series: the +Inf bucket counts them
			for _, b := range bs {
				if math.IsInf(b.le, 1) {
					f.Points, f.Rate = len(b.points), Rate(b.points)
				}
			}
		}
	}
	return out
}

// plain is the figure of a series that is not part of a histogram.
func plain(s results.Series, families map[string]results.MetricFamily) Figure {
	f := Figure{Name: s.Name, Labels: s.Labels, Points: len(s.Points), Rate: math.NaN(), PerMinute: math.NaN()}
	info, known := families[s.Name]
	if !known { // a summary's _sum and _count are counters of the summary
		for _, suffix := range []string{"_sum", "_count"} {
			if base, ok := strings.CutSuffix(s.Name, suffix); ok && families[base].Type == "summary" {
				info, known = results.MetricFamily{Type: "counter", Unit: families[base].Unit, Help: families[base].Help}, true
				if suffix == "_count" {
					info.Unit = "1" // observations, not the summary's unit
				}
			}
		}
	}
	counter := info.Type == "counter" || !known && strings.HasSuffix(s.Name, "_total")
	f.Unit = unitOf(s.Name, info)
	if counter {
		f.Kind, f.Rate = KindCounter, Rate(s.Points)
		return f
	}
	f.Kind = KindGauge
	f.Last = s.Points[len(s.Points)-1][1]
	f.Max = math.Inf(-1)
	var sum float64
	for _, p := range s.Points {
		sum += p[1]
		f.Max = max(f.Max, p[1])
	}
	f.Mean = sum / float64(len(s.Points))
	if _, ok := slopeSeries[s.Name]; ok {
		f.PerMinute = Slope(s.Points)
	}
	return f
}

// histogramFamilies are the names of the histogram families: those the
// exposition calls histograms, and, where it said nothing, the names of
// _bucket series with an le label.
func histogramFamilies(m results.Metrics) map[string]bool {
	out := map[string]bool{}
	for name, f := range m.Families {
		if f.Type == "histogram" || f.Type == "gaugehistogram" {
			out[name] = true
		}
	}
	for _, s := range m.Series {
		if base, ok := strings.CutSuffix(s.Name, "_bucket"); ok {
			if _, le := s.Labels["le"]; le {
				if _, said := m.Families[base]; !said {
					out[base] = true
				}
			}
		}
	}
	return out
}

// histogramPart says whether a series is a histogram's _bucket, _sum or
// _count, and whose.
func histogramPart(name string, hist map[string]bool) (family, part string, ok bool) {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, cut := strings.CutSuffix(name, suffix); cut && hist[base] {
			return base, suffix, true
		}
	}
	return "", "", false
}

// unitOf is a family's unit: its UNIT, else the unit its HELP text or
// name says ("_seconds", "_bytes", before any "_total").
func unitOf(name string, info results.MetricFamily) string {
	switch u := strings.ToLower(info.Unit); u {
	case "seconds":
		return "s"
	case "bytes":
		return "B"
	case "":
	default:
		return ""
	}
	base := strings.TrimSuffix(name, "_total")
	help := strings.ToLower(info.Help)
	switch {
	case strings.HasSuffix(base, "_seconds"), strings.Contains(help, "in seconds"):
		return "s"
	case strings.HasSuffix(base, "_bytes"), strings.Contains(help, "in bytes"):
		return "B"
	}
	return ""
}

// Rate is a counter's increase per second over its points (t in ns), a
// reset (a value below the one before) counted as a restart from 0, as
// Prometheus' rate does; NaN with fewer than two points or none apart in
// time.
func Rate(points [][2]float64) float64 {
	if len(points) < 2 {
		return math.NaN()
	}
	span := points[len(points)-1][0] - points[0][0]
	if span <= 0 {
		return math.NaN()
	}
	return Increase(points) / (span / 1e9)
}

// Increase is a counter's increase from its first point to its last, a
// reset counted as a restart from 0.
func Increase(points [][2]float64) float64 {
	var inc float64
	for i := 1; i < len(points); i++ {
		d := points[i][1] - points[i-1][1]
		if d < 0 {
			d = points[i][1] // reset
		}
		inc += d
	}
	return inc
}

// bucketSeries is one cumulative bucket of a histogram over the run.
type bucketSeries struct {
	le     float64
	points [][2]float64
}

// quantilesOver is Quantiles of the observations the buckets counted
// during the run (each bucket's increase); nil when there were none.
func quantilesOver(bs []bucketSeries) []float64 {
	buckets := make([]Bucket, 0, len(bs))
	for _, b := range bs {
		buckets = append(buckets, Bucket{UpperBound: b.le, Count: Increase(b.points)})
	}
	var out []float64
	for _, q := range Quantiles {
		v := Quantile(q, buckets)
		if math.IsNaN(v) {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// Bucket is one cumulative histogram bucket: observations ≤ UpperBound.
type Bucket struct {
	UpperBound, Count float64
}

// Quantile estimates the q-quantile of cumulative buckets as Prometheus'
// histogram_quantile does: linear interpolation within the bucket the rank
// falls in (from 0 for the first bucket, if its bound is positive); the
// highest finite bound when the rank falls in the +Inf bucket. NaN without
// a +Inf bucket, with fewer than two buckets, or with no observations.
func Quantile(q float64, buckets []Bucket) float64 {
	if q < 0 || q > 1 || math.IsNaN(q) {
		return math.NaN()
	}
	bs := slices.Clone(buckets)
	sort.Slice(bs, func(i, j int) bool { return bs[i].UpperBound < bs[j].UpperBound })
	if len(bs) < 2 || !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
		return math.NaN()
	}
	for i := 1; i < len(bs); i++ { // counts are cumulative: never less than the bucket before
		bs[i].Count = max(bs[i].Count, bs[i-1].Count)
	}
	total := bs[len(bs)-1].Count
	if total == 0 {
		return math.NaN()
	}
	rank := q * total
	b := sort.Search(len(bs)-1, func(i int) bool { return bs[i].Count >= rank })
	switch {
	case b == len(bs)-1:
		return bs[len(bs)-2].UpperBound
	case b == 0 && bs[0].UpperBound <= 0:
		return bs[0].UpperBound
	}
	start, end, count := 0.0, bs[b].UpperBound, bs[b].Count
	if b > 0 {
		start = bs[b-1].UpperBound
		count -= bs[b-1].Count
		rank -= bs[b-1].Count
	}
	if count == 0 {
		return end
	}
	return start + (end-start)*(rank/count)
}

// Kinds returns how each of m's series is read: its kind, and false for a
// histogram's _bucket and _sum series, which only its Figure sums up (a
// histogram's _count is its observations, KindHistogram).
func Kinds(m results.Metrics) func(s results.Series) (Kind, bool) {
	hist := histogramFamilies(m)
	return func(s results.Series) (Kind, bool) {
		if _, part, ok := histogramPart(s.Name, hist); ok {
			return KindHistogram, part == "_count"
		}
		return plain(results.Series{Name: s.Name, Points: [][2]float64{{0, 0}}}, m.Families).Kind, true
	}
}

// PerSecond is a counter's rate between each scrape and the one before:
// points [t_ns, increase per second] at the later scrape's time, a reset
// counted as a restart from 0.
func PerSecond(points [][2]float64) [][2]float64 {
	var out [][2]float64
	for i := 1; i < len(points); i++ {
		dt := (points[i][0] - points[i-1][0]) / 1e9
		if dt <= 0 {
			continue
		}
		d := points[i][1] - points[i-1][1]
		if d < 0 {
			d = points[i][1]
		}
		out = append(out, [2]float64{points[i][0], d / dt})
	}
	return out
}
