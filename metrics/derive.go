package metrics

import (
	"math"
	"time"

	"github.com/tandem-bench/tandem/results"
)

// Slope is the least-squares slope of a series' points (t in ns) per
// minute; NaN with fewer than two points or no spread in time.
func Slope(points [][2]float64) float64 {
	n := float64(len(points))
	if n < 2 {
		return math.NaN()
	}
	var st, sv float64
	for _, p := range points {
		st += p[0]
		sv += p[1]
	}
	mt, mv := st/n, sv/n
	var num, den float64
	for _, p := range points {
		num += (p[0] - mt) * (p[1] - mv)
		den += (p[0] - mt) * (p[0] - mt)
	}
	if den == 0 {
		return math.NaN()
	}
	return num / den * float64(time.Minute)
}

// window keeps the points within [from, to] (times since the collector's
// start); zero bounds mean the whole run.
func window(points [][2]float64, start, from, to time.Time) [][2]float64 {
	if from.IsZero() && to.IsZero() {
		return points
	}
	lo, hi := float64(from.Sub(start)), float64(to.Sub(start))
	var out [][2]float64
	for _, p := range points {
		if p[0] >= lo && p[0] <= hi {
			out = append(out, p)
		}
	}
	return out
}

// slopeSeries are the series whose slope is a rate worth quoting: heights
// (blocks/min), cumulative transactions (txs/min), CPU seconds.
var slopeSeries = map[string]string{
	"cometbft_consensus_height":    "blocks_per_min",
	"cometbft_consensus_total_txs": "txs_per_min",
	"process_cpu_seconds_total":    "cpu_s_per_min",
}

// meanMax are the gauges whose mean and maximum a report quotes.
var meanMax = map[string]string{
	"cometbft_mempool_size":         "mempool_size",
	"process_resident_memory_bytes": "rss_bytes",
	Load1:                           "load1",
	"cometbft_consensus_rounds":     "rounds_per_height",
	"cometbft_p2p_peers":            "peers",
}

// Derive computes the quoted figures over a window of the run (the whole
// run when from and to are zero): NAME_per_min slopes, NAME_mean and
// NAME_max. A series with several label sets contributes its first.
func Derive(m results.Metrics, from, to time.Time) map[string]float64 {
	out := map[string]float64{}
	start := time.Unix(0, m.StartUnixNs)
	seen := map[string]bool{}
	for _, s := range m.Series {
		if seen[s.Name] {
			continue
		}
		seen[s.Name] = true
		pts := window(s.Points, start, from, to)
		if key, ok := slopeSeries[s.Name]; ok {
			if v := Slope(pts); !math.IsNaN(v) {
				out[key] = v
			}
		}
		if key, ok := meanMax[s.Name]; ok && len(pts) > 0 {
			var sum, hi float64
			hi = math.Inf(-1)
			for _, p := range pts {
				sum += p[1]
				hi = max(hi, p[1])
			}
			out[key+"_mean"] = sum / float64(len(pts))
			out[key+"_max"] = hi
		}
	}
	return out
}
