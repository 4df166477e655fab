package values

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// csvRecords reads data with encoding/csv (any number of fields a record):
// the records before the first error, and whether there was one.
func csvRecords(data []byte) ([][]string, bool) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	var out [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, false
		}
		if err != nil {
			return out, true
		}
		out = append(out, slices.Clone(rec))
	}
}

// parsedRecords reads data with csvParser, the whole input at once.
func parsedRecords(data []byte) ([][]string, bool) {
	var p csvParser
	var out [][]string
	pos := 0
	for {
		_, end, err := p.parse(data[pos:], true)
		if err == io.EOF {
			return out, false
		}
		if err != nil {
			return out, true
		}
		var rec []string
		for k := range p.fields() {
			rec = append(rec, string(p.field(k)))
		}
		out = append(out, rec)
		pos += end
	}
}

// streamedRecords reads data through the scanner a few bytes at a time, as
// a feeder's check does, and re-reads each row from its offset alone, as a
// Renderer does.
func streamedRecords(t *testing.T, data []byte) ([][]string, bool) {
	var p csvParser
	sc := scanner{r: iotest.HalfReader(bytes.NewReader(data)), buf: make([]byte, 0, 16)}
	var out [][]string
	for {
		row, err := sc.next(p.parse)
		if err == io.EOF {
			return out, false
		}
		if err != nil {
			return out, true
		}
		var rec []string
		for k := range p.fields() {
			rec = append(rec, string(p.field(k)))
		}
		out = append(out, rec)
		if !bytes.Equal(row, data[sc.off:sc.off+int64(len(row))]) {
			t.Fatalf("row at offset %d is %q; the input there is %q", sc.off, row, data[sc.off:])
		}
		var again csvParser
		if _, _, err := again.parse(row, true); err != nil || again.fields() != len(rec) {
			t.Fatalf("row %q alone: %v, %d fields; want %d", row, err, again.fields(), len(rec))
		}
	}
}

// FuzzCSV holds csvParser to encoding/csv: the same records and an error
// at the same record, whole or streamed a few bytes at a time.
func FuzzCSV(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,2\n", "a,\"b\"\"c\"\n", "\"multi\nline\",x\r\n", "a\"b\n", "\"a\"b\n", "\"open\n", "\n\n a ,b\r\n",
		"x\r", "\"a\r\nb\"\r\n", ",\n,,\n", "\"\"\n", "a\rb,c\n", "\"x\"\r", "\ufeffid\n1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := csvRecords(data)
		got, gotErr := parsedRecords(data)
		if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) || gotErr != wantErr {
			t.Fatalf("%q:\n got %q (error %v)\nwant %q (error %v)", data, got, gotErr, want, wantErr)
		}
		streamed, streamedErr := streamedRecords(t, data)
		if bytes.HasPrefix(data, []byte("\ufeff")) {
			want, wantErr = csvRecords(data[3:]) // the scanner skips a byte-order mark
		}
		if !reflect.DeepEqual(streamed, want) && !(len(streamed) == 0 && len(want) == 0) || streamedErr != wantErr {
			t.Fatalf("%q streamed:\n got %q (error %v)\nwant %q (error %v)", data, streamed, streamedErr, want, wantErr)
		}
	})
}

// FuzzJSONL holds the JSONL reader to encoding/json: on a valid object the
// same members (strings decoded the same, other values equal once
// decoded); on a valid non-object, errNotObject; on anything, no panic.
func FuzzJSONL(f *testing.F) {
	for _, s := range []string{
		`{"a": 1, "b": "x\u00e9\ud83d\ude00", "c": [1, {"d": null}], "e": true}`, `[1]`, `"s"`, `{}`, `{"a":1,"a":2}`,
		`{"k\"ey": "\ud800", "x": -1.5e3}`, `{"a": "\ud83dx"}`, `  {"a" : { } } `, `{"a": "é\xff"}`, `{"a`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		members, err := walkMembers(line) // never panics, whatever line is
		if !json.Valid(line) {
			return
		}
		var want map[string]any
		if json.Unmarshal(line, &want) != nil || want == nil {
			if !errors.Is(err, errNotObject) {
				t.Fatalf("%q is %s, not an object; the reader says %v", line, jsonKind(line), err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got := map[string]any{}
		for _, m := range members {
			got[m[0]] = m[1]
		}
		for k, w := range want {
			if s, ok := w.(string); ok {
				if got[k] != "string:"+s {
					t.Fatalf("%q: key %q is %q; want the string %q", line, k, got[k], s)
				}
				continue
			}
			raw, _ := got[k].(string)
			var v any
			if err := json.Unmarshal([]byte(raw), &v); err != nil || !reflect.DeepEqual(v, w) {
				t.Fatalf("%q: key %q is %q (%v); want %v", line, k, raw, err, w)
			}
			if bytes.ContainsAny([]byte(raw), " \t\r\n") && !strings.Contains(raw, `"`) {
				t.Fatalf("%q: key %q is %q, not compact", line, k, raw)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d keys; want %d", line, len(got), len(want))
		}
	})
}

// walkMembers is every member of the object in line, key decoded, value
// as "string:" and the string decoded, or compacted JSON.
func walkMembers(line []byte) ([][2]string, error) {
	m, err := newMembers(line)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	var buf []byte
	for {
		k, v, ok, err := m.next()
		if err != nil || !ok {
			return out, err
		}
		var key []byte
		buf, key = jsonKey(buf, k)
		val := string(appendCompact(nil, v))
		if v[0] == '"' {
			val = "string:" + string(appendUnquoted(nil, v))
		}
		out = append(out, [2]string{string(key), val})
	}
}

// fuzzSet is a set whose values are as awkward as they come.
func fuzzSet(t testing.TB) *Set {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.csv")
	writeFile(t, path, "id,note\n1,\"two\nlines\"\n2,\"a/b?c&d=e#f g%\"\n")
	s, err := Open(context.Background(), 7, map[string]Spec{
		"s": Choice{Values: []any{"a/b?c&d=e#f g%", "é\u2028\x00\xff\"\\", "x\r\ny", "${s}", int64(-3), 1e21, []any{"q", nil}}},
		"n": Seq{From: -1},
		"b": Bytes{N: 9},
		"h": Hex{N: 5},
		"t": Time{Format: RFC3339Nano},
		"f": File{Path: path, Format: CSV, Order: Random},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// FuzzTemplate compiles any text in every context: the compiler agrees with
// Placeholders, and what renders holds each context's promise: JSON is
// valid, a header and a URL hold no control character or space that the
// text did not, text without placeholders is the text.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{
		"plain", "/p/${s}?q=${s}&n=${n}", "${b}", "x$${s}y", "${", "${}", "${f}", "${f.note}", "${f.id}${h}${t}",
		"${s.x}", "${nope}", "a?b${s}", "${n}", "$${${s}}",
	} {
		f.Add(s)
	}
	s := fuzzSet(f)
	r := s.NewRenderer()
	now := time.Unix(1700000000, 123)
	f.Fuzz(func(t *testing.T, text string) {
		names, perr := Placeholders(text)
		for _, c := range []Context{Text, URL, Header} {
			tpl, err := s.Compile(text, c)
			if perr != nil {
				if err == nil {
					t.Fatalf("%q: Placeholders says %v; Compile(%v) accepts it", text, perr, c)
				}
				continue
			}
			if err != nil {
				continue // an unknown name, a feeder without a column, a header that cannot carry a value
			}
			if !slices.Equal(tpl.Names(), names) {
				t.Fatalf("%q: names %q; Placeholders says %q", text, tpl.Names(), names)
			}
			for i := range uint64(7) {
				out, err := tpl.Append(nil, r, i, now)
				if err != nil {
					t.Fatalf("%q in %v, request %d: %v", text, c, i, err)
				}
				checkRendered(t, text, c, tpl, out)
			}
		}
		for _, doc := range []any{text, map[string]any{"k": text, "l": []any{text, int64(1)}}} {
			tpl, err := s.CompileJSON(doc)
			if err != nil {
				continue
			}
			for i := range uint64(7) {
				out, err := tpl.Append(nil, r, i, now)
				if err != nil || !json.Valid(out) {
					t.Fatalf("%q as JSON, request %d: %s is not valid JSON (%v)", text, i, out, err)
				}
			}
		}
	})
}

func checkRendered(t *testing.T, text string, c Context, tpl *Template, out []byte) {
	t.Helper()
	if tpl.Static() {
		if want := strings.ReplaceAll(text, "$${", "${"); c == Text && !strings.Contains(text, "$$${") && string(out) != want {
			t.Fatalf("%q: renders %q; want %q", text, out, want)
		}
		return
	}
	if c == Text {
		return
	}
	bad := func(b byte) bool { return b < 0x20 && b != '\t' || b == 0x7f || c == URL && (b == ' ' || b >= 0x80) }
	for _, b := range out {
		if bad(b) && !strings.ContainsRune(text, rune(b)) && !(b >= 0x80 && strings.IndexFunc(text, func(r rune) bool { return r >= 0x80 }) >= 0) {
			t.Fatalf("%q in %v renders %q, with %q that the text does not hold", text, c, out, b)
		}
	}
}
