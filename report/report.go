// Package report renders results.json for people: a terminal table, GitHub
// Markdown and one self-contained HTML page. Every figure is recomputed from
// the results, never stored twice. An indistinguishable pair is never shown
// with a percentage or ratio.
package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/results"
)

// table is a rendered table: a title, a header and rows of cells.
type table struct {
	Title  string
	Note   string
	Header []string
	Rows   [][]string
}

// Duration formats nanoseconds for people: 812µs, 40.3ms, 1.25s.
func Duration(ns float64) string {
	if math.IsNaN(ns) {
		return "–"
	}
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond))
	case d >= time.Microsecond:
		return fmt.Sprintf("%.3gµs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%dns", d)
}

// Bytes formats a byte count: 1.4 GiB, 320 KiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return Number(float64(n)/float64(div)) + fmt.Sprintf(" %ciB", "KMGTPE"[exp])
}

// Number formats a figure with three significant digits below 1,000 and
// as a whole number with thousands separators above.
func Number(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case math.Abs(v) < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case math.Abs(v) < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
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
		t := table{Title: "Scenario " + sc.Name, Header: []string{"target", "load", metric + ": best [median … worst]", "rounds", "errors", "verdict"}}
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
			t.Rows = append(t.Rows, []string{s.Target, loadCell(sc.Load, s.Concurrency), cell, fmt.Sprint(s.N), errorCounts(sc, s.Target, s.Concurrency), verdict})
		}
		ts = append(ts, t)
	}
	ts = append(ts, sweepTables(r.Sweeps)...)
	ts = append(ts, metricsTables(r.Targets)...)
	ts = append(ts, costTables(r.Costs)...)
	return ts
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

func errorCounts(sc *results.Scenario, target string, level int) string {
	sum := map[string]int64{}
	for _, rd := range sc.Rounds {
		if rd.Target == target && rd.Concurrency == level {
			for k, v := range rd.Errors {
				sum[k] += v
			}
		}
	}
	if len(sum) == 0 {
		return "0"
	}
	keys := make([]string, 0, len(sum))
	for k := range sum {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, sum[k])
	}
	return strings.Join(parts, " ")
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
