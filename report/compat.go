package report

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/tandem-bench/tandem/results"
)

// Difference rows shown: terminal and Markdown keep it short, the page
// shows (nearly) all; results.json has everything.
const (
	shortDiffRows = 40
	htmlDiffRows  = 2000
)

// compatTally counts the candidates' answers as the Compatibility table
// classes them, so that every summary of a compat run says what its table
// shows.
type compatTally struct {
	answers, identical, content, status, errs, both int
	oracleOK, oracleFailed                          int
	// bothBy counts the answers that failed alike by status.
	bothBy map[string]int
}

// tallyCompat sums the matrix's rows.
func tallyCompat(c *results.Compat) compatTally {
	t := compatTally{bothBy: map[string]int{}}
	for _, row := range c.Matrix {
		for k, n := range row.Counts {
			switch k {
			case results.AgreementIdentical:
				t.identical += n
			case results.AgreementContent:
				t.content += n
			case results.AgreementStatus:
				t.status += n
			case results.AgreementError:
				t.errs += n
			case "oracle ok":
				t.oracleOK += n
				continue
			case "oracle failed":
				t.oracleFailed += n
				continue
			default:
				code, ok := strings.CutPrefix(k, results.AgreementBoth)
				if !ok {
					continue
				}
				t.both += n
				t.bothBy[code] += n
			}
			t.answers += n
		}
	}
	return t
}

// differ counts the answers that depart from the reference's: content or
// status differs, or both failed with different errors.
func (t compatTally) differ() int { return t.content + t.status + t.errs }

// words says the tally as the table's columns do: "7 identical, 3 differ
// (content 2, status 1), 1 error differs, 1 both failed alike (http:400
// 1)"; oracle checks that fail are said last.
func (t compatTally) words() string {
	parts := []string{fmt.Sprintf("%d identical", t.identical)}
	d := fmt.Sprintf("%d differ", t.content+t.status)
	var how []string
	if t.content > 0 {
		how = append(how, fmt.Sprintf("content %d", t.content))
	}
	if t.status > 0 {
		how = append(how, fmt.Sprintf("status %d", t.status))
	}
	if len(how) > 0 {
		d += " (" + strings.Join(how, ", ") + ")"
	}
	parts = append(parts, d)
	if t.errs > 0 {
		parts = append(parts, fmt.Sprintf("%d error differs", t.errs))
	}
	if t.both > 0 {
		parts = append(parts, fmt.Sprintf("%d both failed alike (%s)", t.both, t.bothKinds()))
	}
	if t.oracleFailed > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d oracle checks fail", t.oracleFailed, t.oracleOK+t.oracleFailed))
	}
	return strings.Join(parts, ", ")
}

// bothKinds lists the statuses of the answers that failed alike: "1
// grpc:NOT_FOUND, 2 http:400".
func (t compatTally) bothKinds() string {
	var out []string
	for code, n := range t.bothBy {
		out = append(out, fmt.Sprintf("%d %s", n, code))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// compatTables shows the differential tests: agreement per call and
// target, then every difference with both values.
func compatTables(c *results.Compat, diffRows int) []table {
	sent := 0
	for _, cs := range c.Cases {
		if len(cs.Answers) > 0 {
			sent++
		}
	}
	note := fmt.Sprintf("%d cases, reference %s; %s; %d in equal mode disagree", len(c.Cases), c.Reference, tallyCompat(c).words(), c.Failed)
	if n := len(c.Cases) - sent; n > 0 {
		note += fmt.Sprintf("; %d not sent (a value the request cannot carry, or a capture with no value; results.json says which)", n)
	}
	if c.Noise != "" {
		note += "; noise from " + map[bool]string{true: "asking the reference twice", false: "instance " + c.Noise}[c.Noise == "again"]
	}
	m := table{Title: "Compatibility", Note: note,
		Header: []string{"call", "target", "identical", "content differs", "status differs", "error differs", "both failed alike", "oracle"}}
	for _, row := range c.Matrix {
		both := tallyCompat(&results.Compat{Matrix: []results.MatrixRow{row}})
		bothCell := count(both.both)
		if both.both > 0 {
			bothCell += " (" + both.bothKinds() + ")"
		}
		oracle := "–"
		if ok, bad := row.Counts["oracle ok"], row.Counts["oracle failed"]; ok+bad > 0 {
			oracle = fmt.Sprintf("%d of %d checks hold", ok, ok+bad)
		}
		m.Rows = append(m.Rows, []string{row.Call, row.Target, count(row.Counts[results.AgreementIdentical]), count(row.Counts[results.AgreementContent]),
			count(row.Counts[results.AgreementStatus]), count(row.Counts[results.AgreementError]), bothCell, oracle})
	}
	ts := []table{m}
	d := differenceTable("Compatibility: differences", c.Cases, func(cs results.Case) []results.Difference {
		out := cs.Differences
		if o := cs.Oracle; o != nil {
			for _, ch := range o.Checks {
				if !ch.OK {
					out = append(out[:len(out):len(out)], results.Difference{Target: ch.Target, Path: ch.Path,
						Kind: "oracle " + o.Name + ": " + ch.Rule + " " + ch.OraclePath, Reference: ch.OracleValue, Value: ch.Value})
				}
			}
		}
		return out
	}, diffRows)
	if len(d.Rows) > 0 {
		ts = append(ts, d)
	}
	noise := differenceTable("Compatibility: noise", c.Cases, func(cs results.Case) []results.Difference { return cs.Noise }, diffRows)
	if len(noise.Rows) > 0 {
		noise.Note = "fields that differ between identical builds, not held against the candidates; " + noise.Note
		ts = append(ts, noise)
	}
	return ts
}

// differenceTable groups differences by call, target, field (indexes
// made [*]) and kind, with how many cases show each and a first example.
func differenceTable(title string, cases []results.Case, diffs func(results.Case) []results.Difference, rows int) table {
	type key struct{ call, target, field, kind string }
	type group struct {
		cases   int
		example []string
	}
	groups := map[key]*group{}
	var order []key
	for _, cs := range cases {
		seen := map[key]bool{}
		for _, df := range diffs(cs) {
			field := indexes.ReplaceAllString(df.Path, "[*]")
			switch {
			case df.Kind == "status":
				field = "(status)"
			case field == "":
				field = "(whole answer)"
			}
			call := cs.Call
			if cs.Mode == "report" {
				call += " (report only)"
			}
			k := key{call, df.Target, field, df.Kind}
			g := groups[k]
			if g == nil {
				g = &group{example: []string{caseName(cs), df.Path, df.Reference, df.Value}}
				groups[k] = g
				order = append(order, k)
			}
			if !seen[k] {
				seen[k] = true
				g.cases++
			}
		}
	}
	t := table{Title: title, Header: []string{"call", "target", "field", "kind", "cases", "first case", "reference", "value"}}
	for _, k := range order {
		if len(t.Rows) == rows {
			t.Note = fmt.Sprintf("the first %d of %d kinds of difference; results.json has every one", rows, len(order))
			break
		}
		g := groups[k]
		ex := g.example[0]
		if g.example[1] != "" && g.example[1] != k.field {
			ex += " at " + g.example[1]
		}
		t.Rows = append(t.Rows, []string{k.call, k.target, k.field, k.kind, fmt.Sprint(g.cases), ex, g.example[2], g.example[3]})
	}
	if t.Note == "" && len(order) > 0 {
		t.Note = "grouped by field; each row's values are from its first case"
	}
	return t
}

var indexes = regexp.MustCompile(`\[\d+\]`)

func count(n int) string {
	if n == 0 {
		return "–"
	}
	return fmt.Sprint(n)
}

// caseName shows which case it is: a recorded case's file and exchange
// (FILE#N, N from 0), a listed case's variables.
func caseName(cs results.Case) string {
	if r := cs.Recording; r != nil {
		return fmt.Sprintf("%s#%d", r.File, r.Exchange)
	}
	return vars(cs.Vars)
}

// vars shows a case's variables as name=value, names in order.
func vars(v map[string]any) string {
	names := make([]string, 0, len(v))
	for k := range v {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		parts = append(parts, k+"="+cut(fmt.Sprint(v[k]), 40))
	}
	return strings.Join(parts, " ")
}
