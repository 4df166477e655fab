package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
)

// SampleRun is one load run (tandem load) as its report shows it.
type SampleRun struct {
	Sample results.Sample
	// Parts name the sample's parts (Sample.Parts), in order: a mix's
	// calls. A part without a name is not shown.
	Parts []string
	// Warnings are what the run's diagnosis says of it.
	Warnings []string
	// StoppedBy, if not empty, says what stopped the run early
	// ("SIGINT"): the report is marked interrupted.
	StoppedBy string
}

// Sample writes one load run's report in format, one of the formats that
// render ForSample.
func Sample(w io.Writer, format string, r SampleRun) error {
	f, ok := LookupFormat(format, ForSample)
	if !ok {
		return fmt.Errorf("format %q: want %s", format, FormatList(ForSample))
	}
	return f.Sample(w, r)
}

// parts are the run's named parts, in order, each with its sample.
func (r SampleRun) parts() []namedSample {
	var out []namedSample
	for k, p := range r.Sample.Parts {
		if k < len(r.Parts) && r.Parts[k] != "" {
			out = append(out, namedSample{r.Parts[k], p})
		}
	}
	return out
}

type namedSample struct {
	name string
	s    results.Sample
}

// interruption is the note on a sample whose run was stopped early; ""
// for a complete run.
func interruption(s results.Sample, stoppedBy string) string {
	if stoppedBy == "" {
		return ""
	}
	return fmt.Sprintf("stopped by %s after %v; what follows is what was measured before", stoppedBy, time.Duration(s.DurationNs).Round(time.Millisecond))
}

// ErrorList says a sample's failures by status, in order: "http:503×7
// timeout×3", or "none".
func ErrorList(s results.Sample) string {
	if len(s.Errors) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(s.Errors))
	for k := range s.Errors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, s.Errors[k])
	}
	return strings.Join(parts, " ")
}

func dist(d results.Distribution) []string {
	return []string{human.Duration(float64(d.Min)), human.Duration(d.Mean), human.Duration(float64(d.P50)),
		human.Duration(float64(d.P90)), human.Duration(float64(d.P99)), human.Duration(float64(d.P999)), human.Duration(float64(d.Max))}
}

type namedDist struct {
	name string
	d    results.Distribution
}

// distributions are the rows a sample's report shows: latency, then in
// open and batched loops service time and schedule lag, then for streams
// the time to the first message, and for a closed loop on the event loop
// the generator's think time.
func distributions(s results.Sample) []namedDist {
	rows := []namedDist{{"latency", s.LatencyNs}}
	if s.ScheduleLagNs != nil {
		rows = append(rows, namedDist{"service time", s.ServiceTimeNs}, namedDist{"schedule lag", *s.ScheduleLagNs})
	}
	if s.FirstMessageNs != nil {
		rows = append(rows, namedDist{"first message", *s.FirstMessageNs})
	}
	if s.ThinkTimeNs != nil {
		rows = append(rows, namedDist{"think time", *s.ThinkTimeNs})
	}
	return rows
}

// unfinishedWhy says what a sample's unfinished requests are.
const unfinishedWhy = " (sent, and neither ok nor failed when the run was cut short)"

// unfinished says, after a semicolon, how many of the requests sent had
// neither succeeded nor failed when the run was cut short; "" when none.
func unfinished(s results.Sample) string {
	if s.Unfinished == 0 {
		return ""
	}
	return fmt.Sprintf("; %d unfinished%s", s.Unfinished, unfinishedWhy)
}

// sampleText is a compact report in the manner of vegeta's.
func sampleText(w io.Writer, r SampleRun) error {
	s, warnings, stoppedBy := r.Sample, r.Warnings, r.StoppedBy
	var b strings.Builder
	if note := interruption(s, stoppedBy); note != "" {
		fmt.Fprintf(&b, "INTERRUPTED: %s.\n", note)
	}
	fmt.Fprintf(&b, "requests      %d sent, %d ok, %d failed in %v%s\n", s.Requests+s.Unfinished, s.OK, s.Requests-s.OK,
		time.Duration(s.DurationNs).Round(time.Millisecond), unfinished(s))
	if s.OfferedRate > 0 {
		fmt.Fprintf(&b, "rate          offered %s/s, achieved %s/s, dropped %d\n", human.Number(s.OfferedRate), human.Number(s.AchievedRate), s.Dropped)
	}
	fmt.Fprintf(&b, "throughput    %s/s ok, %s %s/s\n", human.Number(s.Throughput), human.Number(s.UnitsPerS), s.Unit)
	fmt.Fprintf(&b, "              %-8s %-8s %-8s %-8s %-8s %-8s %-8s\n", "min", "mean", "p50", "p90", "p99", "p99.9", "max")
	for _, r := range distributions(s) {
		fmt.Fprintf(&b, "%-14s", r.name)
		for _, c := range dist(r.d) {
			fmt.Fprintf(&b, "%-9s", c)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "errors        %s\n", ErrorList(s))
	if ps := r.parts(); len(ps) > 0 {
		fmt.Fprintf(&b, "calls         %-8s %-8s %-8s %-8s %-8s %s\n", "share", "ok", "failed", "p50", "p99", "errors")
		for _, p := range ps {
			fmt.Fprintf(&b, "  %-11s %-8s %-8d %-8d %-8s %-8s %s\n", p.name, share(p.s.Requests, s.Requests), p.s.OK, p.s.Requests-p.s.OK,
				human.Duration(float64(p.s.LatencyNs.P50)), human.Duration(float64(p.s.LatencyNs.P99)), ErrorList(p.s))
		}
	}
	if s.Engine != "" {
		fmt.Fprintf(&b, "engine        %s\n", s.Engine)
	}
	if f := s.Fleet; f != nil {
		fmt.Fprintf(&b, "fleet         %s\n", fleetLine(f))
		for _, w := range f.Workers {
			fmt.Fprintf(&b, "  %-11s %s\n", w.ID, fleetWorkerLine(w))
		}
	}
	for _, wn := range warnings {
		fmt.Fprintf(&b, "warning: %s\n", wn)
	}
	_, err := io.WriteString(w, human.Printable(b.String())) // the errors' kinds and the warnings may quote a server
	return err
}

// sampleMarkdown is the sample as GitHub-flavoured Markdown tables.
func sampleMarkdown(w io.Writer, r SampleRun) error {
	s, warnings, stoppedBy := r.Sample, r.Warnings, r.StoppedBy
	var b strings.Builder
	if note := interruption(s, stoppedBy); note != "" {
		fmt.Fprintf(&b, "> **INTERRUPTED**: %s.\n\n", note)
	}
	fmt.Fprintf(&b, "| requests | ok | failed | duration | offered/s | achieved/s | throughput/s | dropped |\n|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %v | %s | %s | %s | %d |\n\n", s.Requests+s.Unfinished, s.OK, s.Requests-s.OK, time.Duration(s.DurationNs).Round(time.Millisecond),
		human.Number(s.OfferedRate), human.Number(s.AchievedRate), human.Number(s.Throughput), s.Dropped)
	if s.Unfinished > 0 {
		fmt.Fprintf(&b, "unfinished: %d%s\n\n", s.Unfinished, unfinishedWhy)
	}
	b.WriteString("| | min | mean | p50 | p90 | p99 | p99.9 | max |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range distributions(s) {
		fmt.Fprintf(&b, "| %s | %s |\n", r.name, strings.Join(dist(r.d), " | "))
	}
	fmt.Fprintf(&b, "\nerrors: %s\n", ErrorList(s))
	if ps := r.parts(); len(ps) > 0 {
		b.WriteString("\n| call | share | ok | failed | p50 | p99 | errors |\n|---|---|---|---|---|---|---|\n")
		for _, p := range ps {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %s |\n", mdEscape(p.name), share(p.s.Requests, s.Requests), p.s.OK, p.s.Requests-p.s.OK,
				human.Duration(float64(p.s.LatencyNs.P50)), human.Duration(float64(p.s.LatencyNs.P99)), mdEscape(ErrorList(p.s)))
		}
	}
	if f := s.Fleet; f != nil {
		fmt.Fprintf(&b, "\nfleet: %s\n\n| worker | share | |\n|---|---|---|\n", fleetLine(f))
		for _, w := range f.Workers {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdEscape(w.ID), mdEscape(w.Share), mdEscape(fleetWorkerFigures(w)))
		}
	}
	for _, wn := range warnings {
		fmt.Fprintf(&b, "\n> warning: %s\n", wn)
	}
	_, err := io.WriteString(w, human.Printable(b.String()))
	return err
}

// sampleJSON writes the --format json object of tandem load (README.md,
// the tour): the sample's fields plus warnings (an empty list when there
// are none),
// and interrupted: true when something stopped the run before its end (the
// figures are what was measured before). offered_rate is null for a closed
// loop, which offers none.
func sampleJSON(w io.Writer, r SampleRun) error {
	s, warnings, stoppedBy := r.Sample, r.Warnings, r.StoppedBy
	if warnings == nil {
		warnings = []string{} // a list for scripts to range over, never null
	}
	var offered any
	if s.OfferedRate > 0 {
		offered = s.OfferedRate
	}
	out := map[string]any{
		"requests": s.Requests, "ok": s.OK, "errors": s.Errors, "duration_ns": s.DurationNs,
		"offered_rate": offered, "achieved_rate": s.AchievedRate,
		"throughput": s.Throughput, "unit": s.Unit, "units_per_s": s.UnitsPerS,
		"latency_ns": s.LatencyNs, "service_time_ns": s.ServiceTimeNs, "schedule_lag_ns": s.ScheduleLagNs,
		"dropped": s.Dropped, "unfinished": s.Unfinished, "hdr": s.HDR, "series": s.Series, "warnings": warnings,
		"interrupted": stoppedBy != "",
	}
	if s.FirstMessageNs != nil {
		out["first_message_ns"] = s.FirstMessageNs
	}
	if s.ThinkTimeNs != nil {
		out["think_time_ns"] = s.ThinkTimeNs
	}
	if s.Fleet != nil {
		out["fleet"] = s.Fleet
	}
	if ps := r.parts(); len(ps) > 0 {
		parts := make([]map[string]any, len(ps))
		for k, p := range ps {
			parts[k] = map[string]any{"name": p.name, "requests": p.s.Requests, "ok": p.s.OK, "errors": p.s.Errors,
				"unfinished": p.s.Unfinished, "latency_ns": p.s.LatencyNs}
		}
		out["parts"] = parts
	}
	if s.Engine != "" {
		out["engine"] = s.Engine
	}
	if s.EngineCPUNs > 0 { // the event loop's thread: the generator's own work
		out["engine_cpu_ns"] = s.EngineCPUNs
	}
	return encodeJSON(w, out)
}

// encodeJSON writes v as indented JSON with a final newline, with the
// control characters encoding/json leaves escaped (printableJSON).
func encodeJSON(w io.Writer, v any) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err := io.WriteString(w, printableJSON(b.String()))
	return err
}

// fleetLine sums up how a distributed run went.
func fleetLine(f *results.Fleet) string {
	nats := "embedded NATS"
	if f.NATS != "embedded" {
		nats = "NATS at " + f.NATS
	}
	line := fmt.Sprintf("%d workers over %s, started within %s of each other, coordination %s msg/s and %s B/s",
		len(f.Workers), nats, human.Duration(float64(f.StartSkewNs)), human.Number(f.MessagesPerS), human.Number(f.BytesPerS))
	if len(f.Lost) > 0 {
		line += fmt.Sprintf("; lost %s (on loss: %s)", strings.Join(f.Lost, ", "), f.OnWorkerLoss)
	}
	return line
}

// fleetWorkerLine is one worker's share and what it did.
func fleetWorkerLine(w results.FleetWorker) string {
	return w.Share + " → " + fleetWorkerFigures(w)
}

func fleetWorkerFigures(w results.FleetWorker) string {
	s := fmt.Sprintf("%d sent, %d ok", w.Requests, w.OK)
	if w.OfferedRate > 0 {
		s += fmt.Sprintf(", offered %s/s, achieved %s/s", human.Number(w.OfferedRate), human.Number(w.AchievedRate))
	} else {
		s += fmt.Sprintf(", %s/s", human.Number(w.Throughput))
	}
	if w.Dropped > 0 {
		s += fmt.Sprintf(", %d dropped", w.Dropped)
	}
	s += fmt.Sprintf(", started %s after the agreed time", human.Duration(float64(w.StartNs)))
	if w.Lost {
		s += fmt.Sprintf(", LOST after %s", human.Duration(float64(w.LostAfterNs)))
	}
	if w.Error != "" {
		s += ", failed: " + w.Error
	}
	return s
}

// share is part of whole as a percentage: "90.1 %".
func share(part, whole int64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(part)/float64(whole))
}
