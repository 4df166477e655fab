package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/results"
)

var page = template.Must(template.New("report").Funcs(template.FuncMap{"join": func(s []string) string { return strings.Join(s, " ") }}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>{{.R.Study.Name}} · tandem</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:1rem;color:#1b1b1b}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.15rem;margin:1.6rem 0 .4rem}
.note{color:#555;font-size:.9rem;margin:.2rem 0 .5rem}
.scroll{overflow-x:auto}table{border-collapse:collapse;min-width:60%}
th,td{text-align:left;padding:.3rem .7rem;border-bottom:1px solid #ddd;vertical-align:top}
th{background:#f3f3f3}td{font-variant-numeric:tabular-nums}td:nth-child(2){white-space:nowrap}
.warn{background:#fff4d6;padding:.5rem .8rem;border-left:4px solid #e0a800;margin:.5rem 0}
td.ev{word-break:break-all;font-family:monospace;font-size:.85rem}code{word-break:break-all}
.bad{background:#fde2e1;padding:.5rem .8rem;border-left:4px solid #c0392b}
footer{color:#666;font-size:.85rem;margin-top:2rem}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(22rem,1fr));gap:1rem}
figure{margin:0}figcaption{font-size:.85rem;color:#444}svg.chart{width:100%;height:auto}
@media print{body{max-width:none}.scroll{overflow:visible}.charts{display:block}figure{break-inside:avoid}}
</style>
</head>
<body>
<h1>{{.R.Study.Name}}</h1>
{{with .R.Study.Description}}<p>{{.}}</p>{{end}}
{{if .R.Interrupted}}<p class="bad">Interrupted: the run was cancelled; these are the measurements made before.</p>{{end}}
{{range .Tables}}<section>
<h2>{{.Title}}</h2>
{{with .Note}}<p class="note">{{.}}</p>{{end}}
<div class="scroll"><table>
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table></div>
</section>
{{end}}
{{with .Charts}}<section id="charts">
<h2>Charts</h2>
<div class="charts">{{range .}}<figure>{{.SVG}}<figcaption>{{.Title}}</figcaption></figure>
{{end}}</div>
</section>
{{end}}
{{range .R.Targets}}{{if .Error}}<div class="bad"><p>Target {{.Name}} failed:</p><pre>{{.Error}}</pre></div>{{end}}{{end}}
{{with .Findings}}<section id="findings">
<h2>Findings</h2>
{{range .}}<div class="warn"><p><b>{{.ID}}</b>{{with .Target}} on {{.}}{{end}}{{with .Scenario}} ({{.}}){{end}}: {{.Summary}}</p>
{{with .Evidence}}<div class="scroll"><table><thead><tr><th>evidence</th><th>value</th></tr></thead>
<tbody>{{range .}}<tr><td>{{.Key}}</td><td class="ev">{{.Value}}</td></tr>{{end}}</tbody></table></div>{{end}}</div>
{{end}}</section>
{{end}}
{{range .R.Warnings}}<p class="warn">{{.}}</p>{{end}}
<footer>
<p>Machine: {{.Machine}}</p>
<p>tandem {{.R.Tool.Version}} · study {{.R.Study.File}} · sha256 {{.R.Study.ConfigSHA256}} · seed {{.R.Study.Seed}} · {{.R.CreatedAt.Format "2006-01-02 15:04:05 UTC"}}</p>
{{with .R.Study.CommandLine}}<p>Reproduce: <code>{{join .}}</code></p>{{end}}
</footer>
{{.Data}}
</body>
</html>
`))

type evidence struct{ Key, Value string }

type finding struct {
	results.Finding
	Evidence []evidence
}

// findings orders each finding's evidence by name and shortens long values
// (histograms) for the page; results.json keeps them whole.
func findings(fs []results.Finding) []finding {
	var out []finding
	for _, f := range fs {
		x := finding{Finding: f}
		for _, k := range slices.Sorted(maps.Keys(f.Evidence)) {
			x.Evidence = append(x.Evidence, evidence{k, cut(f.Evidence[k], 160)})
		}
		out = append(out, x)
	}
	return out
}

// HTML writes one self-contained page: no script, no fetch, every string
// from the study, the targets or their answers escaped. The results are
// embedded as JSON for tools that read the page.
func HTML(w io.Writer, r *results.Results) error {
	data, err := json.Marshal(r) // escapes <, > and &, so it cannot end the element
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	return page.Execute(w, map[string]any{
		"R": r, "Tables": tables(r, htmlDiffRows), "Machine": machineLine(r), "Charts": charts(r), "Findings": findings(r.Findings),
		"Data": template.HTML(`<script type="application/json" id="tandem-results">` + string(data) + `</script>`),
	})
}
