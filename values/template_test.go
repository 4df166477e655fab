package values

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// constSet has one fixed value per name (a choice of one), so that what a
// template renders can be written out.
func constSet(t testing.TB) *Set {
	path := filepath.Join(t.TempDir(), "f.csv")
	writeFile(t, path, "id,note\n7,\"a, b\"\n")
	return open(t, 1, map[string]Spec{
		"s":    Choice{Values: []any{"a b/c?d&e=f#g%+é"}},
		"n":    Choice{Values: []any{int64(-42)}},
		"x":    Choice{Values: []any{1.5e21}},
		"q":    Choice{Values: []any{`say "hi"\` + "\n\x01\u2028"}},
		"nl":   Choice{Values: []any{"x\r\nInjected: 1"}},
		"list": Choice{Values: []any{[]any{int64(1), "x<y", nil, map[string]any{"k": true}}}},
		"b":    Bytes{N: 5},
		"h":    Hex{N: 6},
		"t":    Time{Format: UnixMS},
		"f":    File{Path: path, Format: CSV, Order: Sequential},
	})
}

// Each context writes a value its own way.
func TestCompileText(t *testing.T) {
	s := constSet(t)
	r := s.NewRenderer()
	b := string(s.gens["b"].value(r, 3, zeroTime).b)
	for _, c := range []struct {
		text string
		ctx  Context
		want string
	}{
		{"v=${s}, n=${n}, x=${x}", Text, "v=a b/c?d&e=f#g%+é, n=-42, x=1.5e+21"},
		{"${list}|${f.note}|${t}", Text, `[1,"x<y",null,{"k":true}]|a, b|1700000000123`},
		{"raw ${b}", Text, "raw " + b},
		{"$${s} stays, $$${s}", Text, "${s} stays, $${s}"},
		{"/items/${s}/${n}", URL, "/items/a%20b%2Fc%3Fd&e=f%23g%25+%C3%A9/-42"},
		{"/q?s=${s}&x=${x}&n=${n}&f=${f.note}", URL, "/q?s=a+b%2Fc%3Fd%26e%3Df%23g%25%2B%C3%A9&x=1.5e%2B21&n=-42&f=a%2C+b"},
		{"/p/${x}?b=${b}", URL, "/p/1.5e+21?b=" + url.QueryEscape(b)},
		{"/p/${list}", URL, "/p/" + url.PathEscape(`[1,"x<y",null,{"k":true}]`)},
		{"Bearer ${s} ${h} ${n} ${f.note}", Header, "Bearer a b/c?d&e=f#g%+é " + render(t, s, r, "${h}", Text, 3) + " -42 a, b"},
	} {
		tpl, err := s.Compile(c.text, c.ctx)
		if err != nil {
			t.Errorf("%q (%v): %v", c.text, c.ctx, err)
			continue
		}
		out, err := tpl.Append([]byte("<"), r, 3, time.UnixMilli(1700000000123))
		if err != nil || string(out) != "<"+c.want {
			t.Errorf("%q (%v):\n got %q (%v)\nwant %q", c.text, c.ctx, out, err, "<"+c.want)
		}
	}
}

// A JSON document: a string that is exactly a placeholder takes the
// value's type, bytes as base64; inside a longer string, the value's text,
// escaped; keys sorted, compact.
func TestCompileJSON(t *testing.T) {
	s := constSet(t)
	r := s.NewRenderer()
	b := base64.StdEncoding.EncodeToString(s.gens["b"].value(r, 0, zeroTime).b)
	doc := map[string]any{
		"n": "${n}", "x": "${x}", "s": "${s}", "q": "${q}", "list": "${list}", "b": "${b}", "id": "${f.id}",
		"in":    "n=${n}; q=${q}; list=${list}; b=${b}",
		"lit":   []any{nil, true, int64(3), 2.5, "$${n}", "plain \"quoted\""},
		"key\"": map[string]any{"z": int64(1), "a": "${h}"},
	}
	tpl, err := s.CompileJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tpl.Append(nil, r, 0, zeroTime)
	if err != nil {
		t.Fatal(err)
	}
	h := render(t, s, r, "${h}", Text, 0)
	want := `{"b":"` + b + `","id":"7",` +
		`"in":"n=-42; q=say \"hi\"\\\n\u0001\u2028; list=[1,\"x<y\",null,{\"k\":true}]; b=` + b + `",` +
		`"key\"":{"a":"` + h + `","z":1},"list":[1,"x<y",null,{"k":true}],"lit":[null,true,3,2.5,"${n}","plain \"quoted\""],` +
		`"n":-42,"q":"say \"hi\"\\\n\u0001\u2028","s":"a b/c?d&e=f#g%+é","x":1.5e+21}`
	if string(out) != want {
		t.Errorf("\n got %s\nwant %s", out, want)
	}
	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if back["q"] != "say \"hi\"\\\n\x01\u2028" || back["n"] != -42.0 {
		t.Errorf("decoded: q %q, n %v", back["q"], back["n"])
	}
	if got := tpl.Names(); strings.Join(got, " ") != "b f.id n q list h s x" {
		t.Errorf("names %q", got)
	}
}

// Mistakes are errors when compiled, saying what is wrong and what there is.
func TestCompileErrors(t *testing.T) {
	s := constSet(t)
	for _, c := range []struct {
		text string
		ctx  Context
		want string
	}{
		{"${nope}", Text, "unknown value ${nope} (the values: b, f.*, h, list, n, nl, q, s, t, x)"},
		{"${f}", Text, "${f} is a feeder: name one of its columns, as ${f.id}"},
		{"${f.nope}", URL, `${f.nope}: ` + s.list[0].path + ` has no column "nope" (its columns: id, note)`},
		{"${s.x}", Text, "${s.x}: s is a generator, not a feeder: it has no columns"},
		{"a ${s", Text, `unclosed placeholder in "${s"`},
		{"${}", Text, "empty placeholder ${}"},
		{"${b}", Header, "${b} is random bytes, which may hold CR or LF: an HTTP header cannot carry them (hex can)"},
		{"X: ${nl}", Header, "${nl}: choice 1 has a line break or another control character, which an HTTP header cannot carry"},
		{"${q}", Header, "${q}: choice 1 has a line break"},
		{"a\r\nX-Injected: ${n}", Header, `a header value with a line break or another control character in its text: "a\r\nX-Injected: "`},
		{"x", Context(9), "unknown context 9"},
	} {
		_, err := s.Compile(c.text, c.ctx)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q (%v): %v;\nwant %s", c.text, c.ctx, err, c.want)
		}
	}
	for _, doc := range []any{map[string]any{"a": []any{"${nope}"}}, struct{}{}, map[string]any{"f": math.NaN()}} {
		if _, err := s.CompileJSON(doc); err == nil {
			t.Errorf("%v compiles", doc)
		}
	}
}

// Names, UsesTime and Static describe a template; Placeholders lists a
// text's names.
func TestTemplateFacts(t *testing.T) {
	s := constSet(t)
	for _, c := range []struct {
		text   string
		names  string
		time   bool
		static bool
	}{
		{"no values, $${not}", "", false, true},
		{"${n}${s}${n}", "n s", false, false},
		{"${t} ${f.id}", "t f.id", true, false},
	} {
		tpl, err := s.Compile(c.text, Text)
		if err != nil {
			t.Fatal(err)
		}
		names, _ := Placeholders(c.text)
		if strings.Join(tpl.Names(), " ") != c.names || strings.Join(names, " ") != c.names || tpl.UsesTime() != c.time || tpl.Static() != c.static {
			t.Errorf("%q: names %q, placeholders %q, time %v, static %v; want %q, %v, %v", c.text, tpl.Names(), names, tpl.UsesTime(), tpl.Static(), c.names, c.time, c.static)
		}
	}
	if _, err := Placeholders("${a"); err == nil {
		t.Error("Placeholders of an unclosed placeholder: no error")
	}
	other := constSet(t)
	tpl, _ := s.Compile("${n}", Text)
	if _, err := tpl.Append(nil, other.NewRenderer(), 0, zeroTime); err == nil {
		t.Error("a Renderer of another set renders")
	}
}

// The URL escapes are net/url's, byte for byte, for every byte.
func TestURLEscapesMatchNetURL(t *testing.T) {
	var all []byte
	for c := range 256 {
		all = append(all, byte(c))
	}
	for _, s := range [][]byte{all, []byte("a b+c/d?e&f=g#h%i;j,k:l@m$n~o"), []byte("é€\xff")} {
		if got, want := string(appendURLEscaped(nil, s, pathSegment)), url.PathEscape(string(s)); got != want {
			t.Errorf("path:\n got %s\nwant %s", got, want)
		}
		if got, want := string(appendURLEscaped(nil, s, queryPart)), url.QueryEscape(string(s)); got != want {
			t.Errorf("query:\n got %s\nwant %s", got, want)
		}
	}
}

// JSON strings and numbers are written as encoding/json writes them
// (without its HTML escaping).
func TestJSONEncodingMatchesEncodingJSON(t *testing.T) {
	var all []byte
	for c := range 256 {
		all = append(all, byte(c))
	}
	for _, s := range []string{string(all), "é\u2028\u2029\U0001F600", "\xed\xa0\x80", "a\xc3"} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		if got, want := `"`+string(appendJSONString(nil, []byte(s)))+`"`, strings.TrimSuffix(b.String(), "\n"); got != want {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1.5, 1e20, 1e21, 1e-6, 1e-7, 123456789.125, 5e-324, 1.7976931348623157e308} {
		want, _ := json.Marshal(f)
		if got := appendFloat(nil, f); string(got) != string(want) {
			t.Errorf("%v: %s; want %s", f, got, want)
		}
	}
}
