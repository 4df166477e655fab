package verdict

import (
	"fmt"
	"math"
	"slices"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
)

// Verdicts of a change that only tandem compare gives.
const (
	// Missing is a scenario, target or level the base has and the head
	// lacks: a regression, since what was measured before no longer is.
	Missing = "missing"
	// New is one only the head has: listed, never a regression.
	New = "new"
)

// Change is one scenario, target and level held between two runs: the
// base run's rounds as the base, the head run's as the candidate.
type Change struct {
	Scenario    string `json:"scenario"`
	Target      string `json:"target"`
	Concurrency int    `json:"concurrency,omitempty"`
	// Connections and Rate name a sweep's cell (Rate > 0), whose
	// headline is its mean latency.
	Connections int     `json:"connections,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	// Base and Head are the bests of the successful rounds.
	Base float64 `json:"base"`
	Head float64 `json:"head"`
	// Ratio is head / base; 0 without a speed verdict.
	Ratio float64 `json:"ratio"`
	// Change is how much worse the head is, as a fraction of the base:
	// for latency (head − base) / base, for throughput (base − head) /
	// base; negative when the head is better. 0 without a speed verdict.
	Change float64 `json:"change"`
	// BaseRange and HeadRange are each side's rounds, best and worst;
	// P is the two-sided Mann–Whitney p-value of the two sides' rounds
	// (1 without rounds): how likely rounds this far apart are by chance.
	BaseRange [2]float64 `json:"base_range"`
	HeadRange [2]float64 `json:"head_range"`
	P         float64    `json:"p"`
	// BaseErrorShare and HeadErrorShare are the shares of failed requests.
	BaseErrorShare float64 `json:"base_error_share"`
	HeadErrorShare float64 `json:"head_error_share"`
	Verdict        string  `json:"verdict"`
	Reason         string  `json:"reason"`
	ClientBound    bool    `json:"client_bound,omitempty"`
	// Regression is a slower head beyond the allowance, a head that is
	// failing or could not keep up (dropped arrivals, a short rate) where
	// the base could, or a row the head lost.
	Regression bool `json:"regression"`
}

// Compare holds every scenario, target and level of head against base by
// the head's policy (the base's if the head has none recorded), its noise
// floor raised to the larger A/A distance either run measured there.
// maxRegression is the tolerated worsening, a fraction. The warnings say
// what a reader should know (different machines or policies, rows only
// one side has).
func Compare(base, head *results.Results, maxRegression float64) ([]Change, []string, error) {
	if math.IsNaN(maxRegression) || math.IsInf(maxRegression, 0) || maxRegression < 0 {
		return nil, nil, fmt.Errorf("max regression %v: want a percentage of 0 or more", maxRegression*100)
	}
	var warnings []string
	bm, hm := base.Machine, head.Machine
	if bm.CPUModel != hm.CPUModel || bm.Cores != hm.Cores || bm.Kernel != hm.Kernel {
		warnings = append(warnings, fmt.Sprintf("the machines differ (%s, %d cores vs %s, %d cores): differences may be the machine's", bm.CPUModel, bm.Cores, hm.CPUModel, hm.Cores))
	}
	p := ComparePolicy(base, head)
	if base.Policy != nil && head.Policy != nil && *base.Policy != *head.Policy {
		warnings = append(warnings, fmt.Sprintf("the runs were judged by different policies; compare uses the head's (%+v)", *head.Policy))
	}
	if err := p.Validate(); err != nil {
		return nil, nil, fmt.Errorf("the recorded policy: %w", err)
	}
	changes := []Change{}
	for _, k := range rowKeys(base, head) {
		bs, hs := scenario(base, k.scenario), scenario(head, k.scenario)
		ch := Change{Scenario: k.scenario, Target: k.target, Concurrency: k.level, P: 1}
		switch {
		case !hasRow(hs, k.target, k.level):
			ch.Verdict, ch.Regression = Missing, true
			ch.Reason = "measured in the base, not in the head"
			changes = append(changes, ch)
			continue
		case !hasRow(bs, k.target, k.level):
			ch.Verdict, ch.Reason = New, "measured in the head only"
			changes = append(changes, ch)
			continue
		}
		b, h := bs.Side(k.target, k.level), hs.Side(k.target, k.level)
		b.Name, h.Name = "base", "head" // one target in two runs
		floor := p.Floor(max(floorAt(bs, k.level), floorAt(hs, k.level)))
		j := p.Judge(b, h, Metric(hs), floor)
		ch.Base, ch.Head = b.Summary.Best, h.Summary.Best
		ch.BaseRange, ch.HeadRange = [2]float64{b.Summary.Best, b.Summary.Worst}, [2]float64{h.Summary.Best, h.Summary.Worst}
		_, ch.P = stats.MannWhitney(finiteOnly(b.Headlines), finiteOnly(h.Headlines))
		ch.BaseErrorShare, ch.HeadErrorShare = b.ErrorShare(), h.ErrorShare()
		ch.Verdict, ch.Reason, ch.ClientBound = j.Verdict, j.Reason, j.ClientBound
		if j.Verdict == stats.Faster || j.Verdict == stats.Slower {
			ch.Ratio = j.Ratio
			ch.Change = j.Ratio - 1 // latency grew
			if hs.Direction == "higher" {
				ch.Change = 1 - j.Ratio // throughput fell
			}
		}
		switch {
		case j.Verdict == stats.Slower:
			ch.Regression = ch.Change > maxRegression
		case j.Verdict == stats.Failing:
			ch.Regression = true
		case j.Verdict == stats.Withheld && j.Unhealthy == h.Name:
			// the head could not keep up with a load the base did, or
			// failed where it did not: worse, whatever its speed
			ch.Regression = true
		}
		changes = append(changes, ch)
	}
	changes = append(changes, compareSweeps(p, base, head, maxRegression)...)
	return changes, warnings, nil
}

// Where is the row a change is about: a level (c=N) or a sweep's cell.
func (ch Change) Where() string {
	if ch.Rate > 0 {
		return CellKey{ch.Connections, ch.Rate}.String()
	}
	return fmt.Sprintf("c=%d", ch.Concurrency)
}

// sweepKey is one cell of one target's sweep.
type sweepKey struct {
	scenario, target string
	cell             CellKey
}

// sweepCells lists every cell of each run's sweeps with its runs.
func sweepCells(r *results.Results) ([]sweepKey, map[sweepKey][]results.Cell) {
	var keys []sweepKey
	runs := map[sweepKey][]results.Cell{}
	for i := range r.Sweeps {
		sw := &r.Sweeps[i]
		if len(sw.Search) > 0 {
			continue // a search's probes are where its bisection went, not a grid two runs share
		}
		cks, cruns := Cells(sw)
		for _, ck := range cks {
			k := sweepKey{sw.Scenario, sw.Target, ck}
			if _, ok := runs[k]; !ok {
				keys = append(keys, k)
			}
			runs[k] = append(runs[k], cruns[ck]...)
		}
	}
	return keys, runs
}

// compareSweeps holds every sweep cell of head against base: the mean
// latency by the policy, and a cell that saturates in the head where it
// kept up in the base is a regression whatever its latency.
func compareSweeps(p stats.Policy, base, head *results.Results, maxRegression float64) []Change {
	hk, hruns := sweepCells(head)
	bk, bruns := sweepCells(base)
	var out []Change
	for _, k := range append(hk, bk...) {
		if slices.ContainsFunc(out, func(ch Change) bool {
			return ch.Scenario == k.scenario && ch.Target == k.target && ch.Connections == k.cell.Connections && ch.Rate == k.cell.Rate
		}) {
			continue
		}
		ch := Change{Scenario: k.scenario, Target: k.target, Connections: k.cell.Connections, Rate: k.cell.Rate, P: 1}
		br, hr := bruns[k], hruns[k]
		switch {
		case len(hr) == 0:
			ch.Verdict, ch.Regression, ch.Reason = Missing, true, "measured in the base, not in the head"
			out = append(out, ch)
			continue
		case len(br) == 0:
			ch.Verdict, ch.Reason = New, "measured in the head only"
			out = append(out, ch)
			continue
		}
		b, h := CellSide("base", br), CellSide("head", hr)
		j := JudgeCell(p, b, h, br, hr)
		ch.Base, ch.Head = b.Summary.Best, h.Summary.Best
		ch.BaseRange, ch.HeadRange = [2]float64{b.Summary.Best, b.Summary.Worst}, [2]float64{h.Summary.Best, h.Summary.Worst}
		_, ch.P = stats.MannWhitney(finiteOnly(b.Headlines), finiteOnly(h.Headlines))
		ch.BaseErrorShare, ch.HeadErrorShare = b.ErrorShare(), h.ErrorShare()
		ch.Verdict, ch.Reason = j.Verdict, j.Reason
		if j.Verdict == stats.Faster || j.Verdict == stats.Slower {
			ch.Ratio, ch.Change = j.Ratio, j.Ratio-1
		}
		switch {
		case j.Verdict == stats.Slower:
			ch.Regression = ch.Change > maxRegression
		case j.Verdict == stats.Failing:
			ch.Regression = true
		case j.Verdict == stats.Withheld && j.Unhealthy == h.Name:
			ch.Regression = true // saturated, or failing, where the base kept up
		}
		out = append(out, ch)
	}
	return out
}

// finiteOnly drops the NaNs of failed rounds.
func finiteOnly(vs []float64) []float64 {
	var out []float64
	for _, v := range vs {
		if !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// ComparePolicy is the policy Compare judges by: the head's, else the
// base's, else the default.
func ComparePolicy(base, head *results.Results) stats.Policy {
	if head.Policy == nil {
		return PolicyOf(base)
	}
	return PolicyOf(head)
}

type rowKey struct {
	scenario, target string
	level            int
}

// rowKeys lists every scenario, target and level of either run, the
// head's order first, then what only the base has.
func rowKeys(base, head *results.Results) []rowKey {
	var keys []rowKey
	for _, r := range []*results.Results{head, base} {
		for _, sc := range r.Scenarios {
			for _, s := range sc.Summary {
				k := rowKey{sc.Name, s.Target, s.Concurrency}
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	return keys
}

func scenario(r *results.Results, name string) *results.Scenario {
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i]
		}
	}
	return nil
}

// hasRow reports whether a scenario (nil: absent) has a summary row for
// the target at the level.
func hasRow(sc *results.Scenario, target string, level int) bool {
	return sc != nil && slices.ContainsFunc(sc.Summary, func(s results.Summary) bool {
		return s.Target == target && s.Concurrency == level
	})
}

// floorAt is the highest noise floor a run applied at a level: the A/A
// distance it measured there, if it was above the policy's.
func floorAt(sc *results.Scenario, level int) float64 {
	f := 0.0
	for _, c := range sc.Comparisons {
		if c.Concurrency == level {
			f = max(f, c.NoiseFloor)
		}
	}
	return f
}

// Comparison is what tandem compare reports and gates on: every change
// between two runs, what a reader should know, and the tally.
type Comparison struct {
	// Changes are the rows of either run, the head's order first.
	Changes []Change
	// Warnings say what a reader should know (different machines or
	// policies, withheld pairs).
	Warnings []string
	// Regressions counts the changes that are regressions; Withheld the
	// pairs the policy could not judge.
	Regressions, Withheld int
	// MaxRegression is the tolerated worsening, in percent of the base.
	MaxRegression float64
	// Policy is the policy the changes were judged by (ComparePolicy).
	Policy stats.Policy
	// Base and Head are the runs compared, for a report that draws them.
	Base, Head *results.Results `json:"-"`
}

// CompareRuns holds head against base as Compare does, with the tolerated
// worsening maxRegression in percent of the base, and tallies the changes:
// pairs the policy could not judge add a warning that says how many.
func CompareRuns(base, head *results.Results, maxRegression float64) (Comparison, error) {
	changes, warnings, err := Compare(base, head, maxRegression/100)
	if err != nil {
		return Comparison{}, err
	}
	c := Comparison{Changes: changes, Warnings: warnings, MaxRegression: maxRegression, Policy: ComparePolicy(base, head), Base: base, Head: head}
	for _, ch := range changes {
		if ch.Regression {
			c.Regressions++
		}
		if ch.Verdict == stats.Withheld {
			c.Withheld++
		}
	}
	if c.Withheld > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d of %d pairs could not be judged (withheld): see their reasons", c.Withheld, len(changes)))
	}
	return c, nil
}

// Regressed reports whether any change is a regression.
func (c Comparison) Regressed() bool { return c.Regressions > 0 }

// Gate is the comparison as a gate: an error that counts the regressions,
// nil without one.
func (c Comparison) Gate() error {
	if !c.Regressed() {
		return nil
	}
	return fmt.Errorf("%d regressions (beyond %.3g %%, failing, or missing)", c.Regressions, c.MaxRegression)
}
