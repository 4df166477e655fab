// Package history keeps every run: the gzipped results.json is the source
// of truth, and tables index it (one scalar per run and series, the rounds
// behind it, verdicts, compat differences by fingerprint) so runs trend
// over commits and a CI gate can hold a run against its branch's history.
// It stores in SQLite through a pure-Go driver by default and in
// PostgreSQL when given a postgres:// URL, with one SQL text for both and
// embedded, forward-only migrations.
package history

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver, no cgo
)

//go:embed migrations/*.sql
var migrations embed.FS

// DefaultPath is where the history lives when no database is named.
const DefaultPath = ".tandem/history.db"

// Store is a run history.
type Store struct {
	db *sql.DB
	// Where names the database for messages: a file, or a URL without
	// its password.
	Where    string
	postgres bool
}

// OpenEnv opens the history db names, or with db "" the one $TANDEM_DB
// names, else DefaultPath.
func OpenEnv(ctx context.Context, db string) (*Store, error) {
	return Open(ctx, cmp.Or(db, os.Getenv("TANDEM_DB")))
}

// Open opens (and creates or migrates) the history at dsn: a postgres://
// or postgresql:// URL, or a SQLite file path ("" is DefaultPath; its
// directory is made with mode 0700). It refuses a database whose schema is
// newer than this tandem knows.
func Open(ctx context.Context, dsn string) (*Store, error) {
	s := &Store{}
	var err error
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		_, rest, _ := strings.Cut(dsn, "://")
		authority, _, _ := strings.Cut(rest, "/")
		if strings.Count(authority, "@") > 1 { // drivers split it differently: refuse, quoting none of it
			return nil, errors.New("history: the postgres URL's user or password holds an @: percent-encode it as %40")
		}
		s.postgres, s.Where = true, redactURL(dsn)
		s.db, err = sql.Open("pgx", dsn)
	} else {
		if dsn == "" {
			dsn = DefaultPath
		}
		s.Where = dsn
		if err := os.MkdirAll(filepath.Dir(dsn), 0o700); err != nil {
			return nil, fmt.Errorf("history %s: %w", dsn, err)
		}
		// one writer at a time, waiting for a busy database rather than failing
		// the path escaped for a file: URI (a # or ? in it is part of the
		// name); transactions take the write lock when they begin, so
		// two tandems migrating a new history take turns
		s.db, err = sql.Open("sqlite", "file:"+(&url.URL{Path: dsn}).EscapedPath()+
			"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_txlock=immediate")
		if err == nil {
			s.db.SetMaxOpenConns(1)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", s.Where, err)
	}
	err = s.migrate(ctx)
	// a new SQLite file that another tandem is creating this moment: its
	// switch to WAL is not covered by the busy timeout, so wait and retry
	for try := 0; err != nil && !s.postgres && busy(err) && try < 100 && ctx.Err() == nil; try++ {
		time.Sleep(time.Duration(20+try*5) * time.Millisecond)
		err = s.migrate(ctx)
	}
	if err != nil {
		s.db.Close()
		if s.postgres { // a driver's message may quote the URL
			return nil, fmt.Errorf("history %s: %s", s.Where, hidePassword(err.Error(), dsn))
		}
		return nil, fmt.Errorf("history %s: %w", s.Where, err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// redactURL hides a URL's password, in its user part or its query.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		scheme, _, _ := strings.Cut(u, "://")
		return scheme + "://(a URL that does not parse)"
	}
	if p.User != nil {
		if _, has := p.User.Password(); has {
			p.User = url.UserPassword(p.User.Username(), "xxx")
		}
	}
	q := p.Query()
	if q.Has("password") {
		q.Set("password", "xxx")
		p.RawQuery = q.Encode()
	}
	return p.String()
}

// busy reports whether err is SQLite's "database is locked".
func busy(err error) bool {
	return strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "database is locked")
}

// hidePassword removes dsn's password from a message.
func hidePassword(msg, dsn string) string {
	p, err := url.Parse(dsn)
	if err != nil {
		return "(the message quoted a URL that does not parse)"
	}
	if p.User != nil {
		if pw, has := p.User.Password(); has && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxx")
		}
	}
	if pw := p.Query().Get("password"); pw != "" {
		msg = strings.ReplaceAll(msg, pw, "xxx")
	}
	return msg
}

// migration is one embedded migration: its number and SQL.
type migration struct {
	version int
	sql     string
}

func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, n := range names {
		num, _, _ := strings.Cut(filepath.Base(n), "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: no number", n)
		}
		b, err := migrations.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{v, string(b)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	return out, nil
}

// Known is the newest schema version this tandem knows.
func Known() int {
	ms, err := loadMigrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// migrate applies the migrations the database lacks, in one transaction
// that holds the database's write lock (SQLite) or an advisory lock
// (PostgreSQL) from the version's read to the last migration, so two
// tandems opening a new history take turns; it refuses a database newer
// than this tandem.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if s.postgres {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7420)`); err != nil {
				return fmt.Errorf("lock the schema: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS tandem_schema (version BIGINT NOT NULL)`); err != nil {
			return fmt.Errorf("open: %w", err)
		}
		var have int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM tandem_schema`).Scan(&have); err != nil {
			return fmt.Errorf("read the schema version: %w", err)
		}
		if known := ms[len(ms)-1].version; have > known {
			return fmt.Errorf("its schema is version %d, newer than this tandem knows (%d): use a newer tandem", have, known)
		}
		for _, m := range ms {
			if m.version <= have {
				continue
			}
			for _, stmt := range statements(m.sql) {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("migration %d: %w", m.version, err)
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO tandem_schema (version) VALUES ($1)`, m.version); err != nil {
				return err
			}
		}
		return nil
	})
}

// statements splits a migration into its statements, without comments.
func statements(text string) []string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line + "\n")
	}
	var out []string
	for _, st := range strings.Split(b.String(), ";") {
		if st = strings.TrimSpace(st); st != "" {
			out = append(out, st)
		}
	}
	return out
}

// tx runs f in a transaction, committed when f returns nil.
func (s *Store) tx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}
