package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
)

// csvText makes text from outside tandem (a name, a call, a unit) a CSV
// cell: printable, its control characters shown as escapes as
// human.Printable shows them, and behind a ' when it would start a
// spreadsheet formula (=, +, -, @, a tab, or their full-width forms), so
// that a spreadsheet shows it as text rather than running it.
// encoding/csv quotes what needs quoting (commas, quotes, newlines).
func csvText(s string) string {
	s = human.Printable(s)
	if r, _ := utf8.DecodeRuneInString(s); s != "" && strings.ContainsRune(formulaStarts, r) {
		return "'" + s
	}
	return s
}

// formulaStarts are the characters a spreadsheet reads a cell starting
// with as a formula.
const formulaStarts = "=+-@\t＝＋－＠"

// lineText makes text from outside tandem safe within one line of a
// line-based export (a benchmark file's header, an HDR log's comment):
// printable, with newline and tab escaped too, and # as \x23, so that no
// text starts a line or reads as one of the format's own markers (an HDR
// log's reader takes "#[StartTime:" anywhere in a comment for the log's
// start time).
func lineText(s string) string { return lineEscapes.Replace(human.Printable(s)) }

var lineEscapes = strings.NewReplacer("\n", `\x0a`, "\t", `\x09`, "#", `\x23`)

// CSV writes one row per measured round of every scenario and one per run
// of every sweep cell, for spreadsheets and scripts. A cell's row (kind
// cell) has its connections as concurrency, its mean latency as headline
// (metric latency_mean_ns), its confirmed per second as throughput, and
// its rate per connection, expected, confirmed and saturation state in
// the last columns. Text from the results (names, calls, units) is
// written by csvText: printable, and never a formula.
func CSV(w io.Writer, r *results.Results) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"scenario", "call", "metric", "direction", "concurrency", "round", "order", "target", "failed",
		"headline", "requests", "ok", "errors", "duration_ns", "throughput", "units_per_s", "unit",
		"latency_min_ns", "latency_mean_ns", "latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns",
		"offered_rate", "achieved_rate", "dropped", "generator_cpu_use", "kind", "rate", "expected", "confirmed", "saturated"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	total := func(m map[string]int64) int64 {
		var n int64
		for _, v := range m {
			n += v
		}
		return n
	}
	for _, sw := range r.Sweeps {
		for _, c := range sw.Cells {
			l := c.LatencyNs
			round := c.Round
			if c.Search {
				round = c.Repeat
			}
			sending := max(float64(c.DurationNs)/1e9-1, 1e-9)
			perS := c.ConfirmedPerSecond()
			cw.Write([]string{csvText(sw.Scenario), csvText(sw.Call), "latency_mean_ns", "lower", strconv.Itoa(c.Connections), strconv.Itoa(round), "",
				csvText(sw.Target), strconv.FormatBool(c.Error != ""), f(l.Mean), i(c.Sent), i(c.OK), i(total(c.Errors)), i(c.DurationNs),
				f(perS), f(perS), "request", i(l.Min), f(l.Mean), i(l.P50), i(l.P90), i(l.P99), i(l.P999), i(l.Max),
				f(float64(c.Connections) * c.Rate), f(float64(c.Sent) / sending), "0", "", "cell", f(c.Rate), i(c.Expected), i(c.Confirmed),
				strconv.FormatBool(c.Saturated)})
		}
	}
	for _, sc := range r.Scenarios {
		for _, rd := range sc.Rounds {
			l := rd.LatencyNs
			cw.Write([]string{csvText(sc.Name), csvText(sc.Call), csvText(sc.Metric), csvText(string(sc.Direction)), strconv.Itoa(rd.Concurrency),
				strconv.Itoa(rd.Round), strconv.Itoa(rd.Order), csvText(rd.Target), strconv.FormatBool(rd.Failed), f(rd.Headline), i(rd.Requests),
				i(rd.OK), i(total(rd.Errors)), i(rd.DurationNs), f(rd.Throughput), f(rd.UnitsPerS), csvText(rd.Unit), i(l.Min), f(l.Mean), i(l.P50), i(l.P90), i(l.P99), i(l.P999), i(l.Max),
				f(rd.OfferedRate), f(rd.AchievedRate), i(rd.Dropped), f(rd.GeneratorCPUUse), "round", "", "", "", ""})
		}
	}
	cw.Flush()
	return cw.Error()
}

var notName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// benchName makes a scenario name a Go benchmark name: BenchmarkGetblockLatency.
func benchName(s string) string {
	var b strings.Builder
	b.WriteString("Benchmark")
	up := true
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Bench writes the rounds in the Go benchmark format, one line per round
// (and one per run of a sweep cell, its mean latency as ns/op),
// so that benchstat compares two results files (benchstat base.txt
// head.txt) with its own statistics. Names carry the target and level as
// sub-benchmark keys (BenchmarkGetblockLatency/target=a/c=1); each line's
// values are latencies in ns (p50 as sec/op's stand-in) and throughput.
// Text from the results stays on its line: names and units keep only
// letters, digits and _.-, the header's values are written by lineText.
func Bench(w io.Writer, r *results.Results) error {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: tandem/%s\ncpu: %s\n", lineText(r.Machine.OS), lineText(r.Machine.Arch),
		notName.ReplaceAllString(r.Study.Name, "_"), lineText(r.Machine.CPUModel))
	for _, sc := range r.Scenarios {
		rounds := append([]results.Round(nil), sc.Rounds...)
		sort.SliceStable(rounds, func(i, j int) bool {
			if rounds[i].Target != rounds[j].Target {
				return rounds[i].Target < rounds[j].Target
			}
			return rounds[i].Concurrency < rounds[j].Concurrency
		})
		for _, rd := range rounds {
			if rd.Failed || rd.OK == 0 {
				continue
			}
			name := benchName(sc.Name) + "/target=" + notName.ReplaceAllString(rd.Target, "_")
			if sc.Load.Model == results.ModelClosed {
				name += fmt.Sprintf("/c=%d", rd.Concurrency)
			}
			fmt.Fprintf(w, "%s\t%d\t%d ns/op\t%d p90-ns\t%d p99-ns\t%.6g %ss/s\n", name, rd.OK, rd.LatencyNs.P50,
				rd.LatencyNs.P90, rd.LatencyNs.P99, rd.UnitsPerS, notName.ReplaceAllString(rd.Unit, "_"))
		}
	}
	// every run of a sweep cell that confirmed something: its mean latency
	// as ns/op, its p99, its confirmed rate and whether it saturated
	for _, sw := range r.Sweeps {
		for _, c := range sw.Cells {
			if c.Confirmed == 0 || c.Error != "" {
				continue
			}
			name := fmt.Sprintf("%s/target=%s/c=%d/r=%s", benchName(sw.Scenario), notName.ReplaceAllString(sw.Target, "_"), c.Connections,
				strconv.FormatFloat(c.Rate, 'g', -1, 64))
			sat := 0
			if c.Saturated {
				sat = 1
			}
			fmt.Fprintf(w, "%s\t%d\t%.0f ns/op\t%d p99-ns\t%.6g confirmed/s\t%d saturated\n", name, c.Confirmed, c.LatencyNs.Mean,
				c.LatencyNs.P99, c.ConfirmedPerSecond(), sat)
		}
	}
	return nil
}

// HDRLog writes every round's latency histogram in HdrHistogram's interval
// log format (readable by HistogramLogAnalyzer and hdrhistogram's log
// readers), tagged scenario/target/level. Intervals follow one another on
// a timeline of measurement time from the run's creation: each round's
// interval is its duration. The StartTime, BaseTime and interval lines are
// written here, in seconds as the format says (hdrhistogram-go's writer
// puts milliseconds where the format has seconds). Text from the results
// in a comment is written by lineText, so that it cannot end the comment
// or forge the log's start time.
func HDRLog(w io.Writer, r *results.Results) error {
	lw := hdrhistogram.NewHistogramLogWriter(w)
	if err := lw.OutputComment(fmt.Sprintf("[tandem %s: %s, %s]", lineText(r.Tool.Version), lineText(r.Study.Name),
		r.CreatedAt.Format("2006-01-02T15:04:05Z"))); err != nil {
		return err
	}
	start := r.CreatedAt.UnixMilli()
	secs := fmt.Sprintf("%d.%03d", start/1000, start%1000)
	if _, err := fmt.Fprintf(w, "#[StartTime: %s (seconds since epoch), %s]\n#[BaseTime: %s (seconds since epoch)]\n",
		secs, r.CreatedAt.UTC().Format(time.RFC3339Nano), secs); err != nil {
		return err
	}
	if err := lw.OutputLegend(); err != nil {
		return err
	}
	var at int64 // ms from the start
	for _, sc := range r.Scenarios {
		for _, rd := range sc.Rounds {
			if rd.HDR == "" {
				continue
			}
			h, err := hdr.Decode(rd.HDR)
			if err != nil { // say so in the log and go on: the other rounds are good
				if err := lw.OutputComment(fmt.Sprintf("[skipped %s round %d %s: %s]", lineText(sc.Name), rd.Round, lineText(rd.Target), lineText(err.Error()))); err != nil {
					return err
				}
				continue
			}
			tag := notName.ReplaceAllString(fmt.Sprintf("%s/%s/c=%d/round=%d", sc.Name, rd.Target, rd.Concurrency, rd.Round), "_")
			tag = strings.ReplaceAll(tag, ",", "_")
			length := max(rd.DurationNs/1e6, 1)
			// Tag=T,start s,length s,max ms,payload (V2 compressed, base64)
			if _, err := fmt.Fprintf(w, "Tag=%s,%d.%03d,%d.%03d,%.3f,%s\n", tag, at/1000, at%1000, length/1000, length%1000,
				float64(h.Max())/hdrhistogram.MsToNsRatio, rd.HDR); err != nil {
				return err
			}
			at += length
		}
	}
	return nil
}
