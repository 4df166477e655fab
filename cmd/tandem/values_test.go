package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// uriLog is a loopback server that records each request's target and
// body, in order.
func uriLog(t *testing.T) (url string, take func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.RequestURI()+" "+string(b))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}
}

// tandem load --values: the URL's path and query and --data name the
// file's values; a feeder's relative path is the current directory's; a
// feeder read once ends the run at its rows (said on stderr) whatever
// --requests asks; request 0 is also the one the reachability check
// sends. Without --values the same flags are sent as written.
func TestLoadValues(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "users.csv"), []byte("id,name\n7,ann\n8,bo b\n9,cyd\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "v.yaml"), []byte("values:\n  n: {seq: {from: 1}}\n  users: {csv: users.csv, order: once}\n"), 0o644)
	t.Chdir(dir)
	url, take := uriLog(t)
	code, out, stderr := tandem(t, "load", url+"/u/${users.name}?n=${n}", "--values", "v.yaml", "--data", `{"id":"${users.id}"}`,
		"--requests", "100", "--format", "json")
	var s struct{ Requests, OK int64 }
	if err := json.Unmarshal([]byte(out), &s); err != nil || code != 0 {
		t.Fatalf("exit %d, stderr %q, output %q: %v", code, stderr, out, err)
	}
	want := []string{`/u/ann?n=1 {"id":"7"}`, // the reachability check's request 0
		`/u/ann?n=1 {"id":"7"}`, `/u/bo%20b?n=2 {"id":"8"}`, `/u/cyd?n=3 {"id":"9"}`}
	if got := take(); strings.Join(got, "\n") != strings.Join(want, "\n") || s.Requests != 3 || s.OK != 3 {
		t.Errorf("server got %q, results %+v; want %q and 3 requests", got, s, want)
	}
	if !strings.Contains(stderr, "values: the run ends after 3 requests, the rows of its feeder read once") {
		t.Errorf("stderr %q does not say where the run ends", stderr)
	}
	// without --values: as written
	if code, _, stderr := tandem(t, "load", url+"/p", "--data", "${users.id} $${x}", "--requests", "2", "--format", "json"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, g := range take() {
		if g != "/p ${users.id} $${x}" {
			t.Errorf("without --values the server got %q; want the flags as written", g)
		}
	}
}

// A bad --values file, a placeholder it does not define, or a feeder read
// once with --batch is bad input (exit 2) that says where.
func TestLoadValuesErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("values:\n  n: {seqq: {}}\n  env: {seq: {}}\n"), 0o644)
	once := filepath.Join(dir, "once.yaml")
	os.WriteFile(filepath.Join(dir, "rows.jsonl"), []byte("{\"a\": 1}\n"), 0o644)
	os.WriteFile(once, []byte("values: {rows: {jsonl: "+filepath.Join(dir, "rows.jsonl")+", order: once}}\n"), 0o644)
	url, _ := uriLog(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{url + "/", "--values", bad}, bad + ":2:6: values.n: unknown source \"seqq\""},
		{[]string{url + "/", "--values", bad}, bad + ":3:8: values.env: value name \"env\" is reserved"},
		{[]string{url + "/${nope}", "--values", once}, "http.path: unknown value ${nope} (the values: rows.*)"},
		{[]string{url + "/${rows.a}", "--values", once, "--batch", "2", "--duration", "1s"}, "--values with a feeder read once: a closed or open loop"},
		{[]string{url + "/", "--values", filepath.Join(dir, "none.yaml")}, "--values: open "},
	} {
		code, _, stderr := tandem(t, append([]string{"load"}, c.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("tandem load %q: exit %d, stderr %q; want exit %d saying %q", c.args, code, stderr, exitBadInput, c.want)
		}
	}
}
