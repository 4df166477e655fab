package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/history"
	"github.com/tandem-bench/tandem/internal/runfixture"
	"github.com/tandem-bench/tandem/verdict"
)

const token = "s3cret-token"

// newServer serves a fresh SQLite history on 127.0.0.1, writable with
// token.
func newServer(t *testing.T) (*httptest.Server, *history.Store) {
	t.Helper()
	st, err := history.Open(context.Background(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := httptest.NewServer(New(st, Options{TokenHashes: []string{HashToken(token)}, Hosts: []string{"127.0.0.1", "localhost"}}))
	t.Cleanup(ts.Close)
	return ts, st
}

// runOf is a run of study whose rounds have the given p50s in µs, made
// at minute m of 2026-01-01.
func runOf(t testing.TB, study string, m int, p50s ...float64) []byte {
	t.Helper()
	return runfixture.JSON(t, runfixture.Latency(study, time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC), p50s...))
}

func post(t *testing.T, url, tok string, body []byte, gz bool) (int, map[string]any) {
	t.Helper()
	if gz {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(body)
		w.Close()
		body = b.Bytes()
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if gz {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func count(t *testing.T, st *history.Store) int {
	t.Helper()
	runs, err := st.Runs(context.Background(), history.Filter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

// Writes need the token; oversized, malformed and mis-zipped uploads are
// refused with nothing stored; the same run twice is stored once.
func TestIngestSecurity(t *testing.T) {
	ts, st := newServer(t)
	api := ts.URL + "/api/v1/runs?branch=main&tag=ci=yes"
	run := runOf(t, "svc", 1, 100, 101, 99, 100.5)
	for _, c := range []struct {
		name string
		tok  string
		body []byte
		gz   bool
		code int
	}{
		{"no token", "", run, false, http.StatusUnauthorized},
		{"a wrong token", "guess", run, false, http.StatusUnauthorized},
		{"not results", token, []byte(`{"hello": 1}`), false, http.StatusBadRequest},
		{"not JSON", token, []byte("\x00\x01<html>"), false, http.StatusBadRequest},
		{"oversized", token, bytes.Repeat([]byte(" "), MaxUpload+10), false, http.StatusRequestEntityTooLarge},
		{"a zip bomb", token, bytes.Repeat([]byte(" "), MaxUpload+10), true, http.StatusRequestEntityTooLarge},
	} {
		code, out := post(t, api, c.tok, c.body, c.gz)
		if code != c.code || out["error"] == nil {
			t.Errorf("%s: %d %v; want %d and an error", c.name, code, out, c.code)
		}
		if n := count(t, st); n != 0 {
			t.Fatalf("%s stored %d runs", c.name, n)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, api, strings.NewReader("not gzip"))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Encoding", "gzip")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body that is not gzip: %v %v", resp.StatusCode, err)
	}
	// concurrent ingests of one run store it once: one 201, the rest 200
	var wg sync.WaitGroup
	codes := make(chan int, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _ := post(t, api, token, run, true)
			codes <- code
		}()
	}
	wg.Wait()
	close(codes)
	created := 0
	for c := range codes {
		switch c {
		case http.StatusCreated:
			created++
		case http.StatusOK:
		default:
			t.Errorf("a concurrent ingest: %d", c)
		}
	}
	if created != 1 || count(t, st) != 1 {
		t.Errorf("8 concurrent ingests: %d created, %d stored; want 1, 1", created, count(t, st))
	}
	runs, _ := st.Runs(context.Background(), history.Filter{})
	if r, _ := st.Run(context.Background(), runs[0].ID); r.Meta.Branch != "main" || r.Meta.Tags["ci"] != "yes" {
		t.Errorf("filed as %+v; want branch main, tag ci=yes", r.Meta)
	}
	// pinning needs the token too
	pin := ts.URL + "/api/v1/runs/" + runs[0].ID[:8] + "/pin"
	if code, _ := post(t, pin, "", nil, false); code != http.StatusUnauthorized {
		t.Errorf("pin without a token: %d", code)
	}
	if code, out := post(t, pin, token, nil, false); code != http.StatusOK || out["pinned"] != true {
		t.Errorf("pin: %d %v", code, out)
	}
	// so does archiving, which takes the run out of the lists
	archive := ts.URL + "/api/v1/runs/" + runs[0].ID[:8] + "/archive"
	if code, _ := post(t, archive, "", nil, false); code != http.StatusUnauthorized {
		t.Errorf("archive without a token: %d", code)
	}
	if code, out := post(t, archive, token, nil, false); code != http.StatusOK || out["archived"] != true || count(t, st) != 0 {
		t.Errorf("archive: %d %v, %d runs listed", code, out, count(t, st))
	}
}

// Only this server's host names are answered (a page elsewhere cannot
// reach it by rebinding a name to loopback); no CORS; every answer carries
// the policy headers.
func TestHostsAndHeaders(t *testing.T) {
	ts, _ := newServer(t)
	get := func(host, method string) *http.Response {
		req, _ := http.NewRequest(method, ts.URL+"/", nil)
		if host != "" {
			req.Host = host
		}
		req.Header.Set("Origin", "http://evil.example")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := get("evil.example", http.MethodGet); r.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Host evil.example: %d; want 421", r.StatusCode)
	}
	r := get("", http.MethodGet)
	if r.StatusCode != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != "" ||
		!strings.HasPrefix(r.Header.Get("Content-Security-Policy"), "default-src 'self'") || r.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET /: %d, headers %v", r.StatusCode, r.Header)
	}
	if r := get("", http.MethodOptions); r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("OPTIONS (a CORS preflight): %d %v", r.StatusCode, r.Header)
	}
}

// Hostile names stay text on every page; malformed ids and series are 4xx.
func TestPagesAndAPI(t *testing.T) {
	ts, st := newServer(t)
	hostile := `<script>alert(1)</script>"'><img src=x onerror=alert(2)>`
	ctx := context.Background()
	var ids []string
	for m, v := range []float64{100, 100, 130} {
		r, _, err := st.Add(ctx, runOf(t, hostile, m, v, v+1, v-1, v+0.5), history.Meta{Branch: hostile})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	series := history.Series{Scenario: "lat", Target: "a", Level: 1, Metric: "headline"}
	branch := "/studies/" + url.PathEscape(hostile) + "/" + url.PathEscape(hostile)
	for _, path := range []string{"/", branch, branch + "/runs", branch + "/trend?" + url.Values{"series": {series.Key()}}.Encode(),
		"/runs/" + ids[0], "/compare?base=" + ids[0][:8] + "&head=" + ids[2][:8]} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
			continue
		}
		if bytes.Contains(body, []byte("<script>alert(1)")) || bytes.Contains(body, []byte("<img src=x")) {
			t.Errorf("GET %s: a hostile name became markup", path)
		}
	}
	for path, want := range map[string]int{"/runs/zz": 400, "/runs/ffffffff": 404, branch + "/trend?series=nope": 400,
		"/api/v1/runs?limit=0": 400, "/api/v1/runs/ffff": 404, "/api/v1/series?study=x&series=[": 400, "/nosuch": 404} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d; want %d", path, resp.StatusCode, want)
		}
	}
	var tr struct {
		Points []history.TrendPoint `json:"points"`
	}
	resp, err := http.Get(ts.URL + "/api/v1/series?" + url.Values{"study": {hostile}, "branch": {hostile}, "series": {series.Key()}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&tr)
	resp.Body.Close()
	if len(tr.Points) != 3 || tr.Points[2].Value != 129e3 || tr.Points[2].Lo != 129e3 || tr.Points[2].Hi != 131e3 {
		t.Errorf("series: %+v; want 3 points, oldest first, with the rounds' band", tr.Points)
	}
	resp, err = http.Get(ts.URL + "/api/v1/compare?base=" + ids[0] + "&head=" + ids[2])
	if err != nil {
		t.Fatal(err)
	}
	var cmp map[string]any
	json.NewDecoder(resp.Body).Decode(&cmp)
	resp.Body.Close()
	if cmp["regression"] != true {
		t.Errorf("compare a 30 %% slower run: %v", cmp)
	}
}

// Runs page by a keyset: every run once, newest first.
func TestRunsPaging(t *testing.T) {
	ts, st := newServer(t)
	for m := range 120 {
		if _, _, err := st.Add(context.Background(), runOf(t, "svc", m, 100, 101, 99), history.Meta{Branch: "main"}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	next := "/api/v1/runs?study=svc&branch=main&limit=50"
	var last time.Time
	for pages := 0; next != ""; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		resp, err := http.Get(ts.URL + next)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Runs []struct {
				ID        string    `json:"id"`
				CreatedAt time.Time `json:"created_at"`
			} `json:"runs"`
			Next string `json:"next"`
		}
		json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		for _, r := range page.Runs {
			if seen[r.ID] || (!last.IsZero() && !r.CreatedAt.Before(last)) {
				t.Fatalf("run %s out of order or twice", r.ID)
			}
			seen[r.ID], last = true, r.CreatedAt
		}
		next = page.Next
	}
	if len(seen) != 120 {
		t.Errorf("%d runs paged; want 120", len(seen))
	}
}

func TestAddStoreFailureIs5xx(t *testing.T) {
	ts, st := newServer(t)
	st.Close() // the database is gone: the server's fault, not the upload's
	code, out := post(t, ts.URL+"/api/v1/runs?branch=main", token, runOf(t, "svc", 1, 100, 101, 99), false)
	if code < 500 {
		t.Fatalf("add with a failing store: %d %v; want a 5xx so CI retries", code, out)
	}
}

func TestCompareBadMaxRegressionIs4xx(t *testing.T) {
	ts, st := newServer(t)
	a, _, err := st.Add(context.Background(), runOf(t, "svc", 1, 100, 101, 99), history.Meta{Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := st.Add(context.Background(), runOf(t, "svc", 2, 100, 101, 99), history.Meta{Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"abc", "NaN"} {
		resp, err := http.Get(ts.URL + "/api/v1/compare?base=" + a.ID + "&head=" + b.ID + "&max_regression=" + m)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("max_regression=%s: %d; want 400", m, resp.StatusCode)
		}
	}
}

func TestUppercaseTokenHashAuthorizes(t *testing.T) {
	st, err := history.Open(context.Background(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// ReadTokens accepts a hash in upper-case hex, and so does New
	ts := httptest.NewServer(New(st, Options{TokenHashes: []string{strings.ToUpper(HashToken(token))}, Hosts: []string{"127.0.0.1"}}))
	defer ts.Close()
	if code, out := post(t, ts.URL+"/api/v1/runs", token, runOf(t, "svc", 1, 100, 101, 99), false); code != http.StatusCreated {
		t.Fatalf("the right token, its hash kept in upper case: %d %v", code, out)
	}
}

func TestNoBranchPageShowsOnlyBranchlessRuns(t *testing.T) {
	ts, st := newServer(t)
	if _, _, err := st.Add(context.Background(), runOf(t, "svc", 1, 100, 101, 99), history.Meta{Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/studies/svc/-", "/studies/svc/-/runs"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && (strings.Contains(string(b), "lat a c=1") || strings.Contains(string(b), "/runs/")) {
			t.Errorf("GET %s (runs filed under no branch; there are none) shows branch main's run", path)
		}
	}
}

func TestNotFoundHidesWhere(t *testing.T) {
	ts, st := newServer(t)
	for _, path := range []string{"/api/v1/runs/abcd", "/runs/abcd"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), st.Where) {
			t.Errorf("GET %s without a token shows where the history is kept: %s", path, b)
		}
	}
}

// The compare page and API hold an undecided pair as the history gate
// does: with on_inconclusive fail (the default) it fails the comparison,
// with pass it passes, the same as the gate on the same two runs; and the
// page never calls it a regression (it is undecided: more rounds would
// tell).
func TestCompareUndecidedAgreesWithTheGate(t *testing.T) {
	ts, st := newServer(t)
	ctx := context.Background()
	base, _, err := st.Add(ctx, runOf(t, "svc", 1, 100, 101, 99, 100.5, 100.2), history.Meta{Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	headData := runOf(t, "svc", 2, 80, 200, 90, 150, 300) // rounds all over: undecided
	head, _, err := st.Add(ctx, headData, history.Meta{Branch: "feature"})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		return string(body)
	}
	for _, on := range []string{"", "fail", "pass"} {
		q := "?base=" + base.ID + "&head=" + head.ID
		if on != "" {
			q += "&on_inconclusive=" + on
		}
		var api struct {
			Regression bool
			Changes    []struct {
				Verdict    string
				Regression bool
			}
		}
		if err := json.Unmarshal([]byte(get("/api/v1/compare"+q)), &api); err != nil {
			t.Fatal(err)
		}
		g, err := st.GateRun(ctx, headData, history.GateOptions{BaseBranch: "main", Baseline: "last", MaxRegression: 5,
			OnInconclusive: verdict.OnInconclusive(on)})
		if err != nil {
			t.Fatal(err)
		}
		fails := on != "pass"
		if len(api.Changes) != 1 || api.Changes[0].Verdict != "inconclusive" || api.Regression != fails || api.Changes[0].Regression != fails ||
			g.Failed != fails || len(g.Changes) != 1 || g.Changes[0].Verdict != "inconclusive" {
			t.Errorf("on_inconclusive=%q: the API %+v, the gate failed %v (%v); want both inconclusive, failing %v", on, api, g.Failed, g.Reasons, fails)
		}
		page := html.UnescapeString(get("/compare" + q))
		glance, _, _ := strings.Cut(page[strings.Index(page, `id="glance"`):], "</section>")
		want := "no regression: 0 regressed, 0 unchanged, 1 inconclusive"
		if fails {
			want = "undecided: 1 undecided (inconclusive pairs fail the gate unless on-inconclusive is pass): 0 regressed, 0 unchanged, 1 inconclusive"
		}
		if !strings.Contains(glance, want) || strings.Contains(page, "(regression)") || strings.Contains(glance, ">regression:") ||
			!strings.Contains(glance, `<li class="v-inconclusive">`) {
			t.Errorf("on_inconclusive=%q: the page's glance lacks %q or calls the undecided pair a regression:\n%s", on, want, glance)
		}
	}
}

// GET /api/v1/changes lists change points (?open=1 the regressions nobody
// acknowledged); a bad series is a 400.
func TestAPIChanges(t *testing.T) {
	ts, st := newServer(t)
	ctx := context.Background()
	for m := range 16 {
		v := 100.0
		if m >= 12 {
			v = 130
		}
		if _, _, err := st.Add(ctx, runOf(t, "svc", m, v, v*1.01, v*0.99, v*1.005), history.Meta{Branch: "main"}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Get(ts.URL + "/api/v1/changes?open=1&study=svc")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Changes []history.ChangePoint `json:"changes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%d, %v", resp.StatusCode, err)
	}
	found := false
	for _, c := range got.Changes {
		found = found || (c.Series.Metric == "headline" && c.Kind == history.Regression && c.Ratio > 1.25 && c.Ratio < 1.35)
	}
	if !found {
		t.Errorf("changes %+v; want the ×1.3 regression", got.Changes)
	}
	bad, err := http.Get(ts.URL + "/api/v1/changes?series=nonsense")
	if err != nil {
		t.Fatal(err)
	}
	bad.Body.Close()
	if bad.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad series: %d; want 400", bad.StatusCode)
	}
}
