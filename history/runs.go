package history

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/results"
)

// Meta is what a run is filed under: where its code came from and where it
// ran. Detect fills what CI or git can tell.
type Meta struct {
	Branch, Commit string
	Dirty          bool
	CIURL, Testbed string
	Tags           map[string]string
}

// Run is one stored run.
type Run struct {
	ID                   string
	CreatedAt, AddedAt   time.Time
	Study                string
	Meta                 Meta
	EnvFP, TandemVersion string
	Interrupted, Pinned  bool
	// Archived runs are kept but left out of lists, trends and baselines.
	Archived bool
}

// Short is the run's id as people type it: its first 12 hex digits.
func (r Run) Short() string { return r.ID[:min(12, len(r.ID))] }

// Errors a caller can act on: a run that is not stored, an id that names
// none or several, results that are not a tandem results file.
var (
	ErrNotFound = errors.New("no such run")
	ErrBadID    = errors.New("not a run id")
	ErrInvalid  = errors.New("not tandem results")
)

// maxResults bounds a results.json the history takes (64 MiB).
const maxResults = 64 << 20

// Add stores a run from its results.json, filed under m, and indexes it.
// Adding the same content again stores nothing and returns the stored run
// with added false: safe to retry.
func (s *Store) Add(ctx context.Context, data []byte, m Meta) (Run, bool, error) {
	if len(data) > maxResults {
		return Run{}, false, fmt.Errorf("%w: %d bytes, more than the %d MiB the history takes", ErrInvalid, len(data), maxResults>>20)
	}
	r, err := results.Parse(data)
	if err != nil {
		return Run{}, false, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	id := contentID(data)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		return Run{}, false, err
	}
	run := Run{ID: id, CreatedAt: r.CreatedAt, AddedAt: time.Now().UTC(), Study: r.Study.Name, Meta: m,
		EnvFP: EnvFingerprint(r.Machine), TandemVersion: r.Tool.Version, Interrupted: r.Interrupted}
	added := false
	err = s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO runs (id, created_at, added_at, study, branch, commit_sha, dirty, ci_url, testbed, env_fp,
			tandem_version, interrupted, results) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (id) DO NOTHING`,
			id, run.CreatedAt.UnixNano(), run.AddedAt.UnixNano(), run.Study, m.Branch, m.Commit, b2i(m.Dirty), m.CIURL, m.Testbed,
			run.EnvFP, run.TandemVersion, b2i(run.Interrupted), gz.Bytes())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err // stored before
		}
		added = true
		for _, k := range slices.Sorted(maps.Keys(m.Tags)) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO tags (run_id, k, v) VALUES ($1, $2, $3)`, id, k, m.Tags[k]); err != nil {
				return err
			}
		}
		return writeIndex(ctx, tx, id, indexOf(r))
	})
	if err != nil {
		return Run{}, false, fmt.Errorf("add run %.12s: %w", id, err)
	}
	if !added {
		stored, err := s.Run(ctx, id)
		return stored, false, err
	}
	return run, true, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// writeIndex writes a run's index rows.
func writeIndex(ctx context.Context, tx *sql.Tx, id string, x index) error {
	for _, p := range x.points {
		key := p.Series.Key()
		if _, err := tx.ExecContext(ctx, `INSERT INTO points (run_id, series, config_fp, direction, unit, value) VALUES ($1, $2, $3, $4, $5, $6)`,
			id, key, p.ConfigFP, p.Direction, p.Unit, p.Value); err != nil {
			return err
		}
		for i, v := range p.Rounds {
			if _, err := tx.ExecContext(ctx, `INSERT INTO samples (run_id, series, round, value) VALUES ($1, $2, $3, $4)`, id, key, i+1, v); err != nil {
				return err
			}
		}
	}
	for _, v := range x.verdicts {
		if _, err := tx.ExecContext(ctx, `INSERT INTO verdicts (run_id, scenario, target, level, verdict, reason) VALUES ($1, $2, $3, $4, $5, $6)`,
			id, v.Scenario, v.Target, v.Level, v.Verdict, v.Reason); err != nil {
			return err
		}
	}
	for _, d := range x.diffs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO differences (run_id, fingerprint, call, target, path, kind, cases) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			id, d.Fingerprint, d.Call, d.Target, d.Path, d.Kind, d.Cases); err != nil {
			return err
		}
	}
	return nil
}

const runColumns = `id, created_at, added_at, study, branch, commit_sha, dirty, ci_url, testbed, env_fp, tandem_version, interrupted, pinned, archived`

func scanRun(sc interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var created, added, dirty, interrupted, pinned, archived int64
	err := sc.Scan(&r.ID, &created, &added, &r.Study, &r.Meta.Branch, &r.Meta.Commit, &dirty, &r.Meta.CIURL, &r.Meta.Testbed,
		&r.EnvFP, &r.TandemVersion, &interrupted, &pinned, &archived)
	r.CreatedAt, r.AddedAt = time.Unix(0, created).UTC(), time.Unix(0, added).UTC()
	r.Meta.Dirty, r.Interrupted, r.Pinned, r.Archived = dirty != 0, interrupted != 0, pinned != 0, archived != 0
	return r, err
}

// Run finds a run by its id or a unique prefix of it (at least 4 hex
// digits).
func (s *Store) Run(ctx context.Context, id string) (Run, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if len(id) < 4 || strings.Trim(id, "0123456789abcdef") != "" {
		return Run{}, fmt.Errorf("run %q: %w: want at least 4 hex digits of its id", id, ErrBadID)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id >= $1 AND id < $2 ORDER BY id LIMIT 2`, id, id+"g")
	if err != nil {
		return Run{}, err
	}
	defer rows.Close()
	var found []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return Run{}, err
		}
		found = append(found, r)
	}
	if err := rows.Err(); err != nil {
		return Run{}, err
	}
	switch len(found) {
	case 0:
		return Run{}, fmt.Errorf("run %s: %w", id, ErrNotFound)
	case 1:
		found[0].Meta.Tags, err = s.tags(ctx, found[0].ID)
		return found[0], err
	}
	return Run{}, fmt.Errorf("run %s: %w: more than one run starts so; give more of the id", id, ErrBadID)
}

func (s *Store) tags(ctx context.Context, id string) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT k, v FROM tags WHERE run_id = $1`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

// Filter selects runs: of a study and a branch when set (any branch when
// Branch is empty, unless ExactBranch: then the runs filed under none),
// only pinned ones, only complete ones (not interrupted), archived ones
// too when WithArchived, newest first, at most Limit (default 50), older
// than Before (a keyset: the last run of the previous page) when set.
type Filter struct {
	Study, Branch    string
	ExactBranch      bool
	Pinned, Complete bool
	WithArchived     bool
	Limit            int
	Before           *Run
}

// Runs lists runs, newest first.
func (s *Store) Runs(ctx context.Context, f Filter) ([]Run, error) {
	q := `SELECT ` + runColumns + ` FROM runs WHERE 1 = 1`
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if f.Study != "" {
		q += ` AND study = ` + arg(f.Study)
	}
	if f.Branch != "" || f.ExactBranch {
		q += ` AND branch = ` + arg(f.Branch)
	}
	if f.Pinned {
		q += ` AND pinned = 1`
	}
	if f.Complete {
		q += ` AND interrupted = 0`
	}
	if !f.WithArchived {
		q += ` AND archived = 0`
	}
	if b := f.Before; b != nil {
		at := b.CreatedAt.UnixNano()
		q += ` AND (created_at < ` + arg(at) + ` OR (created_at = ` + arg(at) + ` AND id < ` + arg(b.ID) + `))`
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ` + arg(limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Results reads a stored run's results.json back.
func (s *Store) Results(ctx context.Context, id string) (*results.Results, error) {
	data, err := s.raw(ctx, id)
	if err != nil {
		return nil, err
	}
	return results.Parse(data)
}

func (s *Store) raw(ctx context.Context, id string) ([]byte, error) {
	var gz []byte
	if err := s.db.QueryRowContext(ctx, `SELECT results FROM runs WHERE id = $1`, id).Scan(&gz); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("run %.12s: %w", id, ErrNotFound)
		}
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("run %.12s: %w", id, err)
	}
	return io.ReadAll(io.LimitReader(zr, maxResults))
}

// Pin marks a run as a baseline (or not): pinned runs are kept by prune
// and chosen by a gate's --baseline pinned.
func (s *Store) Pin(ctx context.Context, id string, pinned bool) error {
	return s.mark(ctx, `UPDATE runs SET pinned = $1 WHERE id = $2`, id, pinned)
}

// Archive archives a run (or brings it back): it stays stored and can be
// shown, but lists, trends and gates leave it out.
func (s *Store) Archive(ctx context.Context, id string, archived bool) error {
	return s.mark(ctx, `UPDATE runs SET archived = $1 WHERE id = $2`, id, archived)
}

// mark sets (or clears) one of a run's marks with update, an UPDATE of
// runs taking the mark as $1 and the run's id as $2.
func (s *Store) mark(ctx context.Context, update, id string, on bool) error {
	res, err := s.db.ExecContext(ctx, update, b2i(on), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("run %.12s: %w", id, ErrNotFound)
	}
	return nil
}

// Prune deletes the runs made before cutoff, except pinned runs and those
// of keepBranch (when set), and says how many it deleted.
func (s *Store) Prune(ctx context.Context, cutoff time.Time, keepBranch string) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM runs WHERE created_at < $1 AND pinned = 0 AND ($2 = '' OR branch <> $2)`, cutoff.UnixNano(), keepBranch)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Reindex rebuilds every index table from the stored results and says how
// many runs it read.
func (s *Store) Reindex(ctx context.Context) (int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM runs ORDER BY id`)
	if err != nil {
		return 0, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		r, err := s.Results(ctx, id)
		if err != nil {
			return 0, err
		}
		err = s.tx(ctx, func(tx *sql.Tx) error {
			for _, t := range []string{"points", "samples", "verdicts", "differences"} {
				if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE run_id = $1`, id); err != nil {
					return err
				}
			}
			return writeIndex(ctx, tx, id, indexOf(r))
		})
		if err != nil {
			return 0, fmt.Errorf("reindex run %.12s: %w", id, err)
		}
	}
	return len(ids), nil
}

// Points reads a run's points with the rounds behind them.
func (s *Store) Points(ctx context.Context, id string) ([]Point, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT series, config_fp, direction, unit, value FROM points WHERE run_id = $1 ORDER BY series`, id)
	if err != nil {
		return nil, err
	}
	var out []Point
	for rows.Next() {
		var p Point
		var key string
		if err := rows.Scan(&key, &p.ConfigFP, &p.Direction, &p.Unit, &p.Value); err != nil {
			rows.Close()
			return nil, err
		}
		if p.Series, err = ParseSeries(key); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	srows, err := s.db.QueryContext(ctx, `SELECT series, value FROM samples WHERE run_id = $1 ORDER BY series, round`, id)
	if err != nil {
		return nil, err
	}
	defer srows.Close()
	rounds := map[string][]float64{}
	for srows.Next() {
		var key string
		var v float64
		if err := srows.Scan(&key, &v); err != nil {
			return nil, err
		}
		rounds[key] = append(rounds[key], v)
	}
	for i := range out {
		out[i].Rounds = rounds[out[i].Series.Key()]
	}
	return out, srows.Err()
}

// Verdicts reads a run's verdicts.
func (s *Store) Verdicts(ctx context.Context, id string) ([]Verdict, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT scenario, target, level, verdict, reason FROM verdicts WHERE run_id = $1 ORDER BY scenario, target, level`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Verdict
	for rows.Next() {
		var v Verdict
		if err := rows.Scan(&v.Scenario, &v.Target, &v.Level, &v.Verdict, &v.Reason); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Differences reads a run's compat differences.
func (s *Store) Differences(ctx context.Context, id string) ([]Difference, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT fingerprint, call, target, path, kind, cases FROM differences WHERE run_id = $1 ORDER BY fingerprint`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Difference
	for rows.Next() {
		var d Difference
		if err := rows.Scan(&d.Fingerprint, &d.Call, &d.Target, &d.Path, &d.Kind, &d.Cases); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
