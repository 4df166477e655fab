package report

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/cost"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/verdict"
)

// Every command names its formats from the one list, in one order.
func TestFormatList(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		want string
	}{
		{ForResults, "text, md, html, csv, bench or hdr"},
		{ForSample, "text, md or json"},
		{ForComparison, "text, md, json or html"},
		{ForCost, "text or json"},
		{Kind(99), ""},
	} {
		if got := FormatList(c.kind); got != c.want {
			t.Errorf("FormatList(%d) = %q; want %q", c.kind, got, c.want)
		}
	}
	seen := map[string]bool{}
	for _, f := range Formats() {
		if seen[f.Name] {
			t.Errorf("format %s listed twice", f.Name)
		}
		seen[f.Name] = true
		if !f.Renders(ForResults) && !f.Renders(ForSample) && !f.Renders(ForComparison) && !f.Renders(ForCost) {
			t.Errorf("format %s renders nothing", f.Name)
		}
	}
}

func TestLookupFormat(t *testing.T) {
	for _, c := range []struct {
		name string
		kind Kind
		ok   bool
	}{
		{"text", ForResults, true},
		{"hdr", ForResults, true},
		{"json", ForResults, false},
		{"json", ForSample, true},
		{"html", ForSample, false},
		{"md", ForComparison, true},
		{"md", ForCost, false},
		{"pdf", ForResults, false},
		{"", ForSample, false},
	} {
		f, ok := LookupFormat(c.name, c.kind)
		if ok != c.ok || ok && (f.Name != c.name || !f.Renders(c.kind)) {
			t.Errorf("LookupFormat(%q, %d) = %q, %v; want %v", c.name, c.kind, f.Name, ok, c.ok)
		}
	}
}

// A load run's sample in each format: a run stopped early says so, and an
// unknown format is an error that names the right ones.
func TestSample(t *testing.T) {
	s := results.Sample{Requests: 10, OK: 9, Errors: map[string]int64{"timeout": 1}, DurationNs: 1_234_567_890, Unit: "request",
		LatencyNs: results.Distribution{P50: 1_000_000}}
	// an AMQP run cut short: 7 messages in flight, neither ok nor failed
	cut := results.Sample{Requests: 3, OK: 3, Unfinished: 7, Errors: map[string]int64{}, DurationNs: 1_000_000_000, Unit: "message"}
	for _, c := range []struct {
		format, stoppedBy string
		want              []string
		err               string
		sample            *results.Sample
	}{
		{"text", "SIGINT", []string{"requests      10 sent, 3 ok, 0 failed in 1s; 7 unfinished (sent, and neither ok nor failed when the run was cut short)\n",
			"errors        none\n"}, "", &cut},
		{"md", "SIGINT", []string{"| 10 | 3 | 0 | 1s |", "unfinished: 7 (sent,", "errors: none"}, "", &cut},
		{"json", "SIGINT", []string{`"requests": 3`, `"unfinished": 7`, `"errors": {}`}, "", &cut},
		{"text", "", []string{"requests      10 sent, 9 ok, 1 failed in 1.235s\n", "errors        timeout×1\n", "warning: w\n"}, "", nil},
		{"text", "SIGINT", []string{"INTERRUPTED: stopped by SIGINT after 1.235s; what follows is what was measured before.\n"}, "", nil},
		{"md", "", []string{"| 10 | 9 | 1 | 1.235s |", "| latency | 0ns | 0ns | 1ms |", "\n> warning: w\n"}, "", nil},
		{"md", "SIGTERM", []string{"> **INTERRUPTED**: stopped by SIGTERM after 1.235s"}, "", nil},
		{"json", "", []string{`"interrupted": false`, `"offered_rate": null`, `"p50": 1000000`}, "", nil},
		{"json", "SIGINT", []string{`"interrupted": true`}, "", nil},
		{"html", "", nil, `format "html": want text, md or json`, nil},
	} {
		if c.format == "json" && c.stoppedBy == "SIGINT" {
			// no warnings: a list all the same, for scripts to range over
			var b bytes.Buffer
			if err := Sample(&b, c.format, SampleRun{Sample: s}); err != nil || !strings.Contains(b.String(), `"warnings": []`) {
				t.Errorf("json without warnings (%v): want \"warnings\": [] in\n%s", err, b.String())
			}
		}
		in := s
		if c.sample != nil {
			in = *c.sample
		}
		var b bytes.Buffer
		err := Sample(&b, c.format, SampleRun{Sample: in, Warnings: []string{"w"}, StoppedBy: c.stoppedBy})
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: %v; want %q", c.format, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.format, err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s, stopped by %q: no %q in\n%s", c.format, c.stoppedBy, w, b.String())
			}
		}
		if c.stoppedBy == "" && strings.Contains(b.String(), "INTERRUPTED") {
			t.Errorf("%s: a complete run marked interrupted:\n%s", c.format, b.String())
		}
		if c.format == "json" && !json.Valid(b.Bytes()) {
			t.Errorf("json: not JSON:\n%s", b.String())
		}
	}
}

// A comparison in each format: the regression shows, an indistinguishable
// pair shows no number, and text from the results cannot reach a terminal
// as control characters.
func TestComparison(t *testing.T) {
	cmp := verdict.Comparison{
		Changes: []verdict.Change{
			{Scenario: "lat", Target: "a", Concurrency: 1, Ratio: 1.49, Change: 0.49, Verdict: stats.Slower, Regression: true},
			{Scenario: "lat", Target: "b\x1b[2J", Concurrency: 1, Verdict: stats.Indistinguishable},
			{Scenario: "lat", Target: "c", Concurrency: 1, Verdict: verdict.Missing, Reason: "measured in the base, not in the head", Regression: true},
		},
		Warnings: []string{"the machines differ"}, Regressions: 2, MaxRegression: 5, Policy: stats.DefaultPolicy(),
	}
	for _, c := range []struct {
		format string
		want   []string
	}{
		{"text", []string{"tandem compare: regression: 2 regressions (beyond 5 %", "warning: the machines differ\n", "lat a c=1 (errors 0.0 % → 0.0 %): slower (head/base 1.49×: 49.0 % worse)  REGRESSION\n",
			"lat b\\x1b[2J c=1 (errors 0.0 % → 0.0 %): indistinguishable\n", "lat c c=1 (errors –): missing: measured in the base, not in the head  REGRESSION\n"}},
		{"md", []string{"## tandem compare: **regression**: 2 regressions (beyond 5 %", "> warning: the machines differ\n",
			"| lat | a | c=1 | **slower (head/base 1.49×: 49.0 % worse), regression** | 1.49× | 0.0 % → 0.0 % |\n", "| lat | b\\x1b\\[2J | c=1 | indistinguishable | – | 0.0 % → 0.0 % |\n"}},
		{"json", []string{`"regression": true`, `"verdict": "slower"`, `"warnings": [`, `"policy": {`, `"family": {`}},
		{"html", []string{"regression: 2 regressions (beyond 5 %, failing, dropping, missing or changed): 1 regressed, 1 unchanged, 1 missing",
			`<li class="v-failing"><a href="#scenario-1">lat, a, c=1</a>: regressed: slower (head/base 1.49×: 49.0 % worse)</li>`,
			`<li class="v-indistinguishable"><a href="#scenario-1">lat, b\x1b[2J, c=1</a>: unchanged: indistinguishable</li>`,
			`<li class="v-withheld">the machines differ</li>`}},
	} {
		var b bytes.Buffer
		if err := Comparison(&b, c.format, cmp); err != nil {
			t.Fatalf("%s: %v", c.format, err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: no %q in\n%s", c.format, w, b.String())
			}
		}
		if strings.Contains(b.String(), "\x1b") {
			t.Errorf("%s: a control character reached the output", c.format)
		}
	}
	if err := Comparison(&bytes.Buffer{}, "csv", cmp); err == nil || !strings.Contains(err.Error(), "want text, md, json or html") {
		t.Errorf("csv comparison: %v", err)
	}
}

func TestCostFormats(t *testing.T) {
	rep := &cost.Report{Schema: cost.Schema, Costs: []cost.Cost{}}
	for _, name := range FormatNames(ForCost) {
		f, _ := LookupFormat(name, ForCost)
		var b bytes.Buffer
		if err := f.Cost(&b, rep); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if name == "json" && !json.Valid(b.Bytes()) {
			t.Errorf("json: not JSON:\n%s", b.String())
		}
	}
}

// WriteCostFile writes what the json format shows, and reads back as the
// report (a cost baseline).
func TestWriteCostFile(t *testing.T) {
	rep := &cost.Report{Schema: cost.Schema, Costs: []cost.Cost{{Name: "a\x01b", AllocationsPerOp: 2, Source: "go-bench"}}, Gates: []cost.Gate{}}
	path := filepath.Join(t.TempDir(), "cost.json")
	if err := WriteCostFile(path, rep); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := LookupFormat("json", ForCost)
	var want bytes.Buffer
	if err := js.Cost(&want, rep); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) || !bytes.Contains(got, []byte(`a\u0001b`)) {
		t.Errorf("file:\n%s\nwant the json format's:\n%s", got, want.Bytes())
	}
	base, err := cost.ReadBaseline(path)
	if err != nil || len(base.Costs) != 1 || base.Costs[0].Name != "a\x01b" {
		t.Errorf("read back: %+v, %v", base, err)
	}
	if err := WriteCostFile(filepath.Join(t.TempDir(), "none", "cost.json"), rep); err == nil {
		t.Error("a file in a directory that does not exist: no error")
	}
}

// A row that fails the gate only because it is inconclusive is undecided,
// in every format: never called a regression, and the outcome says
// undecided when nothing else fails.
func TestComparisonUndecided(t *testing.T) {
	undecided := verdict.Change{Scenario: "lat", Target: "a", Concurrency: 1, Verdict: stats.Inconclusive, Regression: true,
		Reason: "inconclusive: ratio 1.50× [0.798× … 2.99×] at 96.8 % confidence over 5 rounds a side"}
	slower := verdict.Change{Scenario: "lat", Target: "b", Concurrency: 1, Ratio: 1.49, Change: 0.49, Verdict: stats.Slower, Regression: true}
	for _, c := range []struct {
		name    string
		changes []verdict.Change
		want    map[string][]string
		never   []string
	}{
		{"undecided alone", []verdict.Change{undecided}, map[string][]string{
			"text": {"tandem compare: undecided: 1 undecided (inconclusive pairs fail the gate unless on-inconclusive is pass)\n", "  UNDECIDED (fails the gate)\n"},
			"md":   {"## tandem compare: **undecided**: 1 undecided", ", undecided: fails the gate** |"},
			"html": {"undecided: 1 undecided (inconclusive pairs fail the gate unless on-inconclusive is pass): 0 regressed, 0 unchanged, 1 inconclusive",
				`<li class="v-inconclusive"><a href="#scenario-1">lat, a, c=1</a>: inconclusive: ratio 1.50× [0.798× … 2.99×] at 96.8 % confidence over 5 rounds a side (undecided: fails the gate)</li>`},
		}, []string{"REGRESSION", "regression", "regressed: inconclusive"}},
		{"beside a regression", []verdict.Change{slower, undecided}, map[string][]string{
			"text": {"tandem compare: regression: 1 regressions (beyond 5 %, failing, dropping, missing or changed); 1 undecided (", "lat b c=1", "  REGRESSION\n", "  UNDECIDED (fails the gate)\n"},
			"md":   {"**regression**: 1 regressions", ", undecided: fails the gate** |", ", regression** |"},
			"html": {"1 regressed, 0 unchanged, 1 inconclusive", "(undecided: fails the gate)"},
		}, []string{"regressed: inconclusive"}},
	} {
		cmp := verdict.Comparison{Changes: c.changes, Regressions: len(c.changes), MaxRegression: 5, Policy: stats.DefaultPolicy()}
		for format, wants := range c.want {
			var b bytes.Buffer
			if err := Comparison(&b, format, cmp); err != nil {
				t.Fatal(err)
			}
			out := html.UnescapeString(b.String())
			for _, w := range wants {
				if !strings.Contains(out, w) {
					t.Errorf("%s, %s: no %q in\n%s", c.name, format, w, out)
				}
			}
			for _, n := range c.never {
				if strings.Contains(out, n) {
					t.Errorf("%s, %s: %q in\n%s", c.name, format, n, out)
				}
			}
		}
	}
}

// Costs writes the report in its format to w and the json to the file;
// an unknown format writes nothing anywhere.
func TestCosts(t *testing.T) {
	rep := &cost.Report{Schema: cost.Schema, Costs: []cost.Cost{{Name: "decode", AllocationsPerOp: 2, Source: "go-bench"}}, Gates: []cost.Gate{}}
	path := filepath.Join(t.TempDir(), "cost.json")
	var text bytes.Buffer
	if err := Costs(&text, "text", rep, path); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "decode") {
		t.Errorf("text: %q", text.String())
	}
	if _, err := cost.ReadBaseline(path); err != nil {
		t.Errorf("the file: %v", err)
	}
	var w bytes.Buffer
	other := filepath.Join(t.TempDir(), "other.json")
	if err := Costs(&w, "yaml", rep, other); err == nil || w.Len() > 0 {
		t.Errorf("format yaml: %v, wrote %q", err, w.String())
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("format yaml: the file was written")
	}
}
