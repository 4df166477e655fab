package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/tandem-bench/tandem/history"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/verdict"
)

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /{$}", s.studiesPage)
	m.HandleFunc("GET /studies/{study}/{branch}", s.branchPage)
	m.HandleFunc("GET /studies/{study}/{branch}/runs", s.runsPage)
	m.HandleFunc("GET /studies/{study}/{branch}/trend", s.trendPage)
	m.HandleFunc("GET /runs/{id}", s.runPage)
	m.HandleFunc("GET /compare", s.comparePage)
	m.HandleFunc("GET /changes", s.changesPage)
	m.HandleFunc("GET /assets/{name}", s.asset)
	m.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	m.HandleFunc("POST /api/v1/runs", s.apiAdd)
	m.HandleFunc("GET /api/v1/runs", s.apiRuns)
	m.HandleFunc("GET /api/v1/runs/{id}", s.apiRun)
	m.HandleFunc("POST /api/v1/runs/{id}/pin", s.apiMark("pinned", "unpin", s.store.Pin))
	m.HandleFunc("POST /api/v1/runs/{id}/archive", s.apiMark("archived", "unarchive", s.store.Archive))
	m.HandleFunc("GET /api/v1/series", s.apiSeries)
	m.HandleFunc("GET /api/v1/compare", s.apiCompare)
	m.HandleFunc("GET /api/v1/changes", s.apiChanges)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func apiError(w http.ResponseWriter, code int, format string, args ...any) {
	writeJSON(w, code, map[string]string{"error": fmt.Sprintf(format, args...)})
}

// badRequest marks an error as the request's fault.
type badRequest struct{ error }

func (e badRequest) Unwrap() error { return e.error }

// status is the HTTP status of an error: 404 for an unknown run, 400 for
// a malformed id or request, 500 for the server's own failures.
func status(err error) int {
	var bad badRequest
	switch {
	case errors.Is(err, history.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, history.ErrBadID), errors.Is(err, history.ErrInvalid), errors.As(err, &bad):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// storeError answers an API request that failed.
func storeError(w http.ResponseWriter, err error) { apiError(w, status(err), "%v", err) }

// apiAdd stores a run: the body is results.json, gzipped when
// Content-Encoding says so, at most MaxUpload bytes either way; the
// filing comes from the query (branch, commit, testbed, ci_url, dirty,
// tag=k=v …). Needs a token.
func (s *Server) apiAdd(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		apiError(w, http.StatusUnauthorized, "adding a run needs a token: Authorization: Bearer TOKEN")
		return
	}
	var body io.Reader = http.MaxBytesReader(w, r.Body, MaxUpload)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			apiError(w, http.StatusBadRequest, "gzip: %v", err)
			return
		}
		body = zr
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(body, MaxUpload+1))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			apiError(w, http.StatusRequestEntityTooLarge, "more than %d MiB", MaxUpload>>20)
			return
		}
		apiError(w, http.StatusBadRequest, "read the body: %v", err)
		return
	}
	if n > MaxUpload {
		apiError(w, http.StatusRequestEntityTooLarge, "more than %d MiB once unzipped", MaxUpload>>20)
		return
	}
	q := r.URL.Query()
	m := history.Meta{Branch: q.Get("branch"), Commit: q.Get("commit"), Testbed: q.Get("testbed"), CIURL: q.Get("ci_url"),
		Dirty: q.Get("dirty") == "true", Tags: map[string]string{}}
	for _, t := range q["tag"] {
		k, v, ok := strings.Cut(t, "=")
		if !ok || k == "" {
			apiError(w, http.StatusBadRequest, "tag %q: want key=value", t)
			return
		}
		m.Tags[k] = v
	}
	run, added, err := s.store.Add(r.Context(), buf.Bytes(), m)
	if err != nil {
		storeError(w, err) // 400 for what is not results, 500 for the store's failure (worth a retry)
		return
	}
	code := http.StatusCreated
	if !added {
		code = http.StatusOK
	}
	writeJSON(w, code, map[string]any{"id": run.ID, "added": added, "url": "/runs/" + run.ID})
}

// runJSON is a run as the API shows it.
func runJSON(r history.Run) map[string]any {
	return map[string]any{"id": r.ID, "created_at": r.CreatedAt, "added_at": r.AddedAt, "study": r.Study, "branch": r.Meta.Branch,
		"commit": r.Meta.Commit, "dirty": r.Meta.Dirty, "ci_url": r.Meta.CIURL, "testbed": r.Meta.Testbed, "tags": r.Meta.Tags,
		"env_fp": r.EnvFP, "tandem_version": r.TandemVersion, "interrupted": r.Interrupted, "pinned": r.Pinned, "archived": r.Archived}
}

// filter reads a run listing's query: study, branch, pinned, limit,
// before (a run id: the page after it).
func (s *Server) filter(r *http.Request) (history.Filter, error) {
	q := r.URL.Query()
	f := history.Filter{Study: q.Get("study"), Branch: q.Get("branch"), Pinned: q.Get("pinned") == "true", Limit: 50}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 500 {
			return f, badRequest{fmt.Errorf("limit %q: want 1 to 500", l)}
		}
		f.Limit = n
	}
	if b := q.Get("before"); b != "" {
		run, err := s.store.Run(r.Context(), b)
		if err != nil {
			return f, err
		}
		f.Before = &run
	}
	return f, nil
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	f, err := s.filter(r)
	if err != nil {
		storeError(w, err)
		return
	}
	limit := f.Limit
	f.Limit++ // one more says there is a next page
	runs, err := s.store.Runs(r.Context(), f)
	if err != nil {
		storeError(w, err)
		return
	}
	more := len(runs) > limit
	runs = runs[:min(len(runs), limit)]
	out := []map[string]any{}
	for _, run := range runs {
		out = append(out, runJSON(run))
	}
	res := map[string]any{"runs": out}
	if more {
		res["next"] = "/api/v1/runs?" + nextQuery(r, runs[len(runs)-1].ID)
	}
	writeJSON(w, http.StatusOK, res)
}

// nextQuery is r's query for the page after the run id.
func nextQuery(r *http.Request, id string) string {
	q := r.URL.Query()
	q.Set("before", id)
	return q.Encode()
}

func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.store.Run(r.Context(), r.PathValue("id"))
	if err != nil {
		storeError(w, err)
		return
	}
	points, err := s.store.Points(r.Context(), run.ID)
	if err != nil {
		storeError(w, err)
		return
	}
	out := runJSON(run)
	var ps []map[string]any
	for _, p := range points {
		ps = append(ps, map[string]any{"series": p.Series, "key": p.Series.Key(), "value": p.Value, "unit": p.Unit,
			"direction": p.Direction, "config_fp": p.ConfigFP, "rounds": p.Rounds})
	}
	out["points"] = ps
	writeJSON(w, http.StatusOK, out)
}

// apiMark sets a run's mark (pinned, archived) with set; the query
// parameter named undo (unpin, unarchive) set to true clears it. Needs a
// token.
func (s *Server) apiMark(mark, undo string, set func(context.Context, string, bool) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			apiError(w, http.StatusUnauthorized, "marking a run %s needs a token: Authorization: Bearer TOKEN", mark)
			return
		}
		run, err := s.store.Run(r.Context(), r.PathValue("id"))
		if err != nil {
			storeError(w, err)
			return
		}
		on := r.URL.Query().Get(undo) != "true"
		if err := set(r.Context(), run.ID, on); err != nil {
			storeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": run.ID, mark: on})
	}
}

// seriesQuery reads study, branch and series (a series key) from r.
func seriesQuery(r *http.Request) (study, branch string, series history.Series, err error) {
	q := r.URL.Query()
	study, branch = q.Get("study"), q.Get("branch")
	if study == "" {
		return "", "", series, badRequest{errors.New("want study, branch and series")}
	}
	if series, err = history.ParseSeries(q.Get("series")); err != nil {
		return "", "", series, badRequest{err}
	}
	return study, branch, series, nil
}

func (s *Server) apiSeries(w http.ResponseWriter, r *http.Request) {
	study, branch, series, err := seriesQuery(r)
	if err != nil {
		storeError(w, err)
		return
	}
	points, err := s.store.Trend(r.Context(), study, branch, series, 0)
	if err != nil {
		storeError(w, err)
		return
	}
	if points == nil {
		points = []history.TrendPoint{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"study": study, "branch": branch, "series": series, "points": points})
}

// comparison holds two stored runs against each other.
func (s *Server) comparison(r *http.Request) (verdict.Comparison, error) {
	q := r.URL.Query()
	var ids [2]string
	for i, k := range []string{"base", "head"} {
		if q.Get(k) == "" {
			return verdict.Comparison{}, badRequest{errors.New("want base and head: two run ids")}
		}
		run, err := s.store.Run(r.Context(), q.Get(k))
		if err != nil {
			return verdict.Comparison{}, fmt.Errorf("%s: %w", k, err)
		}
		ids[i] = run.ID
	}
	base, err := s.store.Results(r.Context(), ids[0])
	if err != nil {
		return verdict.Comparison{}, err
	}
	head, err := s.store.Results(r.Context(), ids[1])
	if err != nil {
		return verdict.Comparison{}, err
	}
	max := 5.0
	if m := q.Get("max_regression"); m != "" {
		if max, err = strconv.ParseFloat(m, 64); err != nil || max < 0 || math.IsNaN(max) || math.IsInf(max, 0) {
			return verdict.Comparison{}, badRequest{fmt.Errorf("max_regression %q: want a percentage of 0 or more", m)}
		}
	}
	on, err := verdict.ParseOnInconclusive(q.Get("on_inconclusive"))
	if err != nil {
		return verdict.Comparison{}, badRequest{err}
	}
	c, err := verdict.CompareRuns(base, head, verdict.Options{MaxRegression: max, OnInconclusive: on})
	if err != nil {
		return c, badRequest{err} // two runs that cannot be compared
	}
	return c, nil
}

func (s *Server) apiCompare(w http.ResponseWriter, r *http.Request) {
	c, err := s.comparison(r)
	if err != nil {
		storeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	report.Comparison(w, "json", c)
}

// apiChanges lists change points: ?study, ?branch, ?series (a key) narrow
// them; ?open=1 keeps the regressions nobody acknowledged.
func (s *Server) apiChanges(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	o := history.ChangesOptions{Study: q.Get("study"), Branch: q.Get("branch"), Series: q.Get("series")}
	if o.Series != "" {
		if _, err := history.ParseSeries(o.Series); err != nil {
			storeError(w, badRequest{err})
			return
		}
	}
	cps, err := s.store.Changes(r.Context(), o)
	if err != nil {
		storeError(w, err)
		return
	}
	out := []history.ChangePoint{}
	for _, c := range cps {
		if q.Get("open") != "1" || c.Open() {
			out = append(out, c)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"changes": out})
}
