package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
	"github.com/tandem-bench/tandem/values"
)

// connLog is a loopback target that records each request's target, by
// connection: every run of the load opens its own, so each is one run's
// requests in the order they came.
type connLog struct {
	mu    sync.Mutex
	conns map[string][]string
	order []string
	srv   *httptest.Server
}

func newConnLog(t *testing.T) *connLog {
	l := &connLog{conns: map[string][]string{}}
	l.srv = httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, seen := l.conns[r.RemoteAddr]; !seen {
			l.order = append(l.order, r.RemoteAddr)
		}
		l.conns[r.RemoteAddr] = append(l.conns[r.RemoteAddr], r.URL.RequestURI())
	}))
	t.Cleanup(l.srv.Close)
	return l
}

// runs are the requests of each run (connection), in the order the runs
// began; take empties the log.
func (l *connLog) take() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out [][]string
	for _, c := range l.order {
		out = append(out, l.conns[c])
	}
	l.conns, l.order = map[string][]string{}, nil
	return out
}

// A scenario's values reach both targets: every run, on either target,
// sends a prefix of one sequence (request i the same values everywhere),
// so the measured runs of a and b are identical; a random feeder of 100
// rows gives ≥ 90 of them in a run of 300, a sequential one gives its rows
// in order; a feeder read once ends every run (warm-up, rounds, closed or
// open loop) at its rows, which --plan and the progress say. results.json
// records the digest of the values of the most requests any run sent,
// which is values.Digest of that count.
func TestValuesInRun(t *testing.T) {
	tooltest.Long(t)
	dir := t.TempDir()
	var rows strings.Builder
	rows.WriteString("id\n")
	for i := range 100 {
		fmt.Fprintf(&rows, "r%d\n", i)
	}
	var short strings.Builder
	short.WriteString("id\n")
	for i := range 37 {
		fmt.Fprintf(&short, "s%d\n", i)
	}
	for name, body := range map[string]string{"rows.csv": rows.String(), "short.csv": short.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, b := newConnLog(t), newConnLog(t)
	src := `version: 1
name: values
seed: 11
defaults: {rounds: 2, warmup: 50ms}
targets:
  - {name: a, endpoints: {http: "` + a.srv.URL + `/"}}
  - {name: b, endpoints: {http: "` + b.srv.URL + `/"}}
calls:
  random:
    http: {path: "/r/${rows.id}?z=${z}"}
    values:
      rows: {csv: ` + filepath.Join(dir, "rows.csv") + `, order: random}
      z: {zipf: {n: 1000, s: 1.1}}
  sequential:
    http: {path: "/s/${rows.id}"}
    values: {rows: {csv: ` + filepath.Join(dir, "rows.csv") + `}}
  once:
    http: {path: "/o/${rows.id}"}
    values: {rows: {csv: ` + filepath.Join(dir, "short.csv") + `, order: once}}
scenarios:
  - {name: random, call: random, load: {concurrency: 1}, requests: 300}
  - {name: sequential, call: sequential, load: {concurrency: 1}, requests: 250}
  - {name: once-closed, call: once, load: {concurrency: 1}, requests: 1000}
  - {name: once-open, call: once, load: {rate: 400}, duration: 1s}
`
	s := runtest.Parse(t, src)
	plan := NewPlan(s, Options{}).String()
	if strings.Count(plan, "every run ends after 37 requests (the rows of rows, order once)") != 2 {
		t.Errorf("the plan does not say where the once feeder ends the runs:\n%s", plan)
	}
	progress := &runtest.Progress{}
	o := options(t, progress)
	for _, sc := range s.Scenarios {
		o.Only = []string{sc.Name}
		res, err := Run(context.Background(), s, o)
		if err != nil {
			t.Fatal(err)
		}
		out := res.Scenarios[0]
		runsA, runsB := a.take(), b.take()
		all := append(slices.Clone(runsA), runsB...)
		longest := slices.MaxFunc(all, func(x, y []string) int { return len(x) - len(y) })
		for _, run := range all {
			if !slices.Equal(run, longest[:len(run)]) {
				t.Fatalf("%s: a run's requests are not a prefix of the longest run's: %q…", sc.Name, run[:min(len(run), 3)])
			}
		}
		measured := func(runs [][]string) [][]string { return runs[len(runs)-2:] } // the warm-up, then 2 rounds
		// (an open loop's run ends at its time: a busy machine may cut its
		// last requests off, sent or not, so its runs are prefixes, counted
		// below)
		if sc.Name != "once-open" && !slices.EqualFunc(measured(runsA), measured(runsB), slices.Equal) {
			t.Errorf("%s: a's measured runs differ from b's", sc.Name)
		}
		// the digest: of the most requests any run sent
		set, err := values.Open(context.Background(), s.Seed, s.Calls[sc.Call].ValueSpecs)
		if err != nil {
			t.Fatal(err)
		}
		want, err := set.Digest(context.Background(), uint64(len(longest)))
		set.Close()
		if err != nil {
			t.Fatal(err)
		}
		if out.Values == nil || out.Values.Requests != want.Requests || out.Values.SHA256 != want.SHA256 {
			t.Errorf("%s: results' values %+v; want %+v", sc.Name, out.Values, want)
		}
		switch sc.Name {
		case "random":
			distinct := map[string]bool{}
			for _, r := range measured(runsA)[0] {
				distinct[strings.SplitN(r, "?", 2)[0]] = true
			}
			if len(measured(runsA)[0]) != 300 || len(distinct) < 90 {
				t.Errorf("random: %d requests, %d distinct rows of 100; want 300 and ≥ 90", len(measured(runsA)[0]), len(distinct))
			}
		case "sequential":
			for _, run := range all {
				for i, r := range run {
					if r != fmt.Sprintf("/s/r%d", i%100) {
						t.Fatalf("sequential: request %d is %s; want /s/r%d", i, r, i%100)
					}
				}
			}
		default: // once: every run ends at the rows, warm-up included
			for _, run := range all {
				if len(run) > 37 {
					t.Fatalf("%s: a run of %d requests; want at most the 37 rows", sc.Name, len(run))
				}
			}
			for _, rd := range out.Rounds {
				if rd.Requests+rd.Unfinished+rd.Dropped != 37 {
					t.Errorf("%s: round %d on %s: %d requests, %d unfinished, %d dropped; want the 37 rows", sc.Name, rd.Round, rd.Target,
						rd.Requests, rd.Unfinished, rd.Dropped)
				}
			}
			if out.Values.Requests != 37 || !strings.Contains(progress.String(), sc.Name+": values ${rows.*} (csv, once), request i of every run the same on every target; every run ends after 37 requests, the rows of rows (order once)") {
				t.Errorf("%s: values of %d requests; want 37, and the progress to say where runs end:\n%s", sc.Name, out.Values.Requests, progress)
			}
		}
	}
}
