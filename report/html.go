package report

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/internal/uplot"
	"github.com/tandem-bench/tandem/results"
)

//go:embed assets/page.html assets/page.css assets/page.js
var assets embed.FS

// page is the HTML report's template; pageCSS and pageScripts are inlined
// in every page, so it is one offline file.
var (
	page        = template.Must(template.New("page.html").Funcs(template.FuncMap{"cell": cell}).ParseFS(assets, "assets/page.html"))
	pageCSS     = uplot.CSS + "\n" + asset("assets/page.css")
	pageScripts = []string{uplot.JS, asset("assets/page.js")}
	// pageCSP allows the page's own scripts, by hash, and nothing else:
	// no request, no other script.
	pageCSP = csp(pageScripts)
)

// ContentSecurityPolicy is the policy of the pages HTML and the html
// comparison write (also their meta element): a server that serves them
// sends it as a header.
func ContentSecurityPolicy() string { return pageCSP }

func asset(name string) string {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time
	}
	return string(b)
}

func csp(scripts []string) string {
	var hashes []string
	for _, s := range scripts {
		sum := sha256.Sum256([]byte(s))
		hashes = append(hashes, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	}
	return "default-src 'none'; script-src " + strings.Join(hashes, " ") + "; style-src 'unsafe-inline'; img-src data:"
}

// longCell is the length past which a cell shows its start and the whole
// value on expand.
const longCell = 240

// cell renders a table cell: a long value cut, the whole on expand.
func cell(s string) template.HTML {
	var h string
	if utf8.RuneCountInString(s) <= longCell {
		h = template.HTMLEscapeString(s)
	} else {
		r := []rune(s)
		h = "<details><summary>" + template.HTMLEscapeString(string(r[:100])) + "…</summary><div>" +
			template.HTMLEscapeString(s) + "</div></details>"
	}
	if slices.ContainsFunc(strings.Fields(s), func(w string) bool { return utf8.RuneCountInString(w) > longWord }) {
		// a hash or a whole answer: it may break anywhere, so that its
		// column does not push the table past the page
		h = `<div class="long">` + h + `</div>`
	}
	return template.HTML(h)
}

// section is one part of the page: its tables, then its charts, then the
// tables behind them collapsed.
type section struct {
	ID, Title string
	Tables    []table
	Failures  []failure
	Figures   []figure
	More      *more
}

// more is a section's collapsed tables.
type more struct {
	Label  string
	Tables []table
}

// failure is a target's failure with its whole output.
type failure struct{ Name, Line, Text string }

// evidence is one item of a finding's evidence; a long one (a histogram)
// is offered as a download rather than printed.
type evidence struct {
	Key, Value, Size string
	Long             bool
}

type finding struct {
	results.Finding
	Anchor   string
	Evidence []evidence
}

// longEvidence is the length past which evidence is downloaded, not
// shown; a histogram (a key ending in hdr) always is.
const longEvidence = 160

// findings orders each finding's evidence by name; results.json keeps the
// long values, which the page offers as files.
func findings(fs []results.Finding) []finding {
	var out []finding
	for i, f := range fs {
		x := finding{Finding: f, Anchor: findingAnchor(i)}
		for _, k := range slices.Sorted(maps.Keys(f.Evidence)) {
			v := f.Evidence[k]
			e := evidence{Key: k, Value: human.Printable(v)}
			if len(v) > longEvidence || strings.HasSuffix(k, "hdr") {
				e.Long, e.Size = true, fmt.Sprintf("%s characters", human.Count(int64(len(v))))
			}
			x.Evidence = append(x.Evidence, e)
		}
		out = append(out, x)
	}
	return out
}

// swatch is a target and its colour on the page.
type swatch struct {
	Name  string
	Color int
}

// pageData is what the template draws.
type pageData struct {
	Title, Description string
	CSP                template.HTMLAttr
	CSS                template.CSS
	Download           bool
	Glance             *glance
	Targets            []swatch
	Sections           []section
	Findings           []finding
	Footer             []string
	Data, Scripts      template.HTML
}

func swatches(col colours) []swatch {
	var out []swatch
	for name, c := range col {
		out = append(out, swatch{name, c % 7})
	}
	slices.SortFunc(out, func(a, b swatch) int { return a.Color - b.Color })
	return out
}

// jsonScript embeds v for the page's script; json.Marshal escapes <, >
// and &, so no value can end the element, and printableJSON the control
// characters it leaves.
func jsonScript(id string, v any) (template.HTML, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", id, err)
	}
	return template.HTML(`<script type="application/json" id="` + id + `">` + printableJSON(string(b)) + "</script>\n"), nil
}

// printableJSON escapes, in encoded JSON, the characters human.Printable
// escapes that encoding/json writes as they are (DEL, the C1 set, U+FFFD)
// as \u escapes, which decode to the same strings. Outside its strings
// JSON has only ASCII, so none of them can be anything but a string's.
func printableJSON(js string) string {
	i := strings.IndexFunc(js, human.Unprintable)
	if i < 0 {
		return js
	}
	var b strings.Builder
	b.WriteString(js[:i])
	for _, r := range js[i:] {
		if human.Unprintable(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// render writes a page: the figures' data and the results (when given)
// embedded, then the scripts that draw them.
func render(w io.Writer, d pageData, res any) error {
	var figs []figure
	for _, s := range d.Sections {
		figs = append(figs, s.Figures...)
	}
	data, err := jsonScript("tandem-figures", figs)
	if err != nil {
		return err
	}
	if res != nil {
		// a run whose results cannot be encoded (a NaN a driver let
		// through) still gets its page, without the embedded copy
		if r, err := jsonScript("tandem-results", res); err == nil {
			data += r
			d.Download = true
		}
	}
	d.Data = data
	for _, s := range pageScripts {
		d.Scripts += template.HTML("<script>" + s + "</script>\n") // #nosec: the page's own scripts, allowed by hash
	}
	d.CSP, d.CSS = template.HTMLAttr(pageCSP), template.CSS(pageCSS)
	var b strings.Builder
	if err := page.ExecuteTemplate(&b, "page.html", d); err != nil {
		return err
	}
	// what html/template leaves as it is (ESC, CR, C1) shows as escapes,
	// as in every other format; the page's own scripts have none, so their
	// hashes hold
	_, err = io.WriteString(w, human.Printable(b.String()))
	return err
}

// HTML writes one self-contained page: the answer at a glance first, then
// each part of the run with its tables and charts. Every string from the
// study, the targets or their answers is escaped; the only scripts are
// the page's own (allowed by hash), and nothing is fetched. The results
// are embedded as JSON for tools that read the page and for the
// download button.
func HTML(w io.Writer, r *results.Results) error {
	col := targetColours(r)
	g := newGlance(r)
	d := pageData{Title: human.Printable(r.Study.Name), Description: r.Study.Description, Glance: &g, Targets: swatches(col),
		Findings: findings(r.Findings), Footer: footer(r)}
	d.Sections = sections(r, col)
	return render(w, d, r)
}

func footer(r *results.Results) []string {
	out := []string{"Machine: " + machineLine(r),
		fmt.Sprintf("tandem %s · study %s · sha256 %s · seed %d · %s", r.Tool.Version, r.Study.File, r.Study.ConfigSHA256, r.Study.Seed,
			r.CreatedAt.Format("2006-01-02 15:04:05 UTC"))}
	if len(r.Study.CommandLine) > 0 {
		out = append(out, "Reproduce: "+strings.Join(r.Study.CommandLine, " "))
	}
	return out
}

// sections lays the run out: setup, compatibility, each scenario, each
// sweep scenario, the scraped metrics, counted costs.
func sections(r *results.Results, col colours) []section {
	var out []section
	budget := maxFigures
	figs := func(fs []figure) []figure {
		if len(fs) > budget {
			fs = fs[:budget]
		}
		budget -= len(fs)
		return fs
	}
	setup := section{ID: "setup", Title: "Setup", Tables: printable(setupTables(r))}
	for _, t := range r.Targets {
		if t.Error != "" {
			setup.Failures = append(setup.Failures, failure{t.Name, firstLine(t.Error), t.Error})
		}
	}
	if len(setup.Tables) > 0 || len(setup.Failures) > 0 {
		out = append(out, setup)
	}
	if c := r.Compat; c != nil {
		ts := compatTables(c, htmlDiffRows)
		ts[0].Title = "Agreement per call and target"
		if len(ts) > 1 {
			ts[1].Title = "Differences"
		}
		out = append(out, section{ID: "compat", Title: "Compatibility", Tables: printable(ts)})
	}
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		t := scenarioTable(sc)
		s := section{ID: scenarioAnchor(i), Title: human.Printable(t.Title)}
		t.Title = ""
		s.Tables = printable([]table{t})
		if pt, ok := perturbationTable(sc); ok {
			s.Tables = append(s.Tables, printable([]table{pt})...)
		}
		s.Figures = figs(scenarioFigures(s.ID, sc, col))
		out = append(out, s)
	}
	for i, group := range sweepGroups(r.Sweeps) {
		s := section{ID: sweepAnchor(i), Title: "Sweep " + human.Printable(group[0].Scenario), Tables: printable(sweepTables(group))}
		s.Figures = figs(sweepFigures(s.ID, group[0].Scenario, group, col))
		out = append(out, s)
	}
	if mt := metricsTables(r.Targets); len(mt) > 0 {
		out = append(out, section{ID: "metrics", Title: "Scraped metrics", Figures: figs(metricFigures(r, col)),
			More: &more{Label: "Every series per target, with the figures derived over the run", Tables: printable(mt)}})
	}
	if ct := costTables(r.Costs); len(ct) > 0 {
		out = append(out, section{ID: "costs", Title: "Counted costs", Tables: printable(ct)})
	}
	return out
}
