package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tandem-bench/tandem/cost"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/metrics"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/verdict"
)

// sweepTables shows each sweep: one row per cell, saturated cells marked,
// and the diagonal (the unsaturated cell with the most offered load, the
// one to study closely).
func sweepTables(sweeps []results.Sweep) []table {
	var ts []table
	for _, sw := range sweeps {
		t := table{Title: fmt.Sprintf("Sweep %s on %s", sw.Scenario, sw.Target),
			Header: []string{"connections", "rate/conn", "expected", "sent", "confirmed", "latency mean", "p50", "p99", "dup", "neg", "state"}}
		if sw.Rounds > 1 {
			t.Header = append([]string{"round"}, t.Header...)
		}
		// the chain's figures, when the target exposes them (CometBFT's)
		withMetrics := slices.ContainsFunc(sw.Cells, func(c results.Cell) bool {
			_, ok := c.Metrics["blocks_per_min"]
			return ok
		})
		if withMetrics {
			t.Header = append(t.Header[:len(t.Header)-1], "blocks/min", "txs/min processing", "mempool max", "state")
		}
		best := -1
		for i, c := range sw.Cells {
			if !c.Saturated && (best < 0 || float64(c.Connections)*c.Rate > float64(sw.Cells[best].Connections)*sw.Cells[best].Rate) {
				best = i
			}
		}
		for i, c := range sw.Cells {
			state, tn := "ok", toneNone
			if c.Saturated {
				state, tn = "SATURATED", toneBad
			}
			if c.LatencyGrows {
				state += ", latency grows"
			}
			if i == best {
				state += ", diagonal"
			}
			if c.Search {
				state += fmt.Sprintf(", search probe %d", c.Repeat)
			}
			if n := len(c.Perturbations); n > 0 {
				state += fmt.Sprintf(", %d perturbed", n)
			}
			if c.Error != "" {
				state += ": " + firstLine(c.Error)
			}
			lat := []string{"–", "–", "–"}
			if c.Confirmed > 0 {
				lat = []string{human.Duration(c.LatencyNs.Mean), human.Duration(float64(c.LatencyNs.P50)), human.Duration(float64(c.LatencyNs.P99))}
			}
			row := []string{fmt.Sprint(c.Connections), rateText(c.Rate), count64(c.Expected), count64(c.Sent),
				count64(c.Confirmed), lat[0], lat[1], lat[2], fmt.Sprint(c.Duplicates), fmt.Sprint(c.NegativeLatencies)}
			if sw.Rounds > 1 {
				row = append([]string{fmt.Sprint(c.Round)}, row...)
			}
			if withMetrics {
				row = append(row, metricCell(c.Metrics, "blocks_per_min"), metricCell(c.Metrics, "processing_txs_per_min"),
					metricCell(c.Metrics, "mempool_size_max"))
			}
			t.row(append(row, state), tn)
		}
		var notes []string
		notes = append(notes, fmt.Sprintf("%s load, confirmed by %s; saturated when %s", sw.Load, confirmWord(sw.Confirm), sw.Rule))
		for _, p := range sw.Saturation {
			notes = append(notes, saturationText(p))
		}
		for _, s := range sw.Search {
			notes = append(notes, fmt.Sprintf("search c=%d: sustains %s/s, saturates at %s/s (%d probes; stop: %s)",
				s.Connections, rateText(s.Sustained), rateText(s.Saturated), s.Probes, s.StopRule))
		}
		t.Note = strings.Join(notes, "; ")
		ts = append(ts, t)
		var runs []perturbedRun
		for _, c := range sw.Cells {
			where := verdict.CellKey{Connections: c.Connections, Rate: c.Rate}.String()
			if c.Round > 0 {
				where += fmt.Sprintf(", round %d", c.Round)
			}
			runs = append(runs, perturbedRun{where, c.Perturbations})
		}
		if pt, ok := perturbationRows(fmt.Sprintf("Perturbations: sweep %s on %s", sw.Scenario, sw.Target), "cell", runs); ok {
			ts = append(ts, pt)
		}
	}
	return append(ts, cellSummaryTables(sweeps)...)
}

// cellSummaryTables show, per sweep scenario whose grid ran in rounds, each
// cell per target over its runs, with its verdict against the baseline
// (a grid run once has no spread to judge by: its cell table says it all).
func cellSummaryTables(sweeps []results.Sweep) []table {
	var ts []table
	var order []string
	for _, sw := range sweeps {
		if sw.Rounds > 1 && !slices.Contains(order, sw.Scenario) {
			order = append(order, sw.Scenario)
		}
	}
	for _, name := range order {
		t := table{Title: "Sweep " + name + ": cells over their rounds",
			Note:   "best [median … worst] of each cell's runs; the verdict is on the mean latency, by the study's policy, against the baseline's same cell",
			Header: []string{"cell", "target", "runs", "saturated", "confirmed/s", "latency mean", "p99", "verdict"}}
		spread := func(s results.Spread, f func(float64) string) string {
			return fmt.Sprintf("%s [%s … %s]", f(s.Best), f(s.Median), f(s.Worst))
		}
		perS := func(v float64) string { return human.Number(v) + "/s" }
		for _, sw := range sweeps {
			if sw.Scenario != name {
				continue
			}
			for _, cs := range sw.Summary {
				v, tn := "baseline", toneNone
				if len(sw.Verdicts) > 0 {
					v = "–"
				}
				for _, cv := range sw.Verdicts {
					if cv.Connections == cs.Connections && cv.Rate == cs.Rate {
						v, tn = cellVerdictText(sw.Target, cv), toneOf(cv.Verdict)
					}
				}
				lat, p99 := "–", "–"
				if cs.MeanLatencyNs.Best > 0 {
					lat, p99 = spread(cs.MeanLatencyNs, human.Duration), spread(cs.P99LatencyNs, human.Duration)
				}
				t.row([]string{verdict.CellKey{Connections: cs.Connections, Rate: cs.Rate}.String(), sw.Target,
					fmt.Sprint(cs.Runs), fmt.Sprint(cs.Saturated), spread(cs.ConfirmedPerS, perS), lat, p99, v}, tn)
			}
		}
		ts = append(ts, t)
	}
	return ts
}

// cellVerdictText says a cell's verdict in words, as a scenario's.
func cellVerdictText(target string, cv results.CellVerdict) string {
	return speedWords(target, cv.Base, cv.Verdict, cv.Ratio, false, cv.Reason, cv.Estimate)
}

// saturationText says where one connection count saturates. "keeps up to
// X, saturates at Y" always has X < Y: when the cells disagree (a rate
// saturated, a higher one kept up) it says the grid is not monotonic
// instead.
func saturationText(p results.SaturationPoint) string {
	hi, lo := rateText(p.HighestOK), rateText(p.LowestSaturated)
	switch {
	case p.LowestSaturated > 0 && p.HighestOK == p.LowestSaturated:
		return fmt.Sprintf("c=%d both kept up and saturated at %s/s per connection: not monotonic, rerun the sweep", p.Connections, lo)
	case p.LowestSaturated > 0 && p.HighestOK > p.LowestSaturated:
		return fmt.Sprintf("c=%d saturated at %s/s but kept up at %s/s per connection: not monotonic, rerun the sweep", p.Connections, lo, hi)
	case p.HighestOK == 0 && p.LowestSaturated > 0:
		return fmt.Sprintf("c=%d keeps up at no rate tried, saturates at %s/s per connection", p.Connections, lo)
	case p.HighestOK == 0:
		return fmt.Sprintf("c=%d keeps up at no rate tried", p.Connections)
	case p.LowestSaturated > 0:
		return fmt.Sprintf("c=%d keeps up to %s/s per connection, saturates at %s/s", p.Connections, hi, lo)
	}
	return fmt.Sprintf("c=%d keeps up to %s/s per connection", p.Connections, hi)
}

func metricCell(m map[string]float64, key string) string {
	v, ok := m[key]
	if !ok {
		return "–"
	}
	return human.Number(v)
}

// metricsTables shows, per target, each scraped family read as its kind
// says (metrics.Figures): a histogram as p50/p90/p99 of the run's
// observations and their rate, a counter as its rate, a gauge as last,
// mean and maximum.
func metricsTables(targets []results.Target) []table {
	var ts []table
	for _, tg := range targets {
		m := tg.Metrics
		if m == nil || len(m.Series) == 0 {
			continue
		}
		t := table{Title: "Metrics of " + tg.Name, Header: []string{"series", "labels", "kind", "points", "over the run"}}
		t.Note = fmt.Sprintf("scraped from %s every %s: %d scrapes, %d failed", m.URL, human.Duration(float64(m.IntervalNs)), m.Scrapes, m.Errors)
		if m.LastError != "" {
			t.Note += " (last: " + firstLine(m.LastError) + ")"
		}
		figs := metrics.Figures(*m)
		if slices.ContainsFunc(figs, func(f metrics.Figure) bool { return f.Kind == metrics.KindHistogram }) {
			t.Note += "; histograms: quantiles of the observations between the first and the last scrape, interpolated within buckets as Prometheus' histogram_quantile does"
		}
		for _, f := range figs {
			t.Rows = append(t.Rows, []string{f.Name, labelText(f.Labels), string(f.Kind), fmt.Sprint(f.Points), figureWords(f)})
		}
		ts = append(ts, t)
	}
	return ts
}

// figureWords says a family's figures over the run in its unit.
func figureWords(f metrics.Figure) string {
	rate := func(v float64, what string) string {
		if !finite(v) {
			return "no rate (one scrape)"
		}
		if what == "" {
			return unitText(v, f.Unit) + "/s"
		}
		return human.Number(v) + " " + what + "/s"
	}
	switch f.Kind {
	case metrics.KindHistogram:
		if f.Quantile == nil {
			return "no observations during the run; " + rate(f.Rate, "observations")
		}
		var qs []string
		for i, q := range metrics.Quantiles {
			qs = append(qs, fmt.Sprintf("p%s %s", strconv.FormatFloat(q*100, 'f', -1, 64), unitText(f.Quantile[i], f.Unit)))
		}
		return strings.Join(qs, ", ") + "; " + rate(f.Rate, "observations")
	case metrics.KindCounter:
		return rate(f.Rate, "")
	}
	w := fmt.Sprintf("last %s, mean %s, max %s", unitText(f.Last, f.Unit), unitText(f.Mean, f.Unit), unitText(f.Max, f.Unit))
	if finite(f.PerMinute) {
		w += fmt.Sprintf(", %s per minute", unitText(f.PerMinute, f.Unit))
	}
	return w
}

func confirmWord(c string) string {
	if c == "cometbft" {
		return "committed blocks"
	}
	return "successful answers within the cell"
}

func count64(n int64) string { return human.Count(n) }

// rateText shows a rate as a figure (wholeOrSig).
func rateText(r float64) string { return wholeOrSig(r) }

// wholeOrSig shows a figure without decimals when it is whole (2, 20,000),
// else with three significant digits (12.5, 0.250, 12,346): never
// e-notation.
func wholeOrSig(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return human.Count(int64(v))
	}
	return human.Sig(v)
}

// costTables shows the study's counted costs.
func costTables(costs []results.Cost) []table {
	if len(costs) == 0 {
		return nil
	}
	t := table{Title: "Counted costs", Note: "per operation: the mean of the slopes from N to 2N and from 2N to 4N operations under callgrind and DHAT; exact: the two agree within 1 %; cold: one operation",
		Header: []string{"cost", "N", "instructions/op", "allocations/op", "bytes/op", "cold instructions", "cold allocations", "exact"}}
	for _, c := range costs {
		if c.Error != "" {
			t.Rows = append(t.Rows, []string{c.Name, fmt.Sprint(c.Ops), "–", "–", "–", "–", "–", "failed: " + firstLine(c.Error)})
			continue
		}
		exact := cost.Exactness(c)
		t.Rows = append(t.Rows, []string{c.Name, fmt.Sprint(c.Ops), human.Number(c.InstructionsPerOp), wholeOrSig(c.AllocationsPerOp),
			wholeOrSig(c.BytesPerOp), human.Number(float64(c.ColdInstructions)), fmt.Sprint(c.ColdAllocations), exact})
	}
	return []table{t}
}
