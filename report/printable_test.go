package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tandem-bench/tandem/cost"
	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/verdict"
)

// hostileEnd ends every string of a hostile results file: what would retitle
// a window, clear the screen, return the carriage or start a C1 control
// sequence, and lines that forge a benchmark and an HDR log's start time.
const hostileEnd = "\x1b]0;title\x07\x1b[2J\rreturn\u009b1m\x7f\u2028\nBenchmarkForged\t1\t1 ns/op\n#[StartTime: 99999999999999 (seconds since epoch), forged]\n"

// poison makes every string in v (fields, slice elements, map keys and
// values) start with "=" (a spreadsheet formula) and end with hostileEnd. With
// all set it also fills empty strings; without, it leaves empty strings
// (an error that is not there) and the fields named in keep (which choose
// how a round is read and drawn) alone, so every part of the report is
// still drawn.
func poison(v reflect.Value, all bool, keep map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			poison(v.Elem(), all, keep)
		}
	case reflect.String:
		if v.CanSet() && (all || v.String() != "") {
			v.SetString("=" + v.String() + hostileEnd)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && (all || !keep[f.Name]) {
				poison(v.Field(i), all, keep)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			poison(v.Index(i), all, keep)
		}
	case reflect.Map:
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			k.Set(it.Key())
			e.Set(it.Value())
			if e.Kind() == reflect.Interface && !e.IsNil() { // an interface's string cannot be set in place
				x := reflect.New(e.Elem().Type()).Elem()
				x.Set(e.Elem())
				poison(x, all, keep)
				e.Set(x)
			}
			poison(k, all, keep)
			poison(e, all, keep)
			m.SetMapIndex(k, e)
		}
		if v.CanSet() {
			v.Set(m)
		}
	}
}

// keep are the fields a report reads as kinds, not shown as given text.
var keep = map[string]bool{"Schema": true, "Direction": true, "Model": true, "Metric": true, "HDR": true, "Series": true,
	"Load": true, "Confirm": true, "Mode": true, "Agreement": true, "Kind": true, "Source": true, "Counts": true,
	"Derived": true, "Verdict": true, "Unit": true, "Action": true, "Status": true}

// unsafeAt is the byte offset of the first character in s that could move
// a terminal's cursor or title (a control character other than newline
// and tab, DEL, the C1 set, a line or paragraph separator), or -1.
func unsafeAt(s string) int {
	return strings.IndexFunc(s, func(r rune) bool {
		return r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0 || r == '\u2028' || r == '\u2029' || r == utf8.RuneError
	})
}

// Hostile strings in a results file (from a study, a target's output, a
// server's answers, or a file written by someone else) reach no output of
// tandem report as control characters, in any of its formats, and each
// export stays readable by its own readers: the CSV parses into its rows
// with no cell a spreadsheet would run as a formula, the HDR log's
// histograms all read back and its start time is not forged, and no
// benchmark line is forged.
func TestReportsCarryNoControlCharacters(t *testing.T) {
	formats := []struct {
		name   string
		render func(*bytes.Buffer, *results.Results) error
	}{{"text in colour", func(b *bytes.Buffer, r *results.Results) error { return TextColor(b, r) }}}
	for _, f := range Formats() {
		if f.Renders(ForResults) {
			formats = append(formats, struct {
				name   string
				render func(*bytes.Buffer, *results.Results) error
			}{f.Name, func(b *bytes.Buffer, r *results.Results) error { return f.Results(b, r) }})
		}
	}
	if len(formats) < 7 {
		t.Fatalf("%d formats render results; want text, md, html, csv, bench, hdr and text in colour", len(formats))
	}
	for i, js := range append([]string{pageCSS}, pageScripts...) {
		if j := unsafeAt(js); j >= 0 { // the page passes through human.Printable: its own would change, and the scripts' hashes break
			t.Errorf("the page's style or script %d has a control character at byte %d", i, j)
		}
	}
	colours := strings.NewReplacer(red, "", green, "", yellow, "", dim, "", reset, "")
	for _, file := range []string{"testdata/results.json", "testdata/demo-results.json", "testdata/perturbed-results.json"} {
		for _, all := range []bool{false, true} {
			r := everyPart(t, file)
			poison(reflect.ValueOf(r), all, keep)
			for _, f := range formats {
				var b bytes.Buffer
				if err := f.render(&b, r); err != nil {
					t.Fatalf("%s, %s (all %v): %v", file, f.name, all, err)
				}
				out := b.String()
				if f.name == "text in colour" {
					out = colours.Replace(out) // tandem's own colours
				}
				if i := unsafeAt(out); i >= 0 {
					t.Errorf("%s, %s (all %v): a control character at byte %d: %q", file, f.name, all, i, out[max(0, i-30):min(len(out), i+30)])
				}
				if !all {
					checkExport(t, file+", "+f.name, f.name, out, r, everyPart(t, file))
				}
			}
		}
	}
}

// The other commands' outputs (tandem load's sample, tandem compare's
// comparison, tandem cost's counts), in each of their formats, carry no
// control characters either; their JSON stays valid and holds the strings
// as given.
func TestOutputsCarryNoControlCharacters(t *testing.T) {
	s := results.Sample{Requests: 10, OK: 9, Errors: map[string]int64{"timeout": 1}, DurationNs: 1e9, Unit: "request", Engine: "loop"}
	cmp := verdict.Comparison{Changes: []verdict.Change{{Scenario: "lat", Target: "a", Concurrency: 1, Ratio: 1.49, Change: 0.49, Verdict: stats.Slower, Regression: true},
		{Scenario: "lat", Target: "c", Concurrency: 1, Verdict: verdict.Missing, Reason: "measured in the base only", Regression: true}},
		Warnings: []string{"the machines differ"}, Regressions: 2, MaxRegression: 5, Policy: stats.DefaultPolicy()}
	rep := cost.Report{Schema: cost.Schema, Valgrind: "valgrind-3.22", Flags: []string{"--tool=callgrind"},
		Costs: []cost.Cost{{Name: "decode", Ops: 100, InstructionsPerOp: 10, Inexact: []string{"instructions"}, Source: "valgrind"}},
		Gates: []cost.Gate{{Cost: "decode", Check: "instructions_per_op against the baseline", Message: "decode: 10 instructions per op"}}}
	s.Parts = []results.Sample{{Requests: 9, OK: 8, Errors: map[string]int64{"timeout": 1}, Unit: "request"}, {Requests: 1, OK: 1, Unit: "request"}}
	warnings, parts := []string{"w"}, []string{"get", "put"}
	for _, v := range []any{&s, &cmp, &rep, &warnings, &parts} {
		poison(reflect.ValueOf(v), true, nil)
	}
	for _, f := range Formats() {
		var outs []struct {
			kind string
			b    bytes.Buffer
			err  error
			back any
		}
		add := func(kind string, back any, render func(*bytes.Buffer) error) {
			outs = append(outs, struct {
				kind string
				b    bytes.Buffer
				err  error
				back any
			}{kind: kind, back: back})
			o := &outs[len(outs)-1]
			o.err = render(&o.b)
		}
		if f.Sample != nil {
			add("sample", &results.Sample{}, func(b *bytes.Buffer) error {
				return f.Sample(b, SampleRun{Sample: s, Parts: parts, Warnings: warnings, StoppedBy: "SIGINT"})
			})
		}
		if f.Comparison != nil {
			add("comparison", nil, func(b *bytes.Buffer) error { return f.Comparison(b, cmp) })
		}
		if f.Cost != nil {
			add("cost", &cost.Report{}, func(b *bytes.Buffer) error { return f.Cost(b, &rep) })
		}
		for _, o := range outs {
			out := o.b.String()
			if o.err != nil {
				t.Fatalf("%s %s: %v", f.Name, o.kind, o.err)
			}
			if i := unsafeAt(out); i >= 0 {
				t.Errorf("%s %s: a control character at byte %d: %q", f.Name, o.kind, i, out[max(0, i-30):min(len(out), i+30)])
			}
			if f.Name != "json" {
				continue
			}
			if !json.Valid(o.b.Bytes()) {
				t.Errorf("json %s: not JSON:\n%s", o.kind, out)
			}
			if o.back == nil {
				continue
			}
			if err := json.Unmarshal(o.b.Bytes(), o.back); err != nil {
				t.Errorf("json %s: %v", o.kind, err)
			}
			switch back := o.back.(type) {
			case *results.Sample:
				if back.Unit != s.Unit {
					t.Errorf("json sample: unit %q read back; want %q as given", back.Unit, s.Unit)
				}
			case *cost.Report:
				if len(back.Costs) != 1 || back.Costs[0].Name != rep.Costs[0].Name {
					t.Errorf("json cost: %+v read back; want the name %q as given", back.Costs, rep.Costs[0].Name)
				}
			}
		}
	}
}

// everyPart reads a results file and adds what it may lack so that every
// part of a report is drawn: a description, a warning, a failed target, a
// service, a cost, a finding, and a round whose histogram cannot be read
// (an HDR log names it in a comment).
func everyPart(t *testing.T, file string) *results.Results {
	t.Helper()
	r, err := results.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	r.Study.Description = "a study"
	r.Warnings = append(r.Warnings, "carriage")
	r.Targets[0].Error = "exited; last output:\n    red"
	r.Services = append(r.Services, results.Service{Name: "broker", Kind: "rabbitmq", Endpoints: map[string]string{"amqp": "amqp://127.0.0.1:5672"}, Error: "down"})
	r.Costs = append(r.Costs, results.Cost{Name: "op", Ops: 100, InstructionsPerOp: 10, Exact: true, Source: "valgrind", Error: "gone"})
	r.Findings = append(r.Findings, results.Finding{ID: "leak", Target: r.Targets[0].Name, Summary: "grew", Evidence: map[string]string{"rss": "up"}})
	r.Scenarios[0].Rounds[0].HDR = "not a histogram"
	return r
}

// checkExport checks that an export still reads as its format and shows
// the hostile strings escaped; clean is the same results without them.
func checkExport(t *testing.T, what, format, out string, r, clean *results.Results) {
	t.Helper()
	switch format {
	case "text", "text in colour", "md", "html":
		if !strings.Contains(out, `\x1b]0;title\x07`) {
			t.Errorf("%s: the hostile strings are not shown escaped", what)
		}
	case "csv":
		checkCSV(t, what, out, r)
	case "bench":
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			key, _, _ := strings.Cut(line, ":")
			if !strings.HasPrefix(line, "Benchmark") && key != "goos" && key != "goarch" && key != "pkg" && key != "cpu" ||
				strings.HasPrefix(line, "BenchmarkForged") {
				t.Errorf("%s: a line that is no header and no benchmark of the run: %q", what, line)
				break
			}
		}
		if !strings.Contains(out, `cpu: =`) || !strings.Contains(out, `\x1b]0;title\x07`) {
			t.Errorf("%s: the CPU model is not shown escaped", what)
		}
	case "hdr":
		var b bytes.Buffer
		if err := HDRLog(&b, clean); err != nil {
			t.Fatal(err)
		}
		checkHDR(t, what, out, r, firstStartMs(t, b.String()))
	}
}

// checkCSV checks that the CSV parses into a header and a row per round
// and sweep cell, that the text cells read back as given (made printable,
// a formula's start quoted), and that no cell starts a formula.
func checkCSV(t *testing.T, what, out string, r *results.Results) {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	want := 1
	for _, sc := range r.Scenarios {
		want += len(sc.Rounds)
	}
	for _, sw := range r.Sweeps {
		want += len(sw.Cells)
	}
	if err != nil || len(rows) != want {
		t.Fatalf("%s: %v, %d rows; want %d", what, err, len(rows), want)
	}
	names := map[string]bool{}
	for _, sc := range r.Scenarios {
		names["'"+human.Printable(sc.Name)] = true
	}
	for _, sw := range r.Sweeps {
		names["'"+human.Printable(sw.Scenario)] = true
	}
	var formulas, misnamed []string
	for _, row := range rows[1:] {
		if !names[row[0]] {
			misnamed = append(misnamed, row[0])
		}
		for _, c := range row {
			if _, err := strconv.ParseFloat(c, 64); err != nil && c != "" && strings.ContainsAny(c[:1], "=+-@\t\r") {
				formulas = append(formulas, c)
			}
		}
	}
	if len(misnamed) > 0 {
		t.Errorf("%s: %d scenario cells are none of the scenarios' names as given, such as %q", what, len(misnamed), misnamed[0])
	}
	if len(formulas) > 0 {
		t.Errorf("%s: %d cells a spreadsheet would run as formulas, such as %q", what, len(formulas), formulas[0])
	}
}

// firstStartMs is the start of the first interval of an HDR log as its
// reader reads it (-1 if the log has none).
func firstStartMs(t *testing.T, log string) int64 {
	t.Helper()
	h, err := hdrhistogram.NewHistogramLogReader(strings.NewReader(log)).NextIntervalHistogram()
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		return -1
	}
	return h.StartTimeMs()
}

// checkHDR checks that every round's histogram reads back from the log
// and its intervals start where they would without the hostile strings
// (startMs): no comment forged the log's start time.
func checkHDR(t *testing.T, what, out string, r *results.Results, startMs int64) {
	t.Helper()
	lr := hdrhistogram.NewHistogramLogReader(strings.NewReader(out))
	n, want := 0, 0
	for _, sc := range r.Scenarios {
		for _, rd := range sc.Rounds {
			if _, err := hdr.Decode(rd.HDR); rd.HDR != "" && err == nil {
				want++
			}
		}
	}
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if h == nil {
			break
		}
		if n == 0 && h.StartTimeMs() != startMs {
			t.Errorf("%s: the first interval starts at %d ms; want %d, as without the hostile strings: a forged start time moved it", what, h.StartTimeMs(), startMs)
		}
		n++
	}
	if n != want {
		t.Errorf("%s: %d histograms read back; want %d", what, n, want)
	}
	if !strings.Contains(out, `\x1b]0;title\x07`) {
		t.Errorf("%s: the study's name is not shown escaped", what)
	}
}
