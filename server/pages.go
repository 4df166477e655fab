package server

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strings"

	"github.com/tandem-bench/tandem/history"
	"github.com/tandem-bench/tandem/internal/uplot"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/stats"
)

//go:embed assets
var assets embed.FS

// noBranch stands in a path for runs filed under no branch.
const noBranch = "-"

func branchPath(b string) string {
	if b == "" {
		return noBranch
	}
	return b
}

func branchName(b string) string {
	if b == "" || b == noBranch {
		return "(no branch)"
	}
	return b
}

var pages = template.Must(template.New("pages").Funcs(template.FuncMap{
	"pathq": url.PathEscape, "branchPath": branchPath, "branchName": branchName,
}).ParseFS(assets, "assets/pages.html"))

// render writes a page, or a 500 that says why.
func render(w http.ResponseWriter, name string, data any) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	b.WriteTo(w)
}

// pageError answers a page request that failed.
func pageError(w http.ResponseWriter, err error) { http.Error(w, err.Error(), status(err)) }

func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	var body, kind string
	switch r.PathValue("name") {
	case "uplot.js":
		body, kind = uplot.JS, "text/javascript"
	case "uplot.css":
		body, kind = uplot.CSS, "text/css"
	case "site.css", "trend.js":
		b, err := assets.ReadFile("assets/" + r.PathValue("name"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		body, kind = string(b), "text/css"
		if strings.HasSuffix(r.PathValue("name"), ".js") {
			kind = "text/javascript"
		}
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", kind+"; charset=utf-8")
	w.Header().Set("Cache-Control", "max-age=3600")
	w.Write([]byte(body))
}

func (s *Server) studiesPage(w http.ResponseWriter, r *http.Request) {
	studies, err := s.store.Studies(r.Context())
	if err != nil {
		pageError(w, err)
		return
	}
	render(w, "studies", map[string]any{"Studies": studies, "Where": s.store.Where})
}

// branchOf reads a page's study and branch from its path.
func branchOf(r *http.Request) (study, branch string) {
	branch = r.PathValue("branch")
	if branch == noBranch {
		branch = ""
	}
	return r.PathValue("study"), branch
}

func branchURL(study, branch string) string {
	return "/studies/" + url.PathEscape(study) + "/" + url.PathEscape(branchPath(branch))
}

func trendURL(study, branch string, s history.Series) string {
	return branchURL(study, branch) + "/trend?" + url.Values{"series": {s.Key()}}.Encode()
}

func (s *Server) branchPage(w http.ResponseWriter, r *http.Request) {
	study, branch := branchOf(r)
	movers, err := s.store.TopMovers(r.Context(), study, branch, 15)
	if err != nil {
		pageError(w, err)
		return
	}
	type moverRow struct{ Series, Before, After, Change, Note, Class, Trend string }
	var mrows []moverRow
	for _, m := range movers {
		row := moverRow{Series: m.Series.String(), Before: history.FormatValue(m.Before, m.Unit), After: history.FormatValue(m.After, m.Unit),
			Trend: trendURL(study, branch, m.Series)}
		// coloured only when the verdict engine calls it a change, in its
		// words: slower or faster (worse or better for a rate); otherwise
		// the move is printed plain with the verdict that says why
		word := "worse"
		if m.Change < 0 {
			word = "better"
		}
		row.Change = stats.Percent(math.Abs(m.Change)) + " " + word
		switch {
		case !m.Comparable:
			row.Note, row.Class = "not comparable: the series measured something else", "changed"
		case m.Verdict == stats.Slower:
			row.Class, row.Note = "worse", "slower"
		case m.Verdict == stats.Faster:
			row.Class, row.Note = "better", "faster"
		case m.Floor > history.MoverFloor:
			row.Note = fmt.Sprintf("%s: not a change (this series' runs scatter: changes start at %s)", m.Verdict, stats.Percent(m.Floor))
		default:
			row.Note = string(m.Verdict) + ": not a change"
		}
		mrows = append(mrows, row)
	}
	points, err := s.store.SeriesOf(r.Context(), study, branch)
	if err != nil {
		pageError(w, err)
		return
	}
	if points == nil {
		http.Error(w, fmt.Sprintf("no runs of %q on branch %s", study, branchName(branch)), http.StatusNotFound)
		return
	}
	type seriesRow struct{ Series, Value, Trend string }
	var srows []seriesRow
	for _, p := range points {
		srows = append(srows, seriesRow{p.Series.String(), history.FormatValue(p.Value, p.Unit), trendURL(study, branch, p.Series)})
	}
	render(w, "branch", map[string]any{"Study": study, "Branch": branch, "Movers": mrows, "Series": srows,
		"RunsURL": branchURL(study, branch) + "/runs"})
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	study, branch := branchOf(r)
	const perPage = 50
	f := history.Filter{Study: study, Branch: branch, ExactBranch: true, Limit: perPage + 1} // one more says there is a next page
	if b := r.URL.Query().Get("before"); b != "" {
		run, err := s.store.Run(r.Context(), b)
		if err != nil {
			pageError(w, err)
			return
		}
		f.Before = &run
	}
	runs, err := s.store.Runs(r.Context(), f)
	if err != nil {
		pageError(w, err)
		return
	}
	older := ""
	if len(runs) > perPage {
		runs = runs[:perPage]
		older = branchURL(study, branch) + "/runs?" + url.Values{"before": {runs[len(runs)-1].ID}}.Encode()
	}
	render(w, "runs", map[string]any{"Study": study, "Branch": branch, "Runs": runs, "Older": older, "BranchURL": branchURL(study, branch)})
}

func (s *Server) trendPage(w http.ResponseWriter, r *http.Request) {
	study, branch := branchOf(r)
	series, err := history.ParseSeries(r.URL.Query().Get("series"))
	if err != nil {
		pageError(w, badRequest{err})
		return
	}
	points, err := s.store.Trend(r.Context(), study, branch, series, 500)
	if err != nil {
		pageError(w, err)
		return
	}
	unit := ""
	if len(points) > 0 {
		unit = points[len(points)-1].Unit
	}
	type row struct{ Run, Short, Made, Commit, Value, Band, Changed string }
	var rows []row
	for i := len(points) - 1; i >= 0; i-- { // newest first in the table
		p := points[i]
		rows = append(rows, row{p.Run, p.Run[:12], p.CreatedAt.Format("2006-01-02 15:04"), p.Commit, history.FormatValue(p.Value, unit),
			history.FormatValue(p.Lo, unit) + " … " + history.FormatValue(p.Hi, unit), strings.Join(p.Changed, ", ")})
	}
	cps, err := s.store.Changes(r.Context(), history.ChangesOptions{Study: study, Branch: branch, Series: series.Key()})
	if err != nil {
		pageError(w, err)
		return
	}
	type change struct {
		Run    string  `json:"run"`
		Label  string  `json:"label"`
		Kind   string  `json:"kind"`
		Ratio  float64 `json:"ratio"`
		Text   string  `json:"-"`
		Short  string  `json:"-"`
		Status string  `json:"-"`
	}
	var changes []change
	for _, c := range cps {
		status := "open"
		if !c.Open() {
			status = string(c.Kind)
		}
		if c.Ack != "" {
			status = "acknowledged: " + string(c.Ack)
		}
		changes = append(changes, change{Run: c.Run, Kind: string(c.Kind), Ratio: c.Ratio, Label: fmt.Sprintf("×%.3g %s", c.Ratio, c.Kind),
			Text: fmt.Sprintf("×%.3g [%.3g … %.3g], p %.2g", c.Ratio, c.Lo, c.Hi, c.P), Short: c.Run[:12], Status: status})
	}
	zoom := r.URL.Query().Get("zoom") == "1"
	data, err := json.Marshal(map[string]any{"points": points, "unit": unit, "changes": changes, "zoom": zoom})
	if err != nil {
		pageError(w, err)
		return
	}
	q := r.URL.Query()
	if zoom {
		q.Del("zoom")
	} else {
		q.Set("zoom", "1")
	}
	render(w, "trend", map[string]any{"Title": series.String(), "Study": study, "Branch": branch, "Points": points, "Rows": rows,
		"BranchURL": branchURL(study, branch), "Changes": changes, "Zoom": zoom, "ZoomURL": "?" + q.Encode(),
		// json.Marshal escapes <, > and &: the data cannot end its element
		"Data": template.HTML(`<script type="application/json" id="trend-data">` + string(data) + `</script>`)})
}

// runPage is the run's report, as tandem report writes it: a page with
// its own scripts, allowed by their hashes.
func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	run, err := s.store.Run(r.Context(), r.PathValue("id"))
	if err != nil {
		pageError(w, err)
		return
	}
	res, err := s.store.Results(r.Context(), run.ID)
	if err != nil {
		pageError(w, err)
		return
	}
	var b bytes.Buffer
	if err := report.HTML(&b, res); err != nil {
		pageError(w, err)
		return
	}
	w.Header().Set("Content-Security-Policy", report.ContentSecurityPolicy())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	b.WriteTo(w)
}

// comparePage holds two runs against each other, as tandem compare
// --format html does; the page's warnings say when their machines differ.
func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	c, err := s.comparison(r)
	if err != nil {
		pageError(w, err)
		return
	}
	var b bytes.Buffer
	if err := report.Comparison(&b, "html", c); err != nil {
		pageError(w, err)
		return
	}
	w.Header().Set("Content-Security-Policy", report.ContentSecurityPolicy())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	b.WriteTo(w)
}

// changesPage lists the change points across studies: the open ones (a
// regression nobody acknowledged) unless ?all=1.
func (s *Server) changesPage(w http.ResponseWriter, r *http.Request) {
	all := r.URL.Query().Get("all") == "1"
	cps, err := s.store.Changes(r.Context(), history.ChangesOptions{})
	if err != nil {
		pageError(w, err)
		return
	}
	type row struct{ Study, Branch, Series, Trend, Change, Kind, Run, Commits, Status string }
	var rows []row
	for _, c := range cps {
		if !all && !c.Open() {
			continue
		}
		status := "open"
		if c.Ack != "" {
			status = string(c.Ack) + " " + c.Note
		}
		rows = append(rows, row{c.Study, branchName(c.Branch), c.Series.String(), trendURL(c.Study, c.Branch, c.Series),
			fmt.Sprintf("×%.3g [%.3g … %.3g], p %.2g", c.Ratio, c.Lo, c.Hi, c.P), string(c.Kind), c.Run,
			shortCommit(c.PrevCommit) + " … " + shortCommit(c.Commit), status})
	}
	render(w, "changes", map[string]any{"Rows": rows, "All": all})
}

func shortCommit(c string) string {
	if c == "" {
		return "–"
	}
	return c[:min(12, len(c))]
}
