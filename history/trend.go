package history

import (
	"cmp"
	"context"
	moremath "github.com/aclements/go-moremath/stats"
	"github.com/tandem-bench/tandem/results"
	"math"
	"slices"
	"time"

	"github.com/tandem-bench/tandem/stats"
)

// Study is a study the history has runs of.
type Study struct {
	Name     string
	Runs     int
	Branches []string
	Last     time.Time
}

// Studies lists the studies with their run counts and branches, the most
// recently run first.
func (s *Store) Studies(ctx context.Context) ([]Study, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT study, branch, COUNT(*), MAX(created_at) FROM runs WHERE archived = 0 GROUP BY study, branch ORDER BY study, branch`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	by := map[string]*Study{}
	var order []string
	for rows.Next() {
		var name, branch string
		var n int
		var last int64
		if err := rows.Scan(&name, &branch, &n, &last); err != nil {
			return nil, err
		}
		st, ok := by[name]
		if !ok {
			st = &Study{Name: name}
			by[name] = st
			order = append(order, name)
		}
		st.Runs += n
		st.Branches = append(st.Branches, branch)
		if t := time.Unix(0, last).UTC(); t.After(st.Last) {
			st.Last = t
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Study, 0, len(order))
	for _, n := range order {
		out = append(out, *by[n])
	}
	slices.SortStableFunc(out, func(a, b Study) int { return b.Last.Compare(a.Last) }) // most recently run first
	return out, nil
}

// SeriesOf lists the series a study's newest run on a branch has.
func (s *Store) SeriesOf(ctx context.Context, study, branch string) ([]Point, error) {
	runs, err := s.Runs(ctx, Filter{Study: study, Branch: branch, ExactBranch: true, Limit: 1})
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	return s.Points(ctx, runs[0].ID)
}

// TrendPoint is one run's value of a series, with what a reader needs to
// trust the line: the spread of its rounds and what it was measured with.
type TrendPoint struct {
	Run           string    `json:"run"`
	CreatedAt     time.Time `json:"created_at"`
	Commit        string    `json:"commit"`
	Value         float64   `json:"value"`
	Unit          string    `json:"unit"`
	Lo            float64   `json:"lo"` // the rounds' lowest (the value when there are none)
	Hi            float64   `json:"hi"`
	ConfigFP      string    `json:"config_fp"`
	EnvFP         string    `json:"env_fp"`
	TandemVersion string    `json:"tandem_version"`
	// Changed says what differs from the point before: configuration,
	// environment, tandem.
	Changed []string `json:"changed,omitempty"`
}

// Trend is a series over a branch's runs of a study, oldest first: at most
// limit points (the newest).
func (s *Store) Trend(ctx context.Context, study, branch string, series Series, limit int) ([]TrendPoint, error) {
	if limit <= 0 {
		limit = 200
	}
	q := `SELECT r.id, r.created_at, r.commit_sha, p.value, p.unit, p.config_fp, r.env_fp, r.tandem_version,
		COALESCE((SELECT MIN(x.value) FROM samples x WHERE x.run_id = p.run_id AND x.series = p.series), p.value),
		COALESCE((SELECT MAX(x.value) FROM samples x WHERE x.run_id = p.run_id AND x.series = p.series), p.value)
		FROM points p JOIN runs r ON r.id = p.run_id
		WHERE p.series = $1 AND r.study = $2 AND r.branch = $3 AND r.archived = 0
		ORDER BY r.created_at DESC, r.id DESC LIMIT $4`
	rows, err := s.db.QueryContext(ctx, q, series.Key(), study, branch, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TrendPoint
	for rows.Next() {
		var p TrendPoint
		var at int64
		if err := rows.Scan(&p.Run, &at, &p.Commit, &p.Value, &p.Unit, &p.ConfigFP, &p.EnvFP, &p.TandemVersion, &p.Lo, &p.Hi); err != nil {
			return nil, err
		}
		p.CreatedAt = time.Unix(0, at).UTC()
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Reverse(out)
	for i := 1; i < len(out); i++ {
		a, b := out[i-1], &out[i]
		if a.ConfigFP != b.ConfigFP {
			b.Changed = append(b.Changed, "configuration")
		}
		if a.EnvFP != b.EnvFP {
			b.Changed = append(b.Changed, "environment")
		}
		if a.TandemVersion != b.TandemVersion {
			b.Changed = append(b.Changed, "tandem "+b.TandemVersion)
		}
	}
	return out, nil
}

// Mover is a series that moved between a branch's two newest runs.
type Mover struct {
	Series     Series  `json:"series"`
	Unit       string  `json:"unit"`
	Before     float64 `json:"before"`
	After      float64 `json:"after"`
	Change     float64 `json:"change"` // how much worse, a fraction (negative: better)
	Comparable bool    `json:"comparable"`
	// Verdict is the verdict engine's word for the move: slower (worse),
	// faster (better), indistinguishable (within the floor) or
	// inconclusive; only slower and faster are changes.
	Verdict stats.Verdict `json:"verdict"`
	// Floor is the least move judged a change, a fraction: the verdicts'
	// 2 %, or more where the series' earlier runs scatter more (see
	// runFloor).
	Floor float64 `json:"floor"`
}

// MoverFloor is the least move that is a change: the verdicts' floor,
// which a series' scatter between runs may raise (runFloor).
const MoverFloor = 0.02

// moverHistory is how many runs TopMovers reads: the newest and the runs
// whose scatter sets the floor.
const moverHistory = 12

// runFloor is the floor for a move between two runs of a series whose
// earlier runs' values are prev: the verdicts' 2 %, raised to 2·√2 times
// the earlier runs' standard deviation on a log scale where at least four
// are known. Two runs' rounds cannot see the noise between runs (another
// day, another neighbour); the earlier runs can, and the difference of
// two runs has √2 times their spread. TestMoverVerdictErrorRates measures
// what this buys.
func runFloor(prev []float64) float64 {
	var logs []float64
	for _, v := range prev {
		if v > 0 && !math.IsInf(v, 0) {
			logs = append(logs, math.Log(v))
		}
	}
	if len(logs) < 4 {
		return MoverFloor
	}
	return max(MoverFloor, math.Expm1(2*math.Sqrt2*moremath.StdDev(logs)))
}

// moverVerdict judges the move from before's rounds to after's (each run's
// one value without them) by the verdict engine's shift rule against
// the 2 % floor (the rounds' shift on a log scale, Mann–Whitney interval
// at 95 %), then withholds slower or faster when the estimate is within
// floor, the series' scatter between runs: a raised floor never makes a
// shift indistinguishable. Its error rates, measured
// by TestMoverVerdictErrorRates, are in docs/history.md.
func moverVerdict(before, after Point, floor float64) stats.Verdict {
	logs := func(p Point) []float64 {
		vs := p.Rounds
		if len(vs) == 0 {
			vs = []float64{p.Value}
		}
		out := make([]float64, 0, len(vs))
		for _, v := range vs {
			if v > 0 {
				out = append(out, math.Log(v))
			}
		}
		return out
	}
	sh := stats.TwoSampleShift(logs(before), logs(after), 0.05)
	v := sh.Verdict(MoverFloor, after.Direction == string(results.Higher))
	if v.Speed() && math.Abs(sh.Est) <= math.Log1p(floor) {
		return stats.Inconclusive // within the series' scatter between runs
	}
	return v
}

// TopMovers lists the series of a study's branch that moved most between
// its two newest runs, worst first, at most n.
func (s *Store) TopMovers(ctx context.Context, study, branch string, n int) ([]Mover, error) {
	runs, err := s.Runs(ctx, Filter{Study: study, Branch: branch, ExactBranch: true, Limit: moverHistory})
	if err != nil || len(runs) < 2 {
		return nil, err
	}
	// the earlier runs' values of each series (same fingerprint), for the
	// floor
	earlier := map[string][]float64{}
	for _, r := range runs[2:] {
		ps, err := s.Points(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			k := p.Series.Key() + "\x00" + p.ConfigFP
			earlier[k] = append(earlier[k], p.Value)
		}
	}
	after, err := s.Points(ctx, runs[0].ID)
	if err != nil {
		return nil, err
	}
	before, err := s.Points(ctx, runs[1].ID)
	if err != nil {
		return nil, err
	}
	prev := map[string]Point{}
	for _, p := range before {
		prev[p.Series.Key()] = p
	}
	var out []Mover
	for _, a := range after {
		b, ok := prev[a.Series.Key()]
		if !ok || b.Value == 0 {
			continue
		}
		floor := runFloor(append([]float64{b.Value}, earlier[b.Series.Key()+"\x00"+b.ConfigFP]...))
		m := Mover{Series: a.Series, Unit: a.Unit, Before: b.Value, After: a.Value, Comparable: a.ConfigFP == b.ConfigFP,
			Change: (a.Value - b.Value) / b.Value, Verdict: moverVerdict(b, a, floor), Floor: floor}
		if a.Direction == string(results.Higher) {
			m.Change = -m.Change
		}
		out = append(out, m)
	}
	// the real changes first, the largest first; then the rest by size
	slices.SortStableFunc(out, func(a, b Mover) int {
		if ra, rb := a.Verdict.Speed() && a.Comparable, b.Verdict.Speed() && b.Comparable; ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return cmp.Compare(math.Abs(b.Change), math.Abs(a.Change))
	})
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}
