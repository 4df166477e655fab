package history

import (
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/changepoint"
)

func TestParseAge(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"180d", 180 * 24 * time.Hour, false},
		{"1d", 24 * time.Hour, false},
		{"36h", 36 * time.Hour, false},
		{"90m", 90 * time.Minute, false},
		{"0d", 0, true},
		{"-1h", 0, true},
		{"soon", 0, true},
		{"", 0, true},
	} {
		got, err := ParseAge(c.in)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("ParseAge(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
		if err != nil && !strings.Contains(err.Error(), "--older-than") {
			t.Errorf("ParseAge(%q): %v; want the flag named", c.in, err)
		}
	}
}

func TestParseTags(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want map[string]string
		err  string
	}{
		{nil, map[string]string{}, ""},
		{[]string{"runner=ci", "a=b=c", "empty="}, map[string]string{"runner": "ci", "a": "b=c", "empty": ""}, ""},
		{[]string{"novalue"}, nil, `--tag "novalue": want key=value`},
		{[]string{"=v"}, nil, `--tag "=v": want key=value`},
	} {
		got, err := ParseTags(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("ParseTags(%q): %v; want %s", c.in, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("ParseTags(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("ParseTags(%q)[%q] = %q; want %q", c.in, k, got[k], v)
			}
		}
	}
}

// WriteChanges writes text lines, a Markdown table whose cells are
// escaped, or JSON ([] for none).
func TestWriteChanges(t *testing.T) {
	cp := ChangePoint{Study: "demo|x", Branch: "main", Series: Series{Scenario: "lat", Target: "a", Level: 1, Metric: "headline"},
		Run: "3f2a91c0aaaabbbbcccc", Commit: "c11", PrevRun: "8bd04e11", Kind: Regression, Ack: AckExpected, Note: "new | codec",
		Change: changepoint.Change{Ratio: 1.3, Lo: 1.25, Hi: 1.35, P: 0.001}}
	for _, c := range []struct {
		format string
		cps    []ChangePoint
		want   []string
	}{
		{"text", nil, []string{"no change points\n"}},
		{"text", []ChangePoint{cp}, []string{"demo|x on main: lat a c=1 headline: ×1.3 [1.25 … 1.35], a regression, from run 3f2a91c0aaaa (commit c11)"}},
		{"md", nil, []string{"| study | branch | series |", "|---|---|"}},
		{"md", []ChangePoint{cp}, []string{`| demo\|x | main | lat a c=1 headline | ×1.3 | 1.25 … 1.35 | regression | 3f2a91c0aaaa | –…c11 | 0.001 | expected new \| codec |`}},
		{"json", nil, []string{"[]\n"}},
		{"json", []ChangePoint{cp}, []string{`"study": "demo|x"`, `"kind": "regression"`, `"ack": "expected"`}},
	} {
		var b strings.Builder
		if err := WriteChanges(&b, c.format, c.cps); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s of %d change points: no %q in\n%s", c.format, len(c.cps), w, b.String())
			}
		}
	}
}

// Heading says a run's filing, a dash for what is not known.
func TestRunHeading(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	for _, c := range []struct {
		run  Run
		want string
	}{
		{Run{ID: "3f2a91c0aaaabbbb", AddedAt: at, Meta: Meta{Branch: "main", Commit: "c1", Dirty: true, Testbed: "ci"}},
			"run 3f2a91c0aaaa: branch main, commit c1 (dirty), testbed ci, added 2026-01-02 03:04 UTC\n\n"},
		{Run{ID: "3f2a", AddedAt: at}, "run 3f2a: branch –, commit –, testbed –, added 2026-01-02 03:04 UTC\n\n"},
	} {
		if got := c.run.Heading(); got != c.want {
			t.Errorf("Heading() = %q; want %q", got, c.want)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time
		err  string
	}{
		{"", time.Time{}, ""},
		{"720h", now.Add(-720 * time.Hour), ""},
		{"90m", now.Add(-90 * time.Minute), ""},
		{"30d", time.Time{}, `--since "30d": want a positive duration such as 720h`},
		{"-1h", time.Time{}, `--since "-1h": want a positive duration`},
		{"0s", time.Time{}, `--since "0s": want a positive duration`},
	} {
		got, err := ParseSince(c.in, now)
		if (c.err == "" && err != nil) || (c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err))) || !got.Equal(c.want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v, %q", c.in, got, err, c.want, c.err)
		}
	}
}
