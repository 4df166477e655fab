// Package report renders results.json for people: terminal tables (Text,
// TextColor), GitHub Markdown (Markdown) and one self-contained HTML page
// (HTML); and exports it for tools: one CSV row per round (CSV), the Go
// benchmark format for benchstat (Bench) and HdrHistogram's interval log
// (HDRLog). Its formatters (Duration, Bytes, Number, Printable,
// MarkdownEscape) serve tandem's other output too. Every figure is
// recomputed from the results, never stored twice. An indistinguishable
// pair is never shown with a percentage or ratio.
package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// table is a rendered table: a title, a header and rows of cells.
type table struct {
	Title  string
	Note   string
	Header []string
	Rows   [][]string
}

// Duration formats nanoseconds for people with three significant digits:
// 812µs, 40.3ms, 1.25s; whole seconds from 1,000 s on (1,230s). It rounds
// before it picks the unit, so 999.6µs is 1ms, never 1e+03µs.
func Duration(ns float64) string {
	if math.IsNaN(ns) || math.IsInf(ns, 0) {
		return "–"
	}
	r := math.Round(math.Abs(ns))
	sign := ""
	if ns < 0 && r > 0 {
		sign = "-"
	}
	if r < 1000 {
		return fmt.Sprintf("%s%.0fns", sign, r)
	}
	f := 1.0 // three significant digits: r a multiple of f, r/f < 1,000
	for r/f >= 1000 {
		f *= 10
	}
	r = math.Round(r/f) * f
	switch {
	case r >= 1e12:
		return sign + Number(r/1e9) + "s"
	case r >= 1e9:
		return fmt.Sprintf("%s%.3gs", sign, r/1e9)
	case r >= 1e6:
		return fmt.Sprintf("%s%.3gms", sign, r/1e6)
	}
	return fmt.Sprintf("%s%.3gµs", sign, r/1e3)
}

// Bytes formats a byte count: 1.40 GiB, 320 KiB. It rounds before it
// picks the unit, so 1,023.9 KiB is 1.00 MiB, never 1,024 KiB.
func Bytes(n int64) string {
	const unit = 1024
	if n > -unit && n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, exp := math.Abs(float64(n))/unit, 0
	for exp < 5 && math.Round(v) >= unit {
		v /= unit
		exp++
	}
	if n < 0 {
		v = -v
	}
	return Number(v) + fmt.Sprintf(" %ciB", "KMGTPE"[exp])
}

// Number formats a figure with three significant digits below 1,000 and
// as a whole number with thousands separators above. It rounds before it
// picks the form, so 9.996 is 10.0 (not 10.00) and 99.96 is 100.
func Number(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	for _, f := range []struct {
		decimals int
		below    float64
	}{{2, 10}, {1, 100}} {
		s := strconv.FormatFloat(v, 'f', f.decimals, 64)
		if x, _ := strconv.ParseFloat(s, 64); math.Abs(x) < f.below {
			if x == 0 {
				s = strings.TrimPrefix(s, "-") // -0.001 is 0.00
			}
			return s
		}
	}
	digits := strconv.FormatFloat(math.Round(math.Abs(v)), 'f', 0, 64)
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func value(sc *results.Scenario, v float64) string {
	if sc.Direction == "higher" {
		return Number(v) + "/s"
	}
	return Duration(v)
}

// verdictText says a comparison in words; only a real difference gets a ratio.
func verdictText(sc *results.Scenario, c results.Comparison) string {
	var s string
	switch c.Verdict {
	case "faster", "slower":
		f := c.Ratio
		if (sc.Direction == "lower") == (c.Verdict == "faster") {
			f = 1 / f // express as "N× faster/slower" with N ≥ 1
		}
		s = fmt.Sprintf("%s is %.3g× %s than %s", c.Candidate, f, c.Verdict, c.Base)
		if p := c.Paired; p != nil {
			s += fmt.Sprintf(" (paired ratio in [%.3g, %.3g] with %.1f%% confidence; sign test p = %.2g over %d rounds)",
				p.Lo, p.Hi, p.Confidence*100, p.SignP, p.N)
		}
	case "indistinguishable":
		s = fmt.Sprintf("%s and %s are indistinguishable", c.Candidate, c.Base)
	case stats.Failing:
		s = fmt.Sprintf("%s is %s", c.Candidate, c.Reason) // the reason starts "failing: "
	case stats.NoiseReference:
		s = "noise reference: " + c.Reason
	default:
		s = fmt.Sprintf("%s vs %s: verdict withheld (%s)", c.Candidate, c.Base, c.Reason)
	}
	var marks []string
	if c.ServerBound {
		marks = append(marks, "server-bound: round trips fill the run")
	}
	if c.ClientBound {
		marks = append(marks, "client-bound")
	}
	if len(marks) > 0 {
		s += " [" + strings.Join(marks, ", ") + "]"
	}
	return s
}

// tables lays out the results as the tables every format shows.
func tables(r *results.Results, diffRows int) []table {
	var ts []table
	if len(r.Services) > 0 {
		sv := table{Title: "Services", Note: "shared infrastructure, started once before the targets", Header: []string{"service", "kind", "endpoints", "up in", "status"}}
		for _, s := range r.Services {
			var eps []string
			for _, k := range slices.Sorted(maps.Keys(s.Endpoints)) {
				eps = append(eps, k+" "+s.Endpoints[k])
			}
			status := "ok"
			if s.Error != "" {
				status = "failed: " + firstLine(s.Error)
			}
			up := "–"
			if s.Kind != "external" {
				up = Duration(float64(s.StartNs))
			}
			sv.Rows = append(sv.Rows, []string{s.Name, s.Kind, strings.Join(eps, ", "), up, status})
		}
		ts = append(ts, sv)
	}
	started := slices.ContainsFunc(r.Targets, func(t results.Target) bool { return t.Startup != nil || t.Error != "" })
	st := table{Title: "Startup from empty", Note: "with several starts: median [best … worst]", Header: []string{"target", "first answer", "ready", "CPU", "peak RSS", "disk", "status"}}
	for _, t := range r.Targets {
		row := []string{t.Name, "–", "–", "–", "–", "–", "ok"}
		if s := t.Startup; s != nil {
			row = []string{t.Name, Duration(float64(s.FirstAnswerNs)), Duration(float64(s.ReadyNs)), Duration(float64(s.CPUNs)),
				Bytes(s.PeakRSSBytes), Bytes(s.DiskBytes), "ok"}
			if runs := t.StartupRuns; len(runs) > 1 {
				ns := func(get func(results.Startup) int64) string {
					return spread(runs, get, func(v int64) string { return Duration(float64(v)) })
				}
				b := func(get func(results.Startup) int64) string { return spread(runs, get, Bytes) }
				row = []string{t.Name, ns(func(s results.Startup) int64 { return s.FirstAnswerNs }), ns(func(s results.Startup) int64 { return s.ReadyNs }),
					ns(func(s results.Startup) int64 { return s.CPUNs }), b(func(s results.Startup) int64 { return s.PeakRSSBytes }),
					b(func(s results.Startup) int64 { return s.DiskBytes }), fmt.Sprintf("ok, %d starts", len(runs))}
			}
		}
		if t.Error != "" {
			row[6] = "failed: " + firstLine(t.Error)
		}
		st.Rows = append(st.Rows, row)
	}
	if started {
		ts = append(ts, st)
	}
	if c := r.Compat; c != nil {
		ts = append(ts, compatTables(c, diffRows)...)
	}
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		metric := "p50 latency"
		if sc.Direction == "higher" {
			metric = "throughput (" + sc.Unit + "s/s)"
		}
		open := sc.Load.Model == "open" || sc.Load.Model == "batched"
		header := []string{"target", "load", metric + ": best [median … worst]", "rounds", "errors"}
		if open {
			header = append(header, "offered", "achieved", "dropped")
		}
		t := table{Title: "Scenario " + sc.Name, Header: append(header, "verdict")}
		t.Note = fmt.Sprintf("call %s, %s loop, %s is better", sc.Call, sc.Load.Model, sc.Direction)
		if sc.Load.Model == "drain" {
			t.Note = fmt.Sprintf("call %s: each run fills a fresh queue and times the consumer's drain, first delivery to last ack; %s is better", sc.Call, sc.Direction)
		}
		if sc.Requests > 0 {
			t.Note += fmt.Sprintf(", %d %ss per run", sc.Requests, sc.Unit)
		}
		for _, s := range sc.Summary {
			verdict := "baseline"
			for _, c := range sc.Comparisons {
				if c.Candidate == s.Target && c.Concurrency == s.Concurrency {
					verdict = verdictText(sc, c)
				}
			}
			cell := "no successful round"
			if s.N > 0 {
				cell = fmt.Sprintf("%s [%s … %s]", value(sc, s.Best), value(sc, s.Median), value(sc, s.Worst))
			}
			side := sc.Side(s.Target, s.Concurrency)
			rounds := fmt.Sprint(s.N)
			if side.Failed > 0 {
				rounds = fmt.Sprintf("%d (%d failed)", s.N, side.Failed)
			}
			row := []string{s.Target, loadCell(sc.Load, s.Concurrency), cell, rounds, errorCell(side)}
			if open {
				row = append(row, rateCell(sc, s.Target, s.Concurrency, func(rd results.Round) float64 { return rd.OfferedRate }),
					rateCell(sc, s.Target, s.Concurrency, func(rd results.Round) float64 { return rd.AchievedRate }),
					fmt.Sprintf("%d of %d", side.Dropped, side.Arrivals))
			}
			t.Rows = append(t.Rows, append(row, verdict))
		}
		ts = append(ts, t)
	}
	ts = append(ts, sweepTables(r.Sweeps)...)
	ts = append(ts, metricsTables(r.Targets)...)
	ts = append(ts, costTables(r.Costs)...)
	for i := range ts { // no cell moves a terminal's cursor or title
		t := &ts[i]
		t.Title, t.Note = Printable(t.Title), Printable(t.Note)
		for _, row := range append([][]string{t.Header}, t.Rows...) {
			for j := range row {
				row[j] = Printable(row[j])
			}
		}
	}
	return ts
}

// Printable makes text safe to print on a terminal: control characters
// other than newline and tab (ESC, CR, BEL, the C1 set, DEL), which could
// clear a screen, retitle a window or overwrite a line, are shown as
// escapes ("\x1b") instead. Text that came from a study, a target's
// output or a server's answer passes through it before tandem prints it.
func Printable(s string) string {
	i := strings.IndexFunc(s, unsafeRune)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if unsafeRune(r) {
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029' || r == utf8.RuneError
}

// spread shows several starts as median [best … worst], lower being better.
func spread(runs []results.Startup, get func(results.Startup) int64, format func(int64) string) string {
	vs := make([]int64, len(runs))
	for i, r := range runs {
		vs[i] = get(r)
	}
	slices.Sort(vs)
	n := len(vs)
	med := vs[n/2]
	if n%2 == 0 {
		med = (vs[n/2-1] + vs[n/2]) / 2
	}
	return fmt.Sprintf("%s [%s … %s]", format(med), format(vs[0]), format(vs[n-1]))
}

// loadCell describes a row's load: clients for a closed loop, the rate
// and connections otherwise.
func loadCell(l results.Load, level int) string {
	conns := fmt.Sprintf(" on %d conn", l.Connections)
	if l.Connections != 1 {
		conns += "s"
	}
	switch l.Model {
	case "open":
		if l.Rate > 0 {
			return Number(l.Rate) + "/s" + conns
		}
		return l.Schedule + conns
	case "batched":
		return fmt.Sprintf("%d per %v", l.PerPeriod, time.Duration(l.PeriodNs)) + conns
	case "drain":
		return fmt.Sprintf("prefetch %d", l.Prefetch)
	}
	if level == 1 {
		return "1 client"
	}
	return fmt.Sprintf("%d clients", level)
}

// errorCell is a row's share of failed requests and their kinds:
// "0 %" or "99.0 % (http:503 ×990)".
func errorCell(side stats.Side) string {
	if side.Requests == side.OK {
		return "0 %"
	}
	return fmt.Sprintf("%s (%s)", stats.Percent(side.ErrorShare()), side.ErrorKinds())
}

// rateCell is the median of a per-round rate over a row's successful
// rounds.
func rateCell(sc *results.Scenario, target string, level int, get func(results.Round) float64) string {
	var vs []float64
	for _, rd := range sc.Rounds {
		if rd.Target == target && rd.Concurrency == level && !rd.Failed {
			vs = append(vs, get(rd))
		}
	}
	if len(vs) == 0 {
		return "–"
	}
	return Number(stats.Summarize(vs, true).Median) + "/s"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func machineLine(r *results.Results) string {
	m := r.Machine
	s := fmt.Sprintf("%s, %d cores, Linux %s, %s, GOMAXPROCS %d", m.CPUModel, m.Cores, m.Kernel, m.GoVersion, m.GOMAXPROCS)
	if len(m.GeneratorCPUs) > 0 {
		s += fmt.Sprintf(", generator on CPUs %v", m.GeneratorCPUs)
	}
	var rtts []string
	for _, t := range r.Targets {
		if t.RTTNs > 0 {
			rtts = append(rtts, fmt.Sprintf("%s %s (%s)", t.Name, Duration(float64(t.RTTNs)), t.RTTCall))
		}
	}
	if len(rtts) > 0 {
		s += "; round trips: " + strings.Join(rtts, ", ")
	}
	return s
}
