package verdict

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// CellMetric is how a sweep cell's headline reads: its mean latency, from
// send to confirmation, lower being better.
var CellMetric = stats.Metric{Format: human.Duration}

// CellKey names one cell of a grid.
type CellKey struct {
	Connections int
	Rate        float64
}

// String is the cell as the reports show it: "2 conns × 200/s".
func (k CellKey) String() string {
	conns := "conns"
	if k.Connections == 1 {
		conns = "conn"
	}
	return fmt.Sprintf("%d %s × %s/s", k.Connections, conns, strconv.FormatFloat(k.Rate, 'f', -1, 64))
}

// Cells are a sweep's cells in the order first run, each with its runs
// (the grid's rounds, or a search's repeats) in order.
func Cells(sw *results.Sweep) ([]CellKey, map[CellKey][]results.Cell) {
	var keys []CellKey
	runs := map[CellKey][]results.Cell{}
	for _, c := range sw.Cells {
		k := CellKey{c.Connections, c.Rate}
		if _, ok := runs[k]; !ok {
			keys = append(keys, k)
		}
		runs[k] = append(runs[k], c)
	}
	return keys, runs
}

// cellRound is a cell's run as the verdict policy sees a round: its mean
// latency as the headline (none, a failed round, when it confirmed
// nothing or went wrong).
func cellRound(c results.Cell) stats.Round {
	r := stats.Round{Headline: c.LatencyNs.Mean, Failed: c.Error != "", Error: c.Error, Requests: c.Sent, OK: c.OK, Errors: c.Errors}
	if c.Confirmed == 0 || r.Failed {
		r.Headline = math.NaN()
	}
	return r
}

// CellSide is one target's runs of a cell as the verdict policy sees them.
func CellSide(name string, runs []results.Cell) stats.Side {
	rs := make([]stats.Round, len(runs))
	for i, c := range runs {
		rs[i] = cellRound(c)
	}
	return stats.NewSide(name, rs, false)
}

// SummarizeCells is each cell of a sweep over its runs.
func SummarizeCells(sw *results.Sweep) []results.CellSummary {
	keys, runs := Cells(sw)
	out := make([]results.CellSummary, 0, len(keys))
	for _, k := range keys {
		cs := results.CellSummary{Connections: k.Connections, Rate: k.Rate, Runs: len(runs[k])}
		var rate, mean, p99 []float64
		for _, c := range runs[k] {
			if c.Saturated {
				cs.Saturated++
			}
			rate = append(rate, c.ConfirmedPerSecond())
			if c.Confirmed > 0 && c.Error == "" {
				mean = append(mean, c.LatencyNs.Mean)
				p99 = append(p99, float64(c.LatencyNs.P99))
			}
		}
		spread := func(vs []float64, higher bool) results.Spread {
			s := stats.Summarize(vs, higher)
			return results.Spread{Best: s.Best, Median: s.Median, Worst: s.Worst}
		}
		cs.ConfirmedPerS, cs.MeanLatencyNs, cs.P99LatencyNs = spread(rate, true), spread(mean, false), spread(p99, false)
		out = append(out, cs)
	}
	return out
}

// JudgeCell holds a candidate's runs of one cell against a base's by p,
// on their mean latencies. A cell that saturated in any run withholds the
// verdict (its latency is of a backlog, not of the target's pace); the
// side that saturated where the other did not is then the unhealthy one.
func JudgeCell(p stats.Policy, base, cand stats.Side, baseRuns, candRuns []results.Cell, d stats.Design) stats.Judgement {
	sat := func(runs []results.Cell) int {
		n := 0
		for _, c := range runs {
			if c.Saturated {
				n++
			}
		}
		return n
	}
	bs, cs := sat(baseRuns), sat(candRuns)
	if bs+cs == 0 {
		return p.Judge(base, cand, CellMetric, p.Floor(0), d)
	}
	j := stats.Judgement{Verdict: stats.Withheld, Ratio: math.NaN(),
		Reason: fmt.Sprintf("saturated: %s in %d of %d runs, %s in %d of %d; no latency verdict on a backlog",
			cand.Name, cs, len(candRuns), base.Name, bs, len(baseRuns))}
	switch {
	case cs > 0 && bs == 0:
		j.Unhealthy = cand.Name
	case bs > 0 && cs == 0:
		j.Unhealthy = base.Name
	}
	return j
}

// Sweep summarises every sweep of one scenario cell by cell and judges
// each target's cells against the baseline's at false-alarm rate alpha
// (the grid's rounds pair the targets), setting Summary (and Verdicts, on
// the targets other than the baseline) of each.
func Sweep(p stats.Policy, sweeps []*results.Sweep, baseline string, alpha float64) {
	var base *results.Sweep
	for _, sw := range sweeps {
		sw.Summary = SummarizeCells(sw)
		if sw.Target == baseline {
			base = sw
		}
	}
	if base == nil {
		return
	}
	_, baseRuns := Cells(base)
	for _, sw := range sweeps {
		if sw == base {
			continue
		}
		sw.Verdicts = nil
		keys, runs := Cells(sw)
		for _, k := range keys {
			br, ok := baseRuns[k]
			if !ok {
				continue
			}
			j := JudgeCell(p, CellSide(baseline, br), CellSide(sw.Target, runs[k]), br, runs[k], stats.Design{Paired: true, Alpha: alpha})
			v := results.CellVerdict{Connections: k.Connections, Rate: k.Rate, Base: baseline, Verdict: j.Verdict, Reason: j.Reason, Estimate: j.Estimate}
			if j.Verdict.Speed() {
				v.Ratio = j.Ratio
			}
			sw.Verdicts = append(sw.Verdicts, v)
		}
	}
}
