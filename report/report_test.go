package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/internal/golden"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
)

func fixture(t *testing.T) *results.Results {
	t.Helper()
	r, err := results.Read("testdata/results.json")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGolden(t *testing.T) {
	r := fixture(t)
	for _, c := range []struct {
		file   string
		render func(*bytes.Buffer, *results.Results) error
	}{
		{"testdata/report.txt", func(b *bytes.Buffer, r *results.Results) error { return Text(b, r) }},
		{"testdata/report.md", func(b *bytes.Buffer, r *results.Results) error { return Markdown(b, r) }},
		{"testdata/report.html", func(b *bytes.Buffer, r *results.Results) error { return HTML(b, r) }},
	} {
		var b bytes.Buffer
		if err := c.render(&b, r); err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		golden.Check(t, c.file, b.Bytes())
	}
}

// An indistinguishable pair never shows a percentage or a ratio, in any
// format: nothing after the word on its row reads "1.05×", "x1.05", "5 %".
func TestIndistinguishableHasNoNumber(t *testing.T) {
	r := fixture(t)
	number := regexp.MustCompile(`\d\s*(%|×|x\b)|[×x]\s*\d`)
	for _, f := range []struct {
		name   string
		render func(*bytes.Buffer, *results.Results) error
		rows   *regexp.Regexp
	}{
		{"text", func(b *bytes.Buffer, r *results.Results) error { return Text(b, r) }, regexp.MustCompile("\n")},
		{"md", func(b *bytes.Buffer, r *results.Results) error { return Markdown(b, r) }, regexp.MustCompile("\n")},
		{"html", func(b *bytes.Buffer, r *results.Results) error { return HTML(b, r) }, regexp.MustCompile("</tr>|</li>")},
	} {
		var b bytes.Buffer
		if err := f.render(&b, r); err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, row := range f.rows.Split(b.String(), -1) {
			i := strings.Index(row, "are indistinguishable")
			if i < 0 {
				continue
			}
			seen++
			if rest := row[i:]; number.MatchString(rest) {
				t.Errorf("%s: an indistinguishable row shows a number: %q", f.name, rest)
			}
		}
		if seen == 0 {
			t.Errorf("%s: no indistinguishable row in the fixture to check", f.name)
		}
	}
	if !number.MatchString("are indistinguishable (1.05× )") || !number.MatchString("are indistinguishable, +5 %") {
		t.Error("the check misses the formats it is for")
	}
}

func TestHTMLEscapesHostileStrings(t *testing.T) {
	r := fixture(t)
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script>alert", "<img src=x", "</script><script>"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q unescaped", bad)
		}
	}
	// the page's own scripts run, each allowed by its hash; the data
	// blocks are JSON, which nothing runs
	csp := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(page)
	if csp == nil || !strings.Contains(html.UnescapeString(csp[1]), "default-src 'none'") {
		t.Fatalf("no policy that forbids by default: %v", csp)
	}
	policy := html.UnescapeString(csp[1])
	scripts := regexp.MustCompile(`(?s)<script( type="application/json" id="[a-z-]+")?>(.*?)</script>`).FindAllStringSubmatch(page, -1)
	run := 0
	for _, s := range scripts {
		if s[1] != "" {
			continue
		}
		run++
		sum := sha256.Sum256([]byte(s[2]))
		if h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(policy, h) {
			t.Errorf("a script whose hash %s the policy does not allow", h)
		}
	}
	if n := strings.Count(page, "<script"); n != len(scripts) || run != 2 || !strings.Contains(page, `<script type="application/json" id="tandem-results">`) {
		t.Errorf("page has %d script elements, %d that run; want the two data blocks, uPlot and the page's script", n, run)
	}
	if !strings.Contains(page, "&lt;script&gt;alert") {
		t.Error("hostile study name not shown as text")
	}
}

func TestTextColor(t *testing.T) {
	res, err := results.Read("testdata/results.json")
	if err != nil {
		t.Fatal(err)
	}
	var plain, color strings.Builder
	if err := Text(&plain, res); err != nil {
		t.Fatal(err)
	}
	if err := TextColor(&color, res); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("the plain report has escape codes")
	}
	for _, want := range []string{red + "SATURATED" + reset, dim} {
		if !strings.Contains(color.String(), want) {
			t.Errorf("the colour report lacks %q", want)
		}
	}
	strip := regexp.MustCompile("\x1b\\[[0-9;]*m")
	if strip.ReplaceAllString(color.String(), "") != plain.String() {
		t.Error("colour changed more than the colours")
	}
}

// A long table value shows its start and opens to the whole; markup in it
// stays text either way.
func TestLongCellOpens(t *testing.T) {
	short := `<b>` + strings.Repeat("x", 20)
	if got := string(cell(short)); got != "&lt;b&gt;"+strings.Repeat("x", 20) {
		t.Errorf("a short value: %q", got)
	}
	long := `<script>` + strings.Repeat("é", 300)
	got := string(cell(long))
	if !strings.HasPrefix(got, `<div class="long"><details><summary>&lt;script&gt;`) || !strings.Contains(got, "…</summary><div>&lt;script&gt;"+strings.Repeat("é", 300)+"</div></details>") {
		t.Errorf("a long value: %.200q…", got)
	}
	// a long run without a space may break anywhere; words and numbers may not
	if got := string(cell("a140bbc5093916e01e93126ec5f80233")); got != `<div class="long">a140bbc5093916e01e93126ec5f80233</div>` {
		t.Errorf("a hash: %q", got)
	}
	if got := string(cell("5,067/s [5,027/s … 4,454/s]")); got != "5,067/s [5,027/s … 4,454/s]" {
		t.Errorf("a spread: %q", got)
	}
}

// TestMachineLineNamesTheFleet: a run whose loops ran on workers says so
// where the machine is named (text, Markdown, the page); one that did not
// says nothing of it.
func TestMachineLineNamesTheFleet(t *testing.T) {
	r := &results.Results{Scenarios: []results.Scenario{{Name: "s", Rounds: []results.Round{
		{Round: 1, Target: "a", Sample: results.Sample{Fleet: &results.Fleet{NATS: "embedded", StartSkewNs: 700_000,
			Workers: []results.FleetWorker{{ID: "w1"}, {ID: "w2"}}}}},
		{Round: 1, Target: "b", Sample: results.Sample{Fleet: &results.Fleet{NATS: "embedded", StartSkewNs: 1_200_000,
			Workers: []results.FleetWorker{{ID: "w1"}, {ID: "w2"}}}}},
	}}}}
	if got := machineLine(r); !strings.Contains(got, "the loops ran on 2 workers over embedded NATS (2 rounds, started within 1.2ms") {
		t.Errorf("machine line %q", got)
	}
	r.Scenarios[0].Rounds[0].Fleet, r.Scenarios[0].Rounds[1].Fleet = nil, nil
	if got := machineLine(r); strings.Contains(got, "workers") {
		t.Errorf("a run on one machine: %q", got)
	}
}

// A scenario with values says so under its table, with the digest that
// fingerprints the sequence every target got, in every format.
func TestScenarioValuesNote(t *testing.T) {
	r := fixture(t)
	r.Scenarios[0].Values = &results.ValuesDigest{Requests: 3000, SHA256: strings.Repeat("ab", 32)}
	for name, render := range map[string]func(io.Writer, *results.Results) error{"text": Text, "md": Markdown, "html": HTML} {
		var b bytes.Buffer
		if err := render(&b, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "per-request values, the same sequence to every target (sha256 abababababab… over 3000 requests)") {
			t.Errorf("%s: the scenario's values are not noted", name)
		}
	}
}

func TestDiskCell(t *testing.T) {
	for _, tc := range []struct {
		allocated, apparent int64
		want                string
	}{
		{62 << 20, 138 << 20, "62.0 MiB (138 MiB apparent)"},
		{62 << 20, 0, "62.0 MiB"},
		{62 << 20, 65 << 20, "62.0 MiB"},
		{100 << 20, 50 << 20, "100 MiB (50.0 MiB apparent)"},
	} {
		s := results.Startup{DiskBytes: tc.allocated, DiskApparentBytes: tc.apparent}
		if got := diskCell(human.Bytes(tc.allocated), s); got != tc.want {
			t.Errorf("diskCell(%d, %d) = %q, want %q", tc.allocated, tc.apparent, got, tc.want)
		}
	}
}
