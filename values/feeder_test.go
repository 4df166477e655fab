package values

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/golden"
)

// Every bad file under testdata/bad is refused when opened, with the error
// in its .golden file: file:line (and column where there is one), what is
// wrong.
func TestBadRows(t *testing.T) {
	files, _ := filepath.Glob("testdata/bad/*.*sv")
	jsonl, _ := filepath.Glob("testdata/bad/*.jsonl")
	files = append(files, jsonl...)
	if len(files) < 15 {
		t.Fatalf("%d bad files; want the 17 of testdata/bad", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			format := CSV
			if strings.HasSuffix(path, ".jsonl") {
				format = JSONL
			}
			_, err := Open(context.Background(), 1, map[string]Spec{"f": File{Path: path, Format: format, Order: Sequential}})
			if err == nil {
				t.Fatalf("%s opens", path)
			}
			golden.Check(t, strings.TrimSuffix(path, filepath.Ext(path))+".golden", []byte(err.Error()+"\n"))
		})
	}
}

// numbered is a CSV of n rows: id is the row's number, name has a comma.
func numbered(t testing.TB, n int) string {
	var b strings.Builder
	b.WriteString("id,name\n")
	for k := range n {
		fmt.Fprintf(&b, "%d,\"name, %d\"\n", k, k)
	}
	path := filepath.Join(t.TempDir(), "rows.csv")
	writeFile(t, path, b.String())
	return path
}

// Sequential order wraps, once order ends with its rows (ErrExhausted, and
// Limit says when), random order is seeded and covers the rows.
func TestFeederOrders(t *testing.T) {
	path := numbered(t, 100)
	s := open(t, 1, map[string]Spec{
		"seq":  File{Path: path, Format: CSV, Order: Sequential},
		"once": File{Path: path, Format: CSV, Order: Once},
		"rnd":  File{Path: path, Format: CSV, Order: Random},
	})
	if n, ok := s.Limit(); n != 100 || !ok {
		t.Errorf("Limit: %d, %v; want 100, true", n, ok)
	}
	if n, ok := s.Rows("rnd"); n != 100 || !ok {
		t.Errorf("Rows: %d, %v; want 100", n, ok)
	}
	r := s.NewRenderer()
	seen := map[string]bool{}
	for i := range uint64(300) {
		if got, want := render(t, s, r, "${seq.id}|${seq.name}", Text, i), fmt.Sprintf("%d|name, %d", i%100, i%100); got != want {
			t.Fatalf("sequential, request %d: %q; want %q", i, got, want)
		}
		seen[render(t, s, r, "${rnd.id}", Text, i)] = true
		tpl, _ := s.Compile("${once.id}", Text)
		out, err := tpl.Append([]byte("kept"), r, i, zeroTime)
		switch {
		case i < 100 && (err != nil || string(out) != fmt.Sprint("kept", i)):
			t.Fatalf("once, request %d: %q, %v; want row %d", i, out, err, i)
		case i >= 100 && (!errors.Is(err, ErrExhausted) || string(out) != "kept"):
			t.Fatalf("once, request %d: %q, %v; want ErrExhausted and the buffer as it was", i, out, err)
		}
	}
	if len(seen) < 90 {
		t.Errorf("random order: %d distinct rows of 100 over 300 requests; want at least 90", len(seen))
	}
	for id := range seen {
		var n int
		if _, err := fmt.Sscan(id, &n); err != nil || n < 0 || n >= 100 {
			t.Errorf("random order gave row %q", id)
		}
	}
	if s2 := open(t, 2, map[string]Spec{"rnd": File{Path: path, Format: CSV, Order: Random}}); render(t, s2, s2.NewRenderer(), "${rnd.id}${rnd.id}", Text, 0)+render(t, s2, s2.NewRenderer(), "${rnd.id}", Text, 1) == render(t, s, r, "${rnd.id}${rnd.id}", Text, 0)+render(t, s, r, "${rnd.id}", Text, 1) {
		t.Errorf("random order: seeds 1 and 2 draw the same rows")
	}
}

// awkwardCSV writes n rows that CSV makes hard: quoted commas and quotes,
// fields over several lines, CRLF endings, blank lines, rows from a few
// bytes to a few kilobytes.
func awkwardCSV(t testing.TB, n int) (string, [][]string) {
	var b strings.Builder
	b.WriteString("a,b,c\r\n")
	for k := range n {
		long := strings.Repeat("z", (k*7919)%3000)
		switch k % 5 {
		case 0:
			fmt.Fprintf(&b, "%d,\"x, \"\"quoted\"\"\",%s\n", k, long)
		case 1:
			fmt.Fprintf(&b, "%d,\"two\r\nlines\",\r\n", k)
		case 2:
			fmt.Fprintf(&b, "\n%d,plain,\"%s\"\r\n\r\n", k, long)
		case 3:
			fmt.Fprintf(&b, "%d,,é\n", k)
		default:
			fmt.Fprintf(&b, "%d,\"\",\"a\nb\nc\"\n", k)
		}
	}
	path := filepath.Join(t.TempDir(), "awkward.csv")
	writeFile(t, path, b.String())
	records, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return path, records[1:]
}

// A feeder reads every row as encoding/csv does, held in memory or, for a
// file over 4 MiB, streamed through each Renderer's window, in every order
// and from two Renderers at once.
func TestFeederMatchesEncodingCSV(t *testing.T) {
	for _, c := range []struct {
		rows     int
		streamed bool
	}{{300, false}, {8000, true}} {
		path, records := awkwardCSV(t, c.rows)
		info, _ := os.Stat(path)
		s := open(t, 3, map[string]Spec{
			"seq":  File{Path: path, Format: CSV, Order: Sequential},
			"rnd":  File{Path: path, Format: CSV, Order: Random},
			"once": File{Path: path, Format: CSV, Order: Once},
		})
		if streamed := s.list[s.feeders["seq"]].file != nil; streamed != c.streamed {
			t.Fatalf("%d bytes: streamed %v; want %v", info.Size(), streamed, c.streamed)
		}
		t.Run(fmt.Sprintf("%d-bytes", info.Size()), func(t *testing.T) {
			rs := []*Renderer{s.NewRenderer(), s.NewRenderer()}
			for _, order := range []string{"seq", "rnd", "once"} {
				tpl, err := s.Compile("${"+order+".a}|${"+order+".b}|${"+order+".c}", Text)
				if err != nil {
					t.Fatal(err)
				}
				rows := map[string]bool{}
				for i := range uint64(len(records) + 50) {
					out, err := tpl.Append(nil, rs[i%2], i, zeroTime)
					if order == "once" && i >= uint64(len(records)) {
						if !errors.Is(err, ErrExhausted) {
							t.Fatalf("once, request %d of %d rows: %v", i, len(records), err)
						}
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					var id int
					fmt.Sscan(string(out), &id)
					if order != "rnd" && id != int(i)%len(records) {
						t.Fatalf("%s, request %d: row %d", order, i, id)
					}
					if want := strings.Join(records[id], "|"); string(out) != want {
						t.Fatalf("%s, request %d: %.80q; encoding/csv reads %.80q", order, i, out, want)
					}
					rows[string(out)] = true
				}
				if order == "rnd" && len(rows) < len(records)/2 {
					t.Errorf("random order: %d distinct rows of %d", len(rows), len(records))
				}
			}
		})
	}
}

// JSONL values keep their JSON types: a number spliced whole stays a number
// (as written), strings are decoded then escaped again, objects and lists
// are compacted; as text, a string is its characters and anything else its
// JSON.
func TestJSONLTypes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	writeFile(t, path, `{"n": 1.50, "s": "é\"\u00e9\n", "o": {"a": [1, 2, null]}, "t": true, "z": null, "big": 12345678901234567890}`+"\n")
	s := open(t, 1, map[string]Spec{"r": File{Path: path, Format: JSONL, Order: Sequential}})
	r := s.NewRenderer()
	tpl, err := s.CompileJSON(map[string]any{"n": "${r.n}", "s": "${r.s}", "o": "${r.o}", "t": "${r.t}", "z": "${r.z}", "big": "${r.big}", "in": "<${r.s}|${r.o}|${r.n}>"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := tpl.Append(nil, r, 0, zeroTime)
	want := `{"big":12345678901234567890,"in":"<é\"é\n|{\"a\":[1,2,null]}|1.50>","n":1.50,"o":{"a":[1,2,null]},"s":"é\"é\n","t":true,"z":null}`
	if err != nil || string(out) != want {
		t.Errorf("JSON:\n got %s (%v)\nwant %s", out, err, want)
	}
	if got := render(t, s, r, "${r.s}|${r.o}|${r.n}|${r.z}", Text, 0); got != "é\"é\n|{\"a\":[1,2,null]}|1.50|null" {
		t.Errorf("text: %q", got)
	}
}

// A column with a line break anywhere in the file cannot go in an HTTP
// header: refused when compiled, at the first line that has one; other
// columns can.
func TestHeaderRefusesUnsafeColumn(t *testing.T) {
	dir := t.TempDir()
	c, j := filepath.Join(dir, "h.csv"), filepath.Join(dir, "h.jsonl")
	writeFile(t, c, "id,note\n1,fine\n2,\"two\nlines\"\n3,\"bell\a\"\n")
	writeFile(t, j, "{\"id\": 1, \"note\": \"a\"}\n{\"id\": 2, \"note\": \"b\\r\\nInjected: yes\"}\n")
	s := open(t, 1, map[string]Spec{"c": File{Path: c, Format: CSV, Order: Sequential}, "j": File{Path: j, Format: JSONL, Order: Sequential}})
	for name, want := range map[string]string{
		"c.note": c + `:3: column "note" has a line break or another control character, which an HTTP header cannot carry (${c.note} is in a header)`,
		"j.note": j + `:2: column "note" has a line break or another control character, which an HTTP header cannot carry (${j.note} is in a header)`,
	} {
		if _, err := s.Compile("X ${"+name+"}", Header); err == nil || err.Error() != want {
			t.Errorf("%s: %v;\nwant %s", name, err, want)
		}
	}
	if got := render(t, s, s.NewRenderer(), "id=${c.id}; ${j.id}", Header, 1); got != "id=2; 2" {
		t.Errorf("safe columns in a header: %q", got)
	}
}

// bigCSV writes n rows of about 60 bytes; it returns the path and size.
func bigCSV(t testing.TB, n int) (string, int64) {
	path := filepath.Join(t.TempDir(), "big.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte("id,user,email\n")
	for k := range n {
		b = fmt.Appendf(b, "%d,user%08d,\"user%d@example.com, primary\"\n", k, k*7, k)
		if len(b) > 1<<20 {
			f.Write(b)
			b = b[:0]
		}
	}
	f.Write(b)
	f.Close()
	info, _ := os.Stat(path)
	return path, info.Size()
}

// A streamed feeder holds its row index, not its file: opening a file of
// 200,000 rows grows the heap by far less than the file (about 4 bytes a
// row, and the buffers), and rendering its rows allocates nothing, in any
// order, so memory stays flat however many requests a run makes.
func TestFeederMemory(t *testing.T) {
	const rows = 200_000
	path, size := bigCSV(t, rows)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := Open(context.Background(), 1, map[string]Spec{
		"seq": File{Path: path, Format: CSV, Order: Sequential},
		"rnd": File{Path: path, Format: CSV, Order: Random},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("file %d bytes, %d rows: heap grew %d bytes for two feeders", size, rows, grew)
	if grew > size/4 {
		t.Errorf("two feeders of a %d-byte file grew the heap by %d bytes; a streamed feeder should hold about 4 bytes a row", size, grew)
	}
	tpl, err := s.CompileJSON(map[string]any{"id": "${seq.id}", "user": "${rnd.user}", "mail": "${seq.email}"})
	if err != nil {
		t.Fatal(err)
	}
	r := s.NewRenderer()
	buf := make([]byte, 0, 256)
	i := uint64(0)
	step := func() {
		var err error
		if buf, err = tpl.Append(buf[:0], r, i, zeroTime); err != nil {
			t.Fatal(err)
		}
		i++
	}
	for range 1000 {
		step() // the window and the buffers grow to their size
	}
	if allocs := testing.AllocsPerRun(20_000, step); allocs != 0 {
		t.Errorf("%v allocations a request; want 0", allocs)
	}
}

// A row longer than MaxRow is refused at its line.
func TestLongRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.csv")
	writeFile(t, path, "a\n1\n\""+strings.Repeat("x", MaxRow+10)+"\"\n")
	_, err := Open(context.Background(), 1, map[string]Spec{"f": File{Path: path, Format: CSV, Order: Once}})
	if want := path + ":3: a row longer than 1048576 bytes (or a quoted field never closed)"; err == nil || err.Error() != want {
		t.Errorf("%v; want %s", err, want)
	}
}

// A file changed under a streamed feeder gives an error for the rows it
// lost, not a panic or garbage.
func TestFeederChanged(t *testing.T) {
	path, size := bigCSV(t, 100_000)
	if size <= memLimit {
		t.Fatalf("%d bytes: not streamed", size)
	}
	s := open(t, 1, map[string]Spec{"f": File{Path: path, Format: CSV, Order: Sequential}})
	if err := os.Truncate(path, size/2); err != nil {
		t.Fatal(err)
	}
	tpl, _ := s.Compile("${f.email}", Text)
	_, err := tpl.Append(nil, s.NewRenderer(), 99_999, time.Time{})
	if err == nil || !strings.Contains(err.Error(), path+": row 100000: EOF") {
		t.Errorf("the last row of a file cut in half: %v", err)
	}
}

// A byte-order mark before the header is not part of the first column's
// name.
func TestByteOrderMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bom.csv")
	writeFile(t, path, "\ufeffid,name\n7,x\n")
	s := open(t, 1, map[string]Spec{"f": File{Path: path, Format: CSV, Order: Sequential}})
	if got := render(t, s, s.NewRenderer(), "${f.id}", Text, 0); got != "7" {
		t.Errorf("%q; want 7", got)
	}
}
