package history

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
)

// ParseTags reads --tag values, key=value each, as a run's tags.
func ParseTags(tags []string) (map[string]string, error) {
	m := map[string]string{}
	for _, t := range tags {
		k, v, ok := strings.Cut(t, "=")
		if !ok || k == "" {
			return m, fmt.Errorf("--tag %q: want key=value", t)
		}
		m[k] = v
	}
	return m, nil
}

// ParseAge reads an age: a Go duration or a number of days ("180d").
func ParseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--older-than %q: want a number of days (180d) or a duration (36h)", s)
	}
	return d, nil
}

// ParseSince reads --since, a positive duration, as the time that long
// before now; "" is no bound, the zero time.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("--since %q: want a positive duration such as 720h", s)
	}
	return now.Add(-d), nil
}

// AddFile stores the results file at path, filed under m, and says on w
// what WriteAdded says: the run and the change points it brings.
func (s *Store) AddFile(ctx context.Context, path string, m Meta, w io.Writer) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	known, err := s.KnownChanges(ctx, data, m.Branch)
	if err != nil {
		return err
	}
	run, added, err := s.Add(ctx, data, m)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return s.WriteAdded(ctx, w, run, added, known)
}

// KnownChanges are the change points the history shows for the study of
// the results in data on branch, for WriteAdded to tell those a run
// brings; none when data is not results.
func (s *Store) KnownChanges(ctx context.Context, data []byte, branch string) (map[string]bool, error) {
	known := map[string]bool{}
	res, err := results.Parse(data)
	if err != nil {
		return known, nil
	}
	cps, err := s.Changes(ctx, ChangesOptions{Study: res.Study.Name, Branch: branch})
	if err != nil {
		return nil, fmt.Errorf("change points: %w", err)
	}
	for _, c := range cps {
		known[c.Series.Key()+c.Run] = true
	}
	return known, nil
}

// WriteAdded says on w that run is stored (added, or already there), and
// each change point of its study's branch that known lacks: those found as
// it arrived (one at an older run, when the runs since confirm it).
func (s *Store) WriteAdded(ctx context.Context, w io.Writer, run Run, added bool, known map[string]bool) error {
	what := "added"
	if !added {
		what = "already stored"
	}
	fmt.Fprintf(w, "%s run %s (%s, branch %s, commit %.12s) in %s\n", what, run.Short(), human.Printable(run.Study),
		orDash(run.Meta.Branch), orDash(run.Meta.Commit), s.Where)
	cps, err := s.Changes(ctx, ChangesOptions{Study: run.Study, Branch: run.Meta.Branch})
	if err != nil {
		return fmt.Errorf("change points: %w", err)
	}
	for _, c := range cps {
		if !known[c.Series.Key()+c.Run] {
			fmt.Fprintf(w, "change point: %s\n", human.Printable(c.Text()))
		}
	}
	return nil
}

// List writes a page of the runs f picks, newest first, as a table: at
// most f.Limit of them, then where the next page starts.
func (s *Store) List(ctx context.Context, w io.Writer, f Filter) error {
	limit := f.Limit
	f.Limit++ // one more says there is a next page
	runs, err := s.Runs(ctx, f)
	if err != nil {
		return err
	}
	more := len(runs) > limit
	runs = runs[:min(len(runs), limit)]
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tmade\tstudy\tbranch\tcommit\ttestbed\tpinned")
	for _, r := range runs {
		commit := orDash(r.Meta.Commit)
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if r.Meta.Dirty {
			commit += "+dirty"
		}
		pinned := ""
		if r.Pinned {
			pinned = "pinned"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Short(), r.CreatedAt.Format("2006-01-02 15:04"), human.Printable(r.Study),
			orDash(r.Meta.Branch), commit, orDash(r.Meta.Testbed), pinned)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintf(w, "no runs in %s\n", s.Where)
	} else if more {
		fmt.Fprintf(w, "more: --before %s\n", runs[len(runs)-1].Short())
	}
	return nil
}

// Heading is what tandem history show writes above a run's report: its
// filing and when it was added.
func (r Run) Heading() string {
	dirty := ""
	if r.Meta.Dirty {
		dirty = " (dirty)"
	}
	return fmt.Sprintf("run %s: branch %s, commit %s%s, testbed %s, added %s\n\n", r.Short(), orDash(r.Meta.Branch), orDash(r.Meta.Commit),
		dirty, orDash(r.Meta.Testbed), r.AddedAt.Format("2006-01-02 15:04 UTC"))
}

// Write writes the gate in format, text, md or json: its head, then its
// rows as a comparison's.
func (g Gate) Write(w io.Writer, format string) error {
	switch format {
	case "md":
		if err := g.MarkdownHead(w); err != nil {
			return err
		}
		return report.ComparisonRows(w, "md", g.Comparison)
	case "json":
		return g.JSON(w)
	}
	if err := g.TextHead(w); err != nil {
		return err
	}
	return report.ComparisonRows(w, "text", g.Comparison)
}

// WriteChanges writes change points as text lines, a Markdown table
// (format md) or JSON (json).
func WriteChanges(w io.Writer, format string, cps []ChangePoint) error {
	switch format {
	case "json":
		if cps == nil {
			cps = []ChangePoint{}
		}
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(cps)
	case "md":
		fmt.Fprintln(w, "| study | branch | series | change | 95 % interval | kind | first run after | commits | p | triage |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
		for _, c := range cps {
			fmt.Fprintf(w, "| %s | %s | %s | ×%.3g | %.3g … %.3g | %s | %.12s | %.12s…%.12s | %.2g | %s |\n", mdCell(c.Study), mdCell(c.Branch), mdCell(c.Series.String()),
				c.Ratio, c.Lo, c.Hi, c.Kind, c.Run, orDash(c.PrevCommit), orDash(c.Commit), c.P, mdCell(string(c.Ack)+" "+c.Note))
		}
		return nil
	}
	if len(cps) == 0 {
		_, err := fmt.Fprintln(w, "no change points")
		return err
	}
	for _, c := range cps {
		fmt.Fprintf(w, "%s on %s: %s\n", human.Printable(c.Study), human.Printable(c.Branch), human.Printable(c.Text()))
	}
	return nil
}

// mdCell is s as a Markdown table's cell: printable, its pipes escaped.
func mdCell(s string) string {
	return strings.ReplaceAll(human.Printable(strings.TrimSpace(s)), "|", `\|`)
}

// orDash is s printable, or a dash for nothing.
func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return human.Printable(s)
}
