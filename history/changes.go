package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/changepoint"
)

// ChangeKind says whether a change point made a series better or worse.
type ChangeKind string

// The kinds of change points.
const (
	Regression  ChangeKind = "regression"
	Improvement ChangeKind = "improvement"
)

// AckStatus is what a person said a change point is.
type AckStatus string

// The triage of a change point.
const (
	AckExpected    AckStatus = "expected"
	AckRegression  AckStatus = "regression"
	AckImprovement AckStatus = "improvement"
)

// ParseAck reads an --as value.
func ParseAck(s string) (AckStatus, error) {
	switch a := AckStatus(s); a {
	case AckExpected, AckRegression, AckImprovement:
		return a, nil
	}
	return "", fmt.Errorf("--as %q: want expected, regression or improvement", s)
}

// ChangePoint is a change point of one series of a study's branch: from
// Run on, the series' level moved by Ratio.
type ChangePoint struct {
	Study     string `json:"study"`
	Branch    string `json:"branch"`
	Series    Series `json:"series"`
	Unit      string `json:"unit"`
	Direction string `json:"direction"`
	// Run and Commit are the first run after the change; PrevRun and
	// PrevCommit the last before it: the commits between them hold the
	// cause.
	Run        string    `json:"run"`
	Commit     string    `json:"commit"`
	At         time.Time `json:"at"`
	PrevRun    string    `json:"prev_run"`
	PrevCommit string    `json:"prev_commit"`
	changepoint.Change
	Kind ChangeKind `json:"kind"`
	// Ack is the triage, if any, and its note.
	Ack  AckStatus `json:"ack,omitempty"`
	Note string    `json:"note,omitempty"`
}

// Text says the change point in one line: the series, the shift and its
// interval, the runs (and commits) either side, p and the triage.
func (c ChangePoint) Text() string {
	short := func(id string) string { return id[:min(12, len(id))] }
	where := "run " + short(c.Run)
	if c.Commit != "" {
		where += " (commit " + short(c.Commit) + ")"
	}
	before := "run " + short(c.PrevRun)
	if c.PrevCommit != "" {
		before += " (commit " + short(c.PrevCommit) + ")"
	}
	s := fmt.Sprintf("%s: ×%.3g [%.3g … %.3g], a %s, from %s; before: %s; p %.2g, %d runs before, %d after",
		c.Series, c.Ratio, c.Lo, c.Hi, c.Kind, where, before, c.P, c.RunsLeft, c.RunsRight)
	if c.Ack != "" {
		s += "; acknowledged: " + string(c.Ack)
		if c.Note != "" {
			s += " (" + c.Note + ")"
		}
	}
	return s
}

// Open reports whether the change point is a regression nobody has
// called expected or an improvement.
func (c ChangePoint) Open() bool {
	return c.Kind == Regression && c.Ack != AckExpected && c.Ack != AckImprovement
}

// ChangesOptions pick the series to look at.
type ChangesOptions struct {
	// Study and Branch (empty: every study, every branch).
	Study, Branch string
	// Series is a series key (empty: every series of the newest run).
	Series string
	// Since keeps the change points of runs made at or after it.
	Since time.Time
	// Open keeps only the regressions nobody acknowledged.
	Open bool
	// Detect are the detector's settings.
	Detect changepoint.Options
}

// seriesRun is one run's value of a series.
type seriesRun struct {
	id, commit, configFP, direction, unit string
	at                                    time.Time
	values                                []float64
}

// seriesRuns reads a series over a branch's complete, unarchived runs,
// oldest first, each with its rounds (or its one value).
func (s *Store) seriesRuns(ctx context.Context, study, branch, key string) ([]seriesRun, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.id, r.created_at, r.commit_sha, p.value, p.config_fp, p.direction, p.unit
		FROM points p JOIN runs r ON r.id = p.run_id
		WHERE p.series = $1 AND r.study = $2 AND r.branch = $3 AND r.archived = 0 AND r.interrupted = 0
		ORDER BY r.created_at, r.id`, key, study, branch)
	if err != nil {
		return nil, err
	}
	var out []seriesRun
	at := map[string]int{}
	for rows.Next() {
		var r seriesRun
		var ns int64
		var v float64
		if err := rows.Scan(&r.id, &ns, &r.commit, &v, &r.configFP, &r.direction, &r.unit); err != nil {
			rows.Close()
			return nil, err
		}
		r.at, r.values = time.Unix(0, ns).UTC(), []float64{v}
		at[r.id] = len(out)
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	srows, err := s.db.QueryContext(ctx, `SELECT x.run_id, x.value FROM samples x JOIN runs r ON r.id = x.run_id
		WHERE x.series = $1 AND r.study = $2 AND r.branch = $3 ORDER BY x.run_id, x.round`, key, study, branch)
	if err != nil {
		return nil, err
	}
	defer srows.Close()
	rounds := map[string][]float64{}
	for srows.Next() {
		var id string
		var v float64
		if err := srows.Scan(&id, &v); err != nil {
			return nil, err
		}
		rounds[id] = append(rounds[id], v)
	}
	for id, vs := range rounds {
		if i, ok := at[id]; ok {
			out[i].values = vs
		}
	}
	return out, srows.Err()
}

// detect finds the change points of one series' runs: within each
// stretch of runs that measured the same thing (a changed configuration
// is not a change point), over series whose every value is positive (an
// error share of zero has no level to shift).
func detect(study, branch string, series Series, runs []seriesRun, o changepoint.Options) ([]ChangePoint, error) {
	var out []ChangePoint
	for start := 0; start < len(runs); {
		end := start + 1
		for end < len(runs) && runs[end].configFP == runs[start].configFP {
			end++
		}
		block := runs[start:end]
		in := make([]changepoint.Run, len(block))
		positive := true
		for i, r := range block {
			in[i] = changepoint.Run{Values: r.values}
			positive = positive && !slices.ContainsFunc(r.values, func(v float64) bool { return !(v > 0) })
		}
		if positive {
			cs, err := changepoint.Detect(in, o)
			if err != nil {
				return nil, err
			}
			for _, c := range cs {
				r, prev := block[c.Index], block[c.Index-1]
				kind := Improvement
				if (r.direction == "higher") == (c.Ratio < 1) {
					kind = Regression
				}
				out = append(out, ChangePoint{Study: study, Branch: branch, Series: series, Unit: r.unit, Direction: r.direction,
					Run: r.id, Commit: r.commit, At: r.at, PrevRun: prev.id, PrevCommit: prev.commit, Change: c, Kind: kind})
			}
		}
		start = end
	}
	return out, nil
}

// Changes finds the change points of every series the options pick, with
// their triage, oldest first within a series.
func (s *Store) Changes(ctx context.Context, o ChangesOptions) ([]ChangePoint, error) {
	studies, err := s.Studies(ctx)
	if err != nil {
		return nil, err
	}
	var out []ChangePoint
	for _, st := range studies {
		if o.Study != "" && st.Name != o.Study {
			continue
		}
		for _, branch := range st.Branches {
			if o.Branch != "" && branch != o.Branch {
				continue
			}
			points, err := s.SeriesOf(ctx, st.Name, branch)
			if err != nil {
				return nil, err
			}
			for _, p := range points {
				key := p.Series.Key()
				if o.Series != "" && key != o.Series {
					continue
				}
				runs, err := s.seriesRuns(ctx, st.Name, branch, key)
				if err != nil {
					return nil, err
				}
				cps, err := detect(st.Name, branch, p.Series, runs, o.Detect)
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", st.Name, p.Series, err)
				}
				for _, cp := range cps {
					if !cp.At.Before(o.Since) {
						out = append(out, cp)
					}
				}
			}
		}
	}
	if err := s.withAcks(ctx, out); err != nil {
		return out, err
	}
	if o.Open {
		out = slices.DeleteFunc(out, func(c ChangePoint) bool { return !c.Open() })
	}
	return out, nil
}

// withAcks fills in each change point's triage.
func (s *Store) withAcks(ctx context.Context, cps []ChangePoint) error {
	for i := range cps {
		c := &cps[i]
		err := s.db.QueryRowContext(ctx, `SELECT status, note FROM change_acks WHERE study = $1 AND branch = $2 AND series = $3 AND run_id = $4`,
			c.Study, c.Branch, c.Series.Key(), c.Run).Scan(&c.Ack, &c.Note)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	return nil
}

// Ack records the triage of the change point of a study's branch's series
// that starts at run (a stored run, by its id or a unique prefix).
func (s *Store) Ack(ctx context.Context, study, branch string, series Series, run string, status AckStatus, note string) (ChangePoint, error) {
	cps, err := s.Changes(ctx, ChangesOptions{Study: study, Branch: branch, Series: series.Key()})
	if err != nil {
		return ChangePoint{}, err
	}
	i := slices.IndexFunc(cps, func(c ChangePoint) bool { return strings.HasPrefix(c.Run, run) })
	if i < 0 || run == "" {
		return ChangePoint{}, fmt.Errorf("no change point of %s on %s of %q starts at run %q (tandem history changes lists them)", series, branch, study, run)
	}
	c := cps[i]
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM change_acks WHERE study = $1 AND branch = $2 AND series = $3 AND run_id = $4`, study, branch, series.Key(), c.Run); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO change_acks (study, branch, series, run_id, status, note, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			study, branch, series.Key(), c.Run, string(status), note, time.Now().UnixNano())
		return err
	})
	if err != nil {
		return ChangePoint{}, err
	}
	c.Ack, c.Note = status, note
	return c, nil
}

// headChanges finds the change points a run not yet stored (head, of id
// and commit) starts on a branch: each of its series held after that
// branch's runs that measured the same thing, the newest allowed to start
// a change alone.
func (s *Store) headChanges(ctx context.Context, study, branch, id, commit string, at time.Time, x index, o changepoint.Options) ([]ChangePoint, error) {
	o.MinRuns = 1
	var out []ChangePoint
	for _, p := range x.points {
		key := p.Series.Key()
		runs, err := s.seriesRuns(ctx, study, branch, key)
		if err != nil {
			return nil, err
		}
		runs = slices.DeleteFunc(runs, func(r seriesRun) bool { return r.id == id })
		// the stretch of runs that measured what the head did
		start := len(runs)
		for start > 0 && runs[start-1].configFP == p.ConfigFP {
			start--
		}
		values := p.Rounds
		if len(values) == 0 {
			values = []float64{p.Value}
		}
		runs = append(runs[start:], seriesRun{id: id, commit: commit, configFP: p.ConfigFP, direction: p.Direction, unit: p.Unit, at: at, values: values})
		cps, err := detect(study, branch, p.Series, runs, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Series, err)
		}
		for _, c := range cps {
			if c.Run == id {
				out = append(out, c)
			}
		}
	}
	return out, s.withAcks(ctx, out)
}
