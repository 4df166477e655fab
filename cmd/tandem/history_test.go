package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/runfixture"
	"github.com/tandem-bench/tandem/results"
)

// resultsFile writes a run of study "gated" whose rounds have the given
// p50s in µs, made at day d of 2026.
func resultsFile(t *testing.T, d int, p50s ...float64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.json")
	if err := results.Write(path, runfixture.Latency("gated", time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC), p50s...)); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestHistoryCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "history.db")
	base := resultsFile(t, 1, 100, 101, 99, 100.5, 100.2)
	slow := resultsFile(t, 2, 130, 131, 129, 130.5, 130.2)
	h := func(args ...string) (int, string, string) {
		t.Helper()
		return tandem(t, append([]string{"history", "--db", db}, args...)...)
	}
	if code, out, errs := h("add", base, "--branch", "main", "--commit", "c1", "--tag", "runner=ci"); code != 0 || !strings.HasPrefix(out, "added run ") {
		t.Fatalf("add: exit %d: %s%s", code, out, errs)
	}
	if code, out, _ := h("add", base, "--branch", "main"); code != 0 || !strings.HasPrefix(out, "already stored run ") {
		t.Errorf("add again: exit %d: %s", code, out)
	}
	// 30 % slower over five rounds each: a regression, exit 1
	code, out, _ := h("gate", slow, "--base-branch", "main")
	if code != exitCheckFailed || !strings.Contains(out, "FAIL: lat a c=1: slower") || !strings.Contains(out, "lat a c=1 (errors 0.0 % → 0.0 %): slower (head/base 1.30×") {
		t.Errorf("gate a slower run: exit %d:\n%s", code, out)
	}
	if code, out, _ := h("gate", slow, "--base-branch", "main", "--format", "md"); code != exitCheckFailed || !strings.Contains(out, "## tandem history gate: **failed**") {
		t.Errorf("gate --format md: exit %d:\n%s", code, out)
	}
	if code, out, _ := h("gate", slow, "--base-branch", "main", "--max-regression", "50"); code != 0 || !strings.Contains(out, "pass: 1 slower") {
		t.Errorf("gate with a 50 %% limit: exit %d:\n%s", code, out)
	}
	if code, out, _ := h("gate", slow, "--base-branch", "release"); code != 0 || !strings.Contains(out, "warning: no baseline") {
		t.Errorf("gate without a baseline: exit %d:\n%s", code, out)
	}
	if code, _, _ := h("gate", slow, "--base-branch", "release", "--on-missing-baseline", "fail"); code != exitCheckFailed {
		t.Errorf("gate without a baseline, --on-missing-baseline fail: exit %d", code)
	}
	if code, out, _ := h("add", slow, "--branch", "feature"); code != 0 {
		t.Fatalf("add slow: %d %s", code, out)
	}
	code, out, _ = h("list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.Contains(lines[1], "feature") || !strings.Contains(lines[2], "main") || !strings.Contains(lines[2], "c1") {
		t.Errorf("list: exit %d:\n%s", code, out)
	}
	baseID, slowID := strings.Fields(lines[2])[0], strings.Fields(lines[1])[0]
	if code, out, _ := h("compare", baseID, slowID, "--format", "md"); code != exitCheckFailed || !strings.Contains(out, "regression") {
		t.Errorf("compare two stored runs: exit %d:\n%s", code, out)
	}
	if code, out, _ := h("show", baseID); code != 0 || !strings.Contains(out, "branch main, commit c1") || !strings.Contains(out, "Scenario lat") {
		t.Errorf("show: exit %d:\n%s", code, out)
	}
	if code, out, _ := h("pin", baseID); code != 0 || !strings.Contains(out, "pinned") {
		t.Errorf("pin: exit %d: %s", code, out)
	}
	if code, out, _ := h("prune", "--older-than", "1d"); code != 0 || !strings.Contains(out, "deleted 1 run ") {
		t.Errorf("prune (the feature run goes, the pinned main run stays): exit %d: %s", code, out)
	}
	if code, out, _ := h("archive", baseID); code != 0 || !strings.Contains(out, "archived") {
		t.Errorf("archive: exit %d: %s", code, out)
	}
	if code, out, _ := h("list"); code != 0 || !strings.Contains(out, "no runs") {
		t.Errorf("list after archiving the only run: exit %d:\n%s", code, out)
	}
	if code, out, _ := h("list", "--archived"); code != 0 || !strings.Contains(out, baseID) {
		t.Errorf("list --archived: exit %d:\n%s", code, out)
	}
	if code, out, _ := h("reindex"); code != 0 || !strings.Contains(out, "reindexed 1 runs") {
		t.Errorf("reindex: exit %d: %s", code, out)
	}
	for _, bad := range [][]string{
		{"add", base, "--tag", "novalue"}, {"prune", "--older-than", "soon"}, {"gate", slow, "--baseline", "first"},
		{"gate", slow, "--on-missing-baseline", "maybe"}, {"show", "zz"}, {"add", filepath.Join(t.TempDir(), "none.json")},
	} {
		if code, _, errs := h(bad...); code != exitBadInput || errs == "" {
			t.Errorf("history %v: exit %d (%s); want 2 and a reason", bad, code, errs)
		}
	}
	if _, err := os.Stat(db); err != nil {
		t.Error(err)
	}
}

// tandem serve refuses to listen beyond loopback without a token; a token
// is shown once and kept as its hash; a malformed token file says where.
func TestServeRefusals(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	tokens := filepath.Join(dir, "tokens")
	if code, _, errs := tandem(t, "serve", "--db", db, "--listen", "0.0.0.0:0"); code != exitBadInput || !strings.Contains(errs, "is not loopback") {
		t.Errorf("serve on 0.0.0.0 without tokens: exit %d: %s", code, errs)
	}
	code, out, _ := tandem(t, "history", "token", "--file", tokens)
	tok, _, _ := strings.Cut(out, "\n")
	kept, _ := os.ReadFile(tokens)
	if code != 0 || len(tok) != 64 || strings.Contains(string(kept), tok) || len(strings.TrimSpace(string(kept))) != 64 {
		t.Errorf("history token: exit %d, token %q, file %q; want the token shown and only its hash kept", code, tok, kept)
	}
	if fi, err := os.Stat(tokens); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v", err)
	}
	os.WriteFile(tokens, []byte("# ok\nnot-a-hash\n"), 0o600)
	if code, _, errs := tandem(t, "serve", "--db", db, "--token-file", tokens); code != exitBadInput || !strings.Contains(errs, tokens+":2:") {
		t.Errorf("a malformed token file: exit %d: %s; want its line named", code, errs)
	}
}

// tandem history add says when a run starts a change point; changes lists
// it (text, md, json, --open); ack triages it; gate --on-change-point fails
// a run that starts a slowdown and passes an unchanged rerun.
func TestHistoryChangePoints(t *testing.T) {
	db := filepath.Join(t.TempDir(), "history.db")
	h := func(args ...string) (int, string, string) {
		t.Helper()
		return tandem(t, append([]string{"history", "--db", db}, args...)...)
	}
	level := func(d int) []float64 {
		v := 100.0
		if d > 10 {
			v = 130
		}
		return []float64{v, v * 1.01, v * 0.99, v * 1.005, v * 0.995}
	}
	var told string // what add said of change points
	for d := 1; d <= 14; d++ {
		code, out, errs := h("add", resultsFile(t, d, level(d)...), "--branch", "main", "--commit", fmt.Sprintf("c%02d", d))
		if code != 0 {
			t.Fatalf("add day %d: exit %d: %s%s", d, code, out, errs)
		}
		if _, cp, ok := strings.Cut(out, "\nchange point: "); ok {
			told += cp
		}
	}
	if !strings.Contains(told, "lat a c=1 headline: ×1.3") {
		t.Errorf("add never said a run starts a change point: %q", told)
	}
	code, out, _ := h("changes", "--study", "gated")
	if code != 0 || !strings.Contains(out, "gated on main: lat a c=1 headline: ×1.3") || !strings.Contains(out, "a regression") || !strings.Contains(out, "commit c11") {
		t.Fatalf("changes: exit %d:\n%s", code, out)
	}
	var cps []struct {
		Run    string `json:"run"`
		Kind   string `json:"kind"`
		Series struct {
			Scenario, Target, Metric string
			Level                    int
		} `json:"series"`
	}
	_, js, _ := h("changes", "--format", "json", "--open")
	if err := json.Unmarshal([]byte(js), &cps); err != nil || len(cps) == 0 || cps[0].Kind != "regression" {
		t.Fatalf("changes --format json --open: %v\n%s", err, js)
	}
	if _, md, _ := h("changes", "--format", "md"); !strings.Contains(md, "| gated | main | lat a c=1 headline | ×1.3") {
		t.Errorf("changes --format md:\n%s", md)
	}
	key := `["lat","a",1,"headline"]`
	slow := resultsFile(t, 20, 170, 171, 169, 170.5, 170.2)
	same := resultsFile(t, 20, 130, 131, 129, 130.5, 130.2)
	if code, out, _ := h("gate", slow, "--base-branch", "main", "--max-regression", "50", "--on-change-point"); code != exitCheckFailed {
		t.Errorf("gate --on-change-point a run that starts a slowdown: exit %d:\n%s", code, out)
	}
	if code, out, errs := h("gate", same, "--base-branch", "main", "--max-regression", "50", "--on-change-point"); code != 0 {
		t.Errorf("gate --on-change-point an unchanged rerun: exit %d:\n%s%s", code, out, errs)
	}
	if code, out, errs := h("ack", cps[0].Run[:10], "--study", "gated", "--series", key, "--as", "expected", "--note", "new codec"); code != 0 || !strings.Contains(out, "acknowledged: expected (new codec)") {
		t.Errorf("ack: exit %d: %s%s", code, out, errs)
	}
	if _, js, _ := h("changes", "--format", "json", "--open"); strings.TrimSpace(js) != "[]" {
		t.Errorf("changes --open after the ack: %s", js)
	}
	for _, bad := range [][]string{
		{"changes", "--format", "pdf"}, {"changes", "--since", "soon"}, {"changes", "--series", "lat"},
		{"ack", "zz", "--study", "gated", "--series", key, "--as", "fine"}, {"ack", "zz", "--study", "gated", "--series", key, "--as", "expected"},
	} {
		if code, _, errs := h(bad...); code != exitBadInput || errs == "" {
			t.Errorf("history %v: exit %d (%s); want 2 and a reason", bad, code, errs)
		}
	}
}
