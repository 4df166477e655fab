// Package report renders results.json for people: a terminal table, GitHub
// Markdown and one self-contained HTML page, and its exports (CSV, benchstat,
// HDR logs). It also renders what the other commands print: a load run's
// sample, a comparison of two runs and counted costs. Formats holds the one
// list of output formats and what each renders; the commands validate and
// describe their --format by it. Every figure is recomputed from the
// results, never stored twice. An indistinguishable pair is never shown
// with a percentage or ratio.
package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// table is a rendered table: a title, a header and rows of cells.
type table struct {
	Title  string
	Note   string
	Header []string
	Rows   [][]string
	// Tones, if set, are each row's tone (the colour of its last cell in
	// a terminal), from the typed verdict or state it shows.
	Tones []tone
}

// row appends a row of the given tone.
func (t *table) row(r []string, k tone) {
	if len(t.Tones) < len(t.Rows) {
		t.Tones = append(t.Tones, make([]tone, len(t.Rows)-len(t.Tones))...)
	}
	t.Rows = append(t.Rows, r)
	t.Tones = append(t.Tones, k)
}

// tone is how a verdict or a state reads: bad (slower, failing,
// saturated), good (faster), unsure (inconclusive, withheld) or quiet
// (indistinguishable, a noise reference).
type tone int

const (
	toneNone tone = iota
	toneBad
	toneGood
	toneUnsure
	toneQuiet
)

// toneOf is a verdict's tone.
func toneOf(v stats.Verdict) tone {
	switch v {
	case stats.Slower, stats.Failing:
		return toneBad
	case stats.Faster:
		return toneGood
	case stats.Withheld, stats.Inconclusive:
		return toneUnsure
	case stats.Indistinguishable, stats.NoiseReference:
		return toneQuiet
	}
	return toneNone
}

func value(sc *results.Scenario, v float64) string {
	if sc.Direction == results.Higher {
		return human.Number(v) + "/s"
	}
	return human.Duration(v)
}

// verdictText says a comparison in words; only a real difference gets a ratio.
func verdictText(sc *results.Scenario, c results.Comparison) string {
	s := speedWords(c.Candidate, c.Base, c.Verdict, c.Ratio, sc.Direction == results.Higher, c.Reason, c.Estimate)
	if len(c.Unstable) > 0 {
		s += fmt.Sprintf(" (unstable: %s)", strings.Join(c.Unstable, ", "))
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
	ts := setupTables(r)
	if c := r.Compat; c != nil {
		ts = append(ts, compatTables(c, diffRows)...)
	}
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		if partShown(r, sc) {
			continue // a row of its mix's or flow's table
		}
		t := scenarioTable(sc)
		if parts := partsOf(r, sc); len(parts) > 0 {
			t = withParts(t, sc, parts)
		}
		ts = append(ts, t)
		if t, ok := perturbationTable(&r.Scenarios[i]); ok {
			ts = append(ts, t)
		}
	}
	ts = append(ts, sweepTables(r.Sweeps)...)
	ts = append(ts, metricsTables(r.Targets)...)
	ts = append(ts, costTables(r.Costs)...)
	return printable(ts)
}

// printable makes every cell of ts safe for a terminal: no cell moves a
// terminal's cursor or title.
func printable(ts []table) []table {
	for i := range ts {
		t := &ts[i]
		t.Title, t.Note = human.Printable(t.Title), human.Printable(t.Note)
		for _, row := range append([][]string{t.Header}, t.Rows...) {
			for j := range row {
				row[j] = human.Printable(row[j])
			}
		}
	}
	return ts
}

// setupTables shows the shared services and the targets' startups, when
// the run has them.
func setupTables(r *results.Results) []table {
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
				up = human.Duration(float64(s.StartNs))
			}
			sv.Rows = append(sv.Rows, []string{s.Name, s.Kind, strings.Join(eps, ", "), up, status})
		}
		ts = append(ts, sv)
	}
	started := slices.ContainsFunc(r.Targets, func(t results.Target) bool { return t.Startup != nil || t.Error != "" })
	st := table{Title: "Startup from empty", Note: "disk: the blocks held, as du shows (the apparent size beside, where it differs); with several starts: best [median … worst]", Header: []string{"target", "first answer", "ready", "CPU", "peak RSS", "disk", "status"}}
	judged := slices.ContainsFunc(r.Targets, func(t results.Target) bool { return t.StartupVerdict != nil })
	if judged {
		st.Header = append(st.Header, "verdict (ready time)")
		st.Note += "; the verdict is on the ready times, by the study's policy"
	}
	for _, t := range r.Targets {
		row := []string{t.Name, "–", "–", "–", "–", "–", "ok"}
		if s := t.Startup; s != nil {
			row = []string{t.Name, human.Duration(float64(s.FirstAnswerNs)), human.Duration(float64(s.ReadyNs)), human.Duration(float64(s.CPUNs)),
				human.Bytes(s.PeakRSSBytes), diskCell(human.Bytes(s.DiskBytes), *s), "ok"}
			if runs := t.StartupRuns; len(runs) > 1 {
				ns := func(get func(results.Startup) int64) string {
					return spread(runs, get, func(v int64) string { return human.Duration(float64(v)) })
				}
				b := func(get func(results.Startup) int64) string { return spread(runs, get, human.Bytes) }
				row = []string{t.Name, ns(func(s results.Startup) int64 { return s.FirstAnswerNs }), ns(func(s results.Startup) int64 { return s.ReadyNs }),
					ns(func(s results.Startup) int64 { return s.CPUNs }), b(func(s results.Startup) int64 { return s.PeakRSSBytes }),
					diskCell(b(func(s results.Startup) int64 { return s.DiskBytes }), *s), fmt.Sprintf("ok, %d starts", len(runs))}
			}
		}
		if t.Error != "" {
			row[6] = "failed: " + firstLine(t.Error)
		}
		if judged {
			v := "baseline"
			if c := t.StartupVerdict; c != nil {
				v = verdictText(&results.Scenario{Direction: results.Lower}, *c)
			} else if t.Startup == nil {
				v = "–"
			}
			row = append(row, v)
		}
		st.Rows = append(st.Rows, row)
	}
	if started {
		ts = append(ts, st)
	}
	if nt, ok := networkTable(r.Targets); ok {
		ts = append(ts, nt)
	}
	if pt, ok := peerTable(r.Targets); ok {
		ts = append(ts, pt)
	}
	return ts
}

// scenarioTable shows one scenario: a row per target and level with its
// headline, rounds, errors, load and verdict.
func scenarioTable(sc *results.Scenario) table {
	metric := "p50 latency"
	switch {
	case sc.Direction == results.Higher:
		metric = "throughput (" + sc.Unit + "s/s)"
	case sc.Metric == "recovery_ns":
		metric = "recovery"
	}
	open := sc.Load.Model == results.ModelOpen || sc.Load.Model == results.ModelBatched
	header := []string{"target", "load", metric + ": best [median … worst]", "rounds", "errors"}
	if open {
		header = append(header, "offered", "achieved", "dropped")
	}
	t := table{Title: "Scenario " + sc.Name, Header: append(header, "verdict")}
	t.Note = fmt.Sprintf("call %s, %s loop, %s is better", sc.Call, sc.Load.Model, sc.Direction)
	switch {
	case sc.Replay != nil:
		rp := sc.Replay
		t.Note = fmt.Sprintf("replays %s (%d recorded requests, sha256 %s…) %s, %s loop, %s is better", rp.File, rp.Exchanges,
			rp.SHA256[:min(12, len(rp.SHA256))], replayPace(sc), sc.Load.Model, sc.Direction)
	case sc.Kind == results.KindMix:
		t.Note = fmt.Sprintf("a mix of calls, %s loop, %s is better", sc.Load.Model, sc.Direction)
	case sc.Kind == results.KindFlow:
		t.Note = fmt.Sprintf("a flow: each request one pass of its steps, %s loop, %s is better", sc.Load.Model, sc.Direction)
	case sc.Part != nil && sc.Part.Share > 0:
		t.Note = fmt.Sprintf("call %s, %s of the mix %s, %s loop, %s is better", sc.Call, percent(sc.Part.Share), sc.Part.Of, sc.Load.Model, sc.Direction)
	case sc.Part != nil:
		t.Note = fmt.Sprintf("call %s, step %d of the flow %s, %s loop, %s is better", sc.Call, sc.Part.Index+1, sc.Part.Of, sc.Load.Model, sc.Direction)
	}
	if sc.Load.Model == results.ModelDrain {
		t.Note = fmt.Sprintf("call %s: each run fills a fresh queue and times the consumer's drain, first delivery to last ack; %s is better", sc.Call, sc.Direction)
	}
	if sc.Requests > 0 {
		t.Note += fmt.Sprintf(", %d %ss per run", sc.Requests, sc.Unit)
	}
	if v := sc.Values; v != nil {
		t.Note += fmt.Sprintf("; per-request values, the same sequence to every target (sha256 %s… over %d requests)", v.SHA256[:min(12, len(v.SHA256))], v.Requests)
	}
	if v := sc.Picks; v != nil {
		t.Note += fmt.Sprintf("; the calls drawn by weight, the same sequence to every target (sha256 %s… over %d requests)", v.SHA256[:min(12, len(v.SHA256))], v.Requests)
	}
	for _, s := range sc.Summary {
		verdict, tn := "baseline", toneNone
		for _, c := range sc.Comparisons {
			if c.Candidate == s.Target && c.Concurrency == s.Concurrency {
				verdict, tn = verdictText(sc, c), toneOf(c.Verdict)
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
		errs := errorCell(side)
		if down := errorsWhileDown(sc, s.Target, s.Concurrency); down > 0 {
			errs += fmt.Sprintf(" + %d while down", down)
		}
		row := []string{s.Target, loadCell(sc.Load, s.Concurrency), cell, rounds, errs}
		if open {
			row = append(row, rateCell(sc, s.Target, s.Concurrency, func(rd results.Round) float64 { return rd.OfferedRate }),
				rateCell(sc, s.Target, s.Concurrency, func(rd results.Round) float64 { return rd.AchievedRate }),
				fmt.Sprintf("%d of %d", side.Dropped, side.Arrivals))
		}
		t.row(append(row, verdict), tn)
	}
	return t
}

// spread shows several starts as best [median … worst], lower being
// better: the order of every spread of the reports.
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
	return fmt.Sprintf("%s [%s … %s]", format(vs[0]), format(med), format(vs[n-1]))
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
			return human.Number(l.Rate) + "/s" + conns
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

// errorsWhileDown counts a row's failures that perturbations caused while
// the target was down, which its error share leaves out.
func errorsWhileDown(sc *results.Scenario, target string, level int) int64 {
	var n int64
	for _, rd := range sc.Rounds {
		if rd.Target == target && rd.Concurrency == level {
			for _, ev := range rd.Perturbations {
				n += ev.ErrorsWhileDown
			}
		}
	}
	return n
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
	return human.Number(stats.Summarize(vs, true).Median) + "/s"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// fleetNote says, for a run whose loops ran on workers, how many and where,
// and the widest start skew of a round; "" for a run on one machine.
func fleetNote(r *results.Results) string {
	ids := map[string]bool{}
	var nats string
	var skew int64
	var rounds int
	for _, sc := range r.Scenarios {
		for _, rd := range sc.Rounds {
			if rd.Fleet == nil {
				continue
			}
			rounds++
			nats = rd.Fleet.NATS
			skew = max(skew, rd.Fleet.StartSkewNs)
			for _, w := range rd.Fleet.Workers {
				ids[w.ID] = true
			}
		}
	}
	if rounds == 0 {
		return ""
	}
	return fmt.Sprintf("; the loops ran on %d workers over %s NATS (%d rounds, started within %s of each other; a round's generator CPU is its busiest worker's)",
		len(ids), nats, rounds, human.Duration(float64(skew)))
}

func machineLine(r *results.Results) string {
	m := r.Machine
	s := fmt.Sprintf("%s, %d cores, Linux %s, %s, GOMAXPROCS %d", m.CPUModel, m.Cores, m.Kernel, m.GoVersion, m.GOMAXPROCS)
	if len(m.GeneratorCPUs) > 0 {
		s += fmt.Sprintf(", generator on CPUs %v", m.GeneratorCPUs)
	}
	s += fleetNote(r)
	var rtts []string
	for _, t := range r.Targets {
		if t.RTTNs > 0 {
			rtts = append(rtts, fmt.Sprintf("%s %s (%s)", t.Name, human.Duration(float64(t.RTTNs)), t.RTTCall))
		}
	}
	if len(rtts) > 0 {
		s += "; round trips: " + strings.Join(rtts, ", ")
	}
	return s
}

// perturbationTable lists the faults done in a scenario's rounds and what
// they did; false when there were none.
func perturbationTable(sc *results.Scenario) (table, bool) {
	var runs []perturbedRun
	for _, rd := range sc.Rounds {
		runs = append(runs, perturbedRun{fmt.Sprint(rd.Round), rd.Perturbations})
	}
	return perturbationRows("Perturbations: "+sc.Name, "round", runs)
}

// perturbedRun is a run (a round, a sweep's cell) and its perturbations.
type perturbedRun struct {
	where  string
	events []results.Perturbation
}

// perturbationRows lists the faults done in runs (named in the where
// column) and what they did; false when there were none.
func perturbationRows(title, where string, runs []perturbedRun) (table, bool) {
	t := table{Title: title,
		Note: "times from the action; recovered: when the load's last failed answer ended (10 ms steps)",
		Header: []string{"target", where, "at", "action", "down", "answers after", "load recovered", "errors",
			"ok/s before → during", "p99 before → during"}}
	ms := func(ns int64) string {
		if ns == 0 {
			return "–"
		}
		return human.Duration(float64(ns))
	}
	caught := slices.ContainsFunc(runs, func(r perturbedRun) bool {
		return slices.ContainsFunc(r.events, func(ev results.Perturbation) bool { return ev.CaughtUpNs > 0 })
	})
	if caught {
		t.Header = slices.Insert(t.Header, 6, "caught up (behind)")
	}
	for _, run := range runs {
		for _, ev := range run.events {
			row := []string{eventWho(ev), run.where, human.Duration(float64(ev.AtNs)), ev.Action, ms(ev.DownNs), ms(ev.AnswersAfterNs),
				ms(ev.RecoveredNs), strconv.FormatInt(ev.Errors, 10),
				human.Number(ev.OKPerSBefore) + " → " + human.Number(ev.OKPerSDuring), ms(ev.P99BeforeNs) + " → " + ms(ev.P99DuringNs)}
			if caught {
				row = slices.Insert(row, 6, fmt.Sprintf("%s (%d)", ms(ev.CaughtUpNs), ev.BehindAtReady))
			}
			if ev.Error != "" {
				row[len(row)-1] += "; failed: " + ev.Error
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t, len(t.Rows) > 0
}

// replayPace says how a replayed recording was sent: on its timetable
// (÷ speed, looped) or as fast as a closed loop's clients go.
func replayPace(sc *results.Scenario) string {
	rp := sc.Replay
	if sc.Load.Model != results.ModelOpen {
		return "in order, as fast as the clients go"
	}
	s := "on the recorded timetable"
	if rp.Speed != 1 {
		s += fmt.Sprintf(" ×%g", rp.Speed)
	}
	if rp.Loop {
		s += ", looped"
	}
	return s
}

// diskCell is a startup's disk use, with the (median) apparent size beside
// it where that differs by more than a tenth (preallocated or sparse files).
func diskCell(cell string, s results.Startup) string {
	a, b := float64(s.DiskApparentBytes), float64(s.DiskBytes)
	if s.DiskApparentBytes == 0 || (a <= b*1.1 && a >= b*0.9) {
		return cell
	}
	return cell + " (" + human.Bytes(s.DiskApparentBytes) + " apparent)"
}

// partsOf are the part scenarios of a mix or a flow (each call, each
// step), in order.
func partsOf(r *results.Results, sc *results.Scenario) []*results.Scenario {
	if sc.Kind == "" {
		return nil
	}
	var out []*results.Scenario
	for i := range r.Scenarios {
		if p := r.Scenarios[i].Part; p != nil && p.Of == sc.Name {
			out = append(out, &r.Scenarios[i])
		}
	}
	return out
}

// partShown reports whether sc is a part of a mix or a flow the results
// hold, whose table shows it.
func partShown(r *results.Results, sc *results.Scenario) bool {
	if sc.Part == nil {
		return false
	}
	return slices.ContainsFunc(r.Scenarios, func(o results.Scenario) bool { return o.Name == sc.Part.Of && o.Kind != "" })
}

// withParts is a mix's or a flow's table with its parts' rows under its
// own, each row led by what it is: the whole (the mix, a flow's pass), a
// call of the mix with its share, or a step of the flow.
func withParts(t table, sc *results.Scenario, parts []*results.Scenario) table {
	whole := "mix"
	if sc.Kind == results.KindFlow {
		whole = "flow (pass)"
	}
	t.Header = append([]string{"part"}, t.Header...)
	for i, row := range t.Rows {
		t.Rows[i] = append([]string{whole}, row...)
	}
	for _, p := range parts {
		label := fmt.Sprintf("%d. %s", p.Part.Index+1, p.Call)
		if p.Part.Share > 0 {
			label = fmt.Sprintf("%s (%s)", p.Call, percent(p.Part.Share))
		}
		pt := scenarioTable(p)
		for i, row := range pt.Rows {
			t.row(append([]string{label}, row...), pt.Tones[i])
		}
	}
	t.Note += "; each part judged on its own, in the run's family"
	return t
}

// percent is a share as a percentage, e.g. "90 %".
func percent(share float64) string {
	return strconv.FormatFloat(math.Round(1000*share)/10, 'f', -1, 64) + " %"
}

// eventWho names what a perturbation was done to: its target, and the
// node, or the sides of a group's split ("net [eu0 eu1] | [us0]").
func eventWho(ev results.Perturbation) string {
	switch {
	case ev.Node != "":
		return ev.Target + " " + ev.Node
	case len(ev.Sides) > 0:
		return ev.Target + " " + results.SidesText(ev.Sides)
	}
	return ev.Target
}
