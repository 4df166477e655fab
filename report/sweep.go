package report

import (
	"fmt"
	"strings"

	"github.com/tandem-bench/tandem/results"
)

// sweepTables shows each sweep: one row per cell, saturated cells marked,
// and the diagonal (the unsaturated cell with the most offered load, the
// one to study closely).
func sweepTables(sweeps []results.Sweep) []table {
	var ts []table
	for _, sw := range sweeps {
		t := table{Title: fmt.Sprintf("Sweep %s on %s", sw.Scenario, sw.Target),
			Header: []string{"connections", "rate/conn", "expected", "sent", "confirmed", "latency mean", "p50", "p99", "dup", "neg", "state"}}
		best := -1
		for i, c := range sw.Cells {
			if !c.Saturated && (best < 0 || float64(c.Connections)*c.Rate > float64(sw.Cells[best].Connections)*sw.Cells[best].Rate) {
				best = i
			}
		}
		for i, c := range sw.Cells {
			state := "ok"
			if c.Saturated {
				state = "SATURATED"
			}
			if i == best {
				state += ", diagonal"
			}
			if c.Search {
				state += fmt.Sprintf(", search probe %d", c.Repeat)
			}
			if c.Error != "" {
				state += ": " + firstLine(c.Error)
			}
			lat := []string{"–", "–", "–"}
			if c.Confirmed > 0 {
				lat = []string{Duration(c.LatencyNs.Mean), Duration(float64(c.LatencyNs.P50)), Duration(float64(c.LatencyNs.P99))}
			}
			t.Rows = append(t.Rows, []string{fmt.Sprint(c.Connections), rateText(c.Rate), count64(c.Expected), count64(c.Sent),
				count64(c.Confirmed), lat[0], lat[1], lat[2], fmt.Sprint(c.Duplicates), fmt.Sprint(c.NegativeLatencies), state})
		}
		var notes []string
		notes = append(notes, fmt.Sprintf("%s load, confirmed by %s; saturated when %s", sw.Load, confirmWord(sw.Confirm), sw.Rule))
		for _, p := range sw.Saturation {
			s := fmt.Sprintf("c=%d keeps up to %s/s per connection", p.Connections, rateText(p.HighestOK))
			if p.HighestOK == 0 {
				s = fmt.Sprintf("c=%d keeps up at no rate tried", p.Connections)
			}
			if p.LowestSaturated > 0 {
				s += fmt.Sprintf(", saturates at %s/s", rateText(p.LowestSaturated))
			}
			notes = append(notes, s)
		}
		for _, s := range sw.Search {
			notes = append(notes, fmt.Sprintf("search c=%d: sustains %s/s, saturates at %s/s (%d probes; stop: %s)",
				s.Connections, rateText(s.Sustained), rateText(s.Saturated), s.Probes, s.StopRule))
		}
		t.Note = strings.Join(notes, "; ")
		ts = append(ts, t)
	}
	return ts
}

func confirmWord(c string) string {
	if c == "cometbft" {
		return "committed blocks"
	}
	return "successful answers within the cell"
}

func count64(n int64) string { return Number(float64(n)) }

// rateText shows a rate without decimals when it is whole.
func rateText(r float64) string {
	if r == float64(int64(r)) {
		if r < 100 {
			return fmt.Sprint(int64(r))
		}
		return Number(r)
	}
	return fmt.Sprintf("%.4g", r)
}
