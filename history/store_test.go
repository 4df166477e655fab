package history

import (
	"context"
	"errors"
	"github.com/tandem-bench/tandem/results"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// stores opens a fresh history on every database the machine offers:
// SQLite always, PostgreSQL when TANDEM_TEST_POSTGRES names one (the test
// command starts a real server).
func stores(t *testing.T) map[string]func(t *testing.T) *Store {
	out := map[string]func(t *testing.T) *Store{
		"sqlite": func(t *testing.T) *Store {
			s, err := Open(context.Background(), filepath.Join(t.TempDir(), "h", "history.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
	if url := os.Getenv("TANDEM_TEST_POSTGRES"); url != "" {
		out["postgres"] = func(t *testing.T) *Store { return freshPostgres(t, url) }
	} else if os.Getenv("TANDEM_REQUIRE_POSTGRES") == "1" {
		t.Fatal("TANDEM_REQUIRE_POSTGRES=1 but TANDEM_TEST_POSTGRES names no server (the test command starts one)")
	}
	return out
}

func demo(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../report/testdata/demo-results.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAddIsIdempotentAndIndexed(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			meta := Meta{Branch: "main", Commit: "abc123", Testbed: "ci-2core", Tags: map[string]string{"k": "v"}}
			run, added, err := s.Add(ctx, demo(t), meta)
			if err != nil || !added {
				t.Fatalf("add: %v, added %v", err, added)
			}
			again, added, err := s.Add(ctx, demo(t), Meta{Branch: "other"})
			if err != nil || added || again.ID != run.ID || again.Meta.Branch != "main" {
				t.Errorf("add again: %v, added %v, %+v; want the stored run, nothing added", err, added, again.Meta)
			}
			got, err := s.Run(ctx, run.Short())
			if err != nil || got.ID != run.ID || got.Study != "sample ledger, build a vs build b" || got.Meta.Tags["k"] != "v" || got.Meta.Commit != "abc123" {
				t.Errorf("run by its short id: %+v, %v", got, err)
			}
			if _, err := s.Run(ctx, "ffff"); !errors.Is(err, ErrNotFound) {
				t.Errorf("an unknown id: %v; want not found", err)
			}
			if _, err := s.Run(ctx, "xyz"); err == nil || !strings.Contains(err.Error(), "hex digits") {
				t.Errorf("a malformed id: %v", err)
			}
			points, err := s.Points(ctx, run.ID)
			if err != nil || len(points) < 16 {
				t.Fatalf("points: %d, %v; want a headline and an error share per scenario, target and level", len(points), err)
			}
			var headline *Point
			for i, p := range points {
				if p.Series == (Series{"getblock-latency", "b", 1, "headline"}) {
					headline = &points[i]
				}
			}
			// what the fixture holds, to hold the index against
			fixture, err := results.Parse(demo(t))
			if err != nil {
				t.Fatal(err)
			}
			rounds, comparisons := 0, 0
			for _, sc := range fixture.Scenarios {
				comparisons += len(sc.Comparisons)
				for _, rd := range sc.Rounds {
					if sc.Name == "getblock-latency" && rd.Target == "b" {
						rounds++
					}
				}
			}
			if headline == nil || len(headline.Rounds) != rounds || headline.Direction != "lower" || headline.Unit != "ns" || headline.Value <= 0 {
				t.Errorf("getblock-latency b headline: %+v; want its %d rounds, lower is better, in ns", headline, rounds)
			}
			// each target's start from empty is a series too, its starts
			// the rounds
			starts := 0
			for _, tg := range fixture.Targets {
				if tg.Startup == nil {
					continue
				}
				starts++
				var ready *Point
				for i, p := range points {
					if p.Series == (Series{"startup", tg.Name, 0, "startup_ready"}) {
						ready = &points[i]
					}
				}
				if ready == nil || ready.Value != float64(tg.Startup.ReadyNs) || len(ready.Rounds) != max(len(tg.StartupRuns), 1) || ready.Unit != "ns" {
					t.Errorf("target %s: startup_ready %+v; want %d ns over its %d starts", tg.Name, ready, tg.Startup.ReadyNs, len(tg.StartupRuns))
				}
			}
			if starts == 0 {
				t.Error("the fixture has no start from empty to index")
			}
			vs, _ := s.Verdicts(ctx, run.ID)
			ds, _ := s.Differences(ctx, run.ID)
			if len(vs) != comparisons || len(ds) == 0 {
				t.Errorf("%d verdicts, %d differences; want %d and some", len(vs), len(ds), comparisons)
			}
			// the index is rebuilt from the stored results, the same
			if n, err := s.Reindex(ctx); err != nil || n != 1 {
				t.Fatalf("reindex: %d, %v", n, err)
			}
			again2, _ := s.Points(ctx, run.ID)
			if !reflect.DeepEqual(points, again2) {
				t.Error("reindexing changed the points")
			}
			res, err := s.Results(ctx, run.ID)
			if err != nil || len(res.Scenarios) != len(fixture.Scenarios) {
				t.Errorf("results back: %v", err)
			}
		})
	}
}

// Concurrent adds of one run store it once.
func TestConcurrentAddsStoreOnce(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			data := demo(t)
			var wg sync.WaitGroup
			var mu sync.Mutex
			added := 0
			var errs []error
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, a, err := s.Add(context.Background(), data, Meta{Branch: "main"})
					mu.Lock()
					defer mu.Unlock()
					if a {
						added++
					}
					if err != nil {
						errs = append(errs, err)
					}
				}()
			}
			wg.Wait()
			runs, _ := s.Runs(context.Background(), Filter{})
			if added != 1 || len(errs) > 0 || len(runs) != 1 {
				t.Errorf("8 concurrent adds: %d added, errors %v, %d runs stored; want 1, none, 1", added, errs, len(runs))
			}
		})
	}
}

// Runs page newest first by a keyset; prune keeps pinned runs and the kept
// branch.
func TestRunsPagesAndPrune(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			base := demo(t)
			var ids []string
			for i := range 7 {
				data := withCreated(t, base, time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC))
				branch := "feature"
				if i%2 == 0 {
					branch = "main"
				}
				r, _, err := s.Add(ctx, data, Meta{Branch: branch})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, r.ID)
			}
			var seen []string
			var before *Run
			for {
				page, err := s.Runs(ctx, Filter{Limit: 3, Before: before})
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 {
					break
				}
				for _, r := range page {
					seen = append(seen, r.ID)
				}
				before = &page[len(page)-1]
			}
			want := []string{ids[6], ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}
			if !reflect.DeepEqual(seen, want) {
				t.Errorf("paged newest first: %v; want %v", short(seen), short(want))
			}
			mains, _ := s.Runs(ctx, Filter{Branch: "main"})
			if len(mains) != 4 {
				t.Errorf("%d runs on main; want 4", len(mains))
			}
			if err := s.Pin(ctx, ids[1], true); err != nil {
				t.Fatal(err)
			}
			// before Jan 6: runs 0–4; main's (0, 2, 4) and the pinned 1 stay
			n, err := s.Prune(ctx, time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC), "main")
			if err != nil || n != 1 {
				t.Errorf("prune: %d, %v; want 1 (run 3)", n, err)
			}
			if _, err := s.Run(ctx, ids[3]); !errors.Is(err, ErrNotFound) {
				t.Errorf("run 3 after prune: %v", err)
			}
			if pts, _ := s.Points(ctx, ids[3]); len(pts) != 0 {
				t.Errorf("run 3's points outlive it: %d", len(pts))
			}
			pinned, _ := s.Runs(ctx, Filter{Pinned: true})
			if len(pinned) != 1 || pinned[0].ID != ids[1] {
				t.Errorf("pinned runs: %v", pinned)
			}
		})
	}
}

func short(ids []string) []string {
	var out []string
	for _, id := range ids {
		out = append(out, id[:6])
	}
	return out
}

// withCreated is a run's results.json with another creation time (another
// run, by content).
func withCreated(t *testing.T, data []byte, at time.Time) []byte {
	t.Helper()
	old := `"created_at": "`
	i := strings.Index(string(data), old)
	if i < 0 {
		t.Fatal("no created_at in the fixture")
	}
	j := strings.Index(string(data[i+len(old):]), `"`)
	return []byte(string(data[:i+len(old)]) + at.Format(time.RFC3339Nano) + string(data[i+len(old)+j:]))
}

// A history written by a newer tandem is refused, not misread.
func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`INSERT INTO tandem_schema (version) VALUES ($1)`, Known()+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "newer than this tandem knows") {
		t.Errorf("open a newer history: %v", err)
	}
}

// The default history's directory is private: runs may hold hostnames,
// commands and answers.
func TestHistoryDirIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".tandem")
	s, err := Open(context.Background(), filepath.Join(dir, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("history directory: %v, mode %v; want 0700", err, fi.Mode().Perm())
	}
}

// A series key reads back as the series it names, whatever the names hold;
// any other text is refused, never misread.
func FuzzSeriesKey(f *testing.F) {
	f.Add("getblock-latency", "a", 1, "headline", `["x","y",1,"z"]`)
	f.Add(`"],[`, "\u202e", -3, "", `[1,2,3,4]`)
	f.Fuzz(func(t *testing.T, scenario, target string, level int, metric, raw string) {
		s := Series{scenario, target, level, metric}
		got, err := ParseSeries(s.Key())
		if strings.ToValidUTF8(scenario, "\uFFFD") == scenario && strings.ToValidUTF8(target, "\uFFFD") == target &&
			strings.ToValidUTF8(metric, "\uFFFD") == metric && level > -1<<52 && level < 1<<52 {
			if err != nil || got != s {
				t.Errorf("%+v → %q → %+v, %v", s, s.Key(), got, err)
			}
		}
		if p, err := ParseSeries(raw); err == nil && p.Key() != raw {
			// a key in another spelling (spaces, escapes) is the same series
			if again, err := ParseSeries(p.Key()); err != nil || again != p {
				t.Errorf("%q read as %+v, which does not read back", raw, p)
			}
		}
	})
}

func TestRedactHidesPassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:p@ss-hunter2@127.0.0.1:1/db",
		"postgres://u@127.0.0.1:1/db?password=hunter2",
	} {
		if w := redactURL(dsn); strings.Contains(w, "hunter2") {
			t.Errorf("redactURL(%q) = %q: shows the password", dsn, w)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := Open(ctx, dsn)
		cancel()
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q): %v; want an error without the password", dsn, err)
		}
	}
}

func TestPruneWithoutKeepBranchDeletesBranchlessRuns(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Add(ctx, runOf(t, 1, steady, nil), Meta{}); err != nil { // filed under no branch
		t.Fatal(err)
	}
	if _, _, err := s.Add(ctx, runOf(t, 2, steady, nil), Meta{Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	n, err := s.Prune(ctx, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), "")
	if err != nil || n != 2 {
		t.Fatalf("prune with no --keep-branch deleted %d runs (%v); want both, the branchless one too", n, err)
	}
}

func TestSQLitePathWithURISpecialChars(t *testing.T) {
	for _, dir := range []string{"ci#2", "a?b"} {
		p := filepath.Join(t.TempDir(), dir, "history.db")
		s, err := Open(context.Background(), p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		s.Close()
		if _, err := os.Stat(p); err != nil {
			t.Errorf("the history is not at %s: %v", p, err)
		}
	}
}

func TestConcurrentFirstOpen(t *testing.T) {
	for i := 0; i < 5; i++ {
		p := filepath.Join(t.TempDir(), "history.db")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for j := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := Open(context.Background(), p)
				if err == nil {
					s.Close()
				}
				errs[j] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("two tandems opening a new history at once: %v", err)
			}
		}
	}
}

// An archived run stays stored and readable, out of lists, trends and
// baselines; it comes back when unarchived.
func TestArchive(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			old, _, _ := s.Add(ctx, runOf(t, 1, steady, nil), Meta{Branch: "main"})
			slow, _, _ := s.Add(ctx, runOf(t, 2, []float64{130, 131, 129, 130.5, 130.2}, nil), Meta{Branch: "main"})
			if err := s.Archive(ctx, slow.ID, true); err != nil {
				t.Fatal(err)
			}
			runs, _ := s.Runs(ctx, Filter{})
			all, _ := s.Runs(ctx, Filter{WithArchived: true})
			if len(runs) != 1 || runs[0].ID != old.ID || len(all) != 2 {
				t.Errorf("lists: %d runs (want the other), %d with archived (want 2)", len(runs), len(all))
			}
			if r, err := s.Run(ctx, slow.Short()); err != nil || !r.Archived {
				t.Errorf("the archived run by id: %+v, %v", r, err)
			}
			tr, _ := s.Trend(ctx, "gate", "main", Series{"lat", "a", 1, "headline"}, 0)
			if len(tr) != 1 {
				t.Errorf("trend: %d points; want the unarchived run's", len(tr))
			}
			g, _ := s.GateRun(ctx, runOf(t, 10, steady, nil), GateOptions{BaseBranch: "main", Baseline: "last", MaxRegression: 5, Alpha: 0.05})
			if len(g.BaseRuns) != 1 || g.BaseRuns[0] != old.ID {
				t.Errorf("gate baseline %v; want the newest unarchived run", g.BaseRuns)
			}
			s.Archive(ctx, slow.ID, false)
			if runs, _ := s.Runs(ctx, Filter{}); len(runs) != 2 {
				t.Errorf("after unarchiving: %d runs", len(runs))
			}
			if err := s.Archive(ctx, strings.Repeat("0", 64), true); !errors.Is(err, ErrNotFound) {
				t.Errorf("archive an unknown run: %v", err)
			}
		})
	}
}

// A history made by the first schema migrates forward on open, its runs
// kept.
func TestMigratesForward(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	run, _, err := s.Add(context.Background(), demo(t), Meta{Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	// back to version 1: the column migration 2 added and the table of 3 go
	for _, stmt := range []string{`DELETE FROM tandem_schema WHERE version > 1`, `ALTER TABLE runs DROP COLUMN archived`, `DROP TABLE change_acks`} {
		if _, err := s.db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s, err = Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open a version 1 history: %v", err)
	}
	defer s.Close()
	var v int
	s.db.QueryRow(`SELECT MAX(version) FROM tandem_schema`).Scan(&v)
	if got, err := s.Run(context.Background(), run.ID); v != Known() || err != nil || got.Archived {
		t.Errorf("after migrating: version %d (want %d), run %v", v, Known(), err)
	}
}
