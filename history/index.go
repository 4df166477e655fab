package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/tandem-bench/tandem/results"
)

// Series names one scalar of a run: a scenario's headline or error share
// for a target at a level, a sweep's knee, a counted cost's figure. Its
// key is JSON, so no name can make two series one.
type Series struct {
	Scenario string `json:"scenario"`
	Target   string `json:"target"`
	Level    int    `json:"level"`
	Metric   string `json:"metric"`
}

// Key is the series' stored name.
func (s Series) Key() string {
	b, _ := json.Marshal([]any{s.Scenario, s.Target, s.Level, s.Metric})
	return string(b)
}

// ParseSeries reads a stored series name back.
func ParseSeries(key string) (Series, error) {
	var parts []any
	if err := json.Unmarshal([]byte(key), &parts); err != nil || len(parts) != 4 {
		return Series{}, fmt.Errorf("series %q: not a series key", key)
	}
	s := Series{}
	var ok1, ok2, ok4 bool
	s.Scenario, ok1 = parts[0].(string)
	s.Target, ok2 = parts[1].(string)
	lvl, ok3 := parts[2].(float64)
	s.Metric, ok4 = parts[3].(string)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return Series{}, fmt.Errorf("series %q: not a series key", key)
	}
	s.Level = int(lvl)
	return s, nil
}

// String names the series for people: "getblock-latency a c=1 headline".
func (s Series) String() string {
	out := s.Scenario + " " + s.Target
	if s.Level != 0 {
		out += fmt.Sprintf(" c=%d", s.Level)
	}
	return out + " " + s.Metric
}

// Point is one series' scalar in one run.
type Point struct {
	Series Series
	// ConfigFP fingerprints what the series measured (the call, the load,
	// the metric): points with different fingerprints are not comparable.
	ConfigFP  string
	Direction string // lower or higher is better
	Unit      string
	Value     float64
	// Rounds are the values behind it, for significance.
	Rounds []float64
}

// Verdict is one verdict of a run.
type Verdict struct {
	Scenario, Target string
	Level            int
	Verdict, Reason  string
}

// Difference is one compat difference by its fingerprint.
type Difference struct {
	Fingerprint, Call, Target, Path, Kind string
	Cases                                 int
}

// index is what the tables hold of one run.
type index struct {
	points   []Point
	verdicts []Verdict
	diffs    []Difference
}

func fingerprint(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// EnvFingerprint fingerprints the machine a run was made on: the same
// figure on another machine is not the same measurement.
func EnvFingerprint(m results.Machine) string {
	return fingerprint([]any{m.CPUModel, m.Cores, m.OS, m.Arch, m.Kernel, m.GoVersion, m.GOMAXPROCS, m.GeneratorCPUs})
}

// indexOf lays a run out as the tables hold it.
func indexOf(r *results.Results) index {
	var x index
	for _, sc := range r.Scenarios {
		cfg := fingerprint([]any{sc.Call, sc.Metric, sc.Direction, sc.Unit, sc.Load})
		for _, sum := range sc.Summary {
			var rounds, shares []float64
			var requests, ok int64
			for _, rd := range sc.Rounds {
				if rd.Target != sum.Target || rd.Concurrency != sum.Concurrency {
					continue
				}
				requests, ok = requests+rd.Requests, ok+rd.OK
				if rd.Requests > 0 {
					shares = append(shares, float64(rd.Requests-rd.OK)/float64(rd.Requests))
				}
				if !rd.Failed {
					rounds = append(rounds, rd.Headline)
				}
			}
			if sum.N > 0 {
				x.points = append(x.points, Point{Series: Series{sc.Name, sum.Target, sum.Concurrency, "headline"}, ConfigFP: cfg,
					Direction: string(sc.Direction), Unit: headlineUnit(sc), Value: sum.Best, Rounds: rounds})
			}
			if requests > 0 {
				x.points = append(x.points, Point{Series: Series{sc.Name, sum.Target, sum.Concurrency, "error_share"}, ConfigFP: cfg,
					Direction: string(results.Lower), Unit: "share", Value: float64(requests-ok) / float64(requests), Rounds: shares})
			}
		}
		for _, c := range sc.Comparisons {
			x.verdicts = append(x.verdicts, Verdict{sc.Name, c.Candidate, c.Concurrency, string(c.Verdict), c.Reason})
		}
	}
	for _, tg := range r.Targets {
		x.points = append(x.points, startupPoints(tg)...)
	}
	for _, sw := range r.Sweeps {
		cfg := fingerprint([]any{sw.Call, sw.Load, sw.Confirm, sw.Rule})
		for _, p := range sw.Saturation {
			if p.HighestOK > 0 {
				x.points = append(x.points, Point{Series: Series{sw.Scenario, sw.Target, p.Connections, "knee_rate"}, ConfigFP: cfg,
					Direction: string(results.Higher), Unit: "/s per connection", Value: p.HighestOK})
			}
		}
	}
	for _, c := range r.Costs {
		if c.Error != "" {
			continue
		}
		cfg := fingerprint([]any{c.Source, c.Ops})
		x.points = append(x.points,
			Point{Series: Series{c.Name, "", 0, "instructions_per_op"}, ConfigFP: cfg, Direction: string(results.Lower), Unit: "instructions", Value: c.InstructionsPerOp},
			Point{Series: Series{c.Name, "", 0, "allocations_per_op"}, ConfigFP: cfg, Direction: string(results.Lower), Unit: "allocations", Value: c.AllocationsPerOp})
	}
	if c := r.Compat; c != nil {
		by := map[string]*Difference{}
		for _, cs := range c.Cases {
			for _, d := range cs.Differences {
				fp := fingerprint([]any{cs.Call, d.Target, d.Path, d.Kind})
				if x, ok := by[fp]; ok {
					x.Cases++
					continue
				}
				by[fp] = &Difference{Fingerprint: fp, Call: cs.Call, Target: d.Target, Path: d.Path, Kind: d.Kind, Cases: 1}
			}
		}
		for _, d := range by {
			x.diffs = append(x.diffs, *d)
		}
		sort.Slice(x.diffs, func(i, j int) bool { return x.diffs[i].Fingerprint < x.diffs[j].Fingerprint })
	}
	return x
}

// startupPoints are a target's start from empty as series of the
// scenario "startup": first answer, ready, CPU, peak RSS and disk, each
// the median of its starts with every start as a round.
func startupPoints(tg results.Target) []Point {
	if tg.Startup == nil {
		return nil
	}
	runs := tg.StartupRuns
	if len(runs) == 0 {
		runs = []results.Startup{*tg.Startup}
	}
	cfg := fingerprint([]any{"startup", len(runs)})
	var out []Point
	for _, m := range []struct {
		metric, unit string
		of           func(results.Startup) int64
	}{
		{"startup_first_answer", "ns", func(s results.Startup) int64 { return s.FirstAnswerNs }},
		{"startup_ready", "ns", func(s results.Startup) int64 { return s.ReadyNs }},
		{"startup_cpu", "ns", func(s results.Startup) int64 { return s.CPUNs }},
		{"startup_peak_rss", "bytes", func(s results.Startup) int64 { return s.PeakRSSBytes }},
		{"startup_disk", "bytes", func(s results.Startup) int64 { return s.DiskBytes }},
	} {
		if m.of(*tg.Startup) <= 0 {
			continue
		}
		var rounds []float64
		for _, st := range runs {
			if v := m.of(st); v > 0 {
				rounds = append(rounds, float64(v))
			}
		}
		out = append(out, Point{Series: Series{"startup", tg.Name, 0, m.metric}, ConfigFP: cfg, Direction: string(results.Lower), Unit: m.unit,
			Value: float64(m.of(*tg.Startup)), Rounds: rounds})
	}
	return out
}

// headlineUnit is the unit of a scenario's headline: ns of latency, or
// units per second.
func headlineUnit(sc results.Scenario) string {
	if sc.Direction == results.Higher {
		return sc.Unit + "s/s"
	}
	return "ns"
}
