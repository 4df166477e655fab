package vary

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tandem-bench/tandem/values"
)

func open(t *testing.T, specs map[string]values.Spec) *values.Set {
	t.Helper()
	set, err := values.Open(context.Background(), 1, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	return set
}

// Requests is one past the highest request number rendered, whatever the
// order and however many connections render at once.
func TestRequestsCountsHighest(t *testing.T) {
	set := open(t, map[string]values.Spec{"n": values.Seq{}})
	body, err := set.Compile("${n}", values.Text)
	if err != nil {
		t.Fatal(err)
	}
	v := New(set)
	p := &Parts{Values: v, Body: body}
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			q := p.NewRequest()
			for i := uint64(c); i < 1000; i += 4 {
				if err := q.Render(999 - i); err != nil { // highest first
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if v.Requests() != 1000 {
		t.Fatalf("Requests %d; want 1000", v.Requests())
	}
}

// Render fills each part's buffer for request i, headers in order; past a
// once feeder's rows it fails with values.ErrExhausted and does not count
// the request.
func TestRender(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(file, []byte("id\na\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := open(t, map[string]values.Spec{"n": values.Seq{From: 5}, "rows": values.File{Path: file, Format: values.CSV, Order: values.Once}})
	compile := func(text string, c values.Context) *values.Template {
		tm, err := set.Compile(text, c)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	v := New(set)
	p := &Parts{Values: v, Path: compile("/r/${rows.id}", values.URL),
		Headers: []Header{{"X-A", compile("${n}", values.Header)}, {"X-B", compile("b${rows.id}", values.Header)}},
		Body:    compile("n=${n}", values.Text)}
	q := p.NewRequest()
	if err := q.Render(1); err != nil {
		t.Fatal(err)
	}
	if string(q.Path) != "/r/b" || string(q.Headers[0]) != "6" || string(q.Headers[1]) != "bb" || string(q.Body) != "n=6" {
		t.Fatalf("request 1: %q %q %q; want /r/b, [6 bb], n=6", q.Path, q.Headers, q.Body)
	}
	if err := q.Render(2); !errors.Is(err, values.ErrExhausted) || v.Requests() != 2 {
		t.Fatalf("request 2 of 2 rows: %v, %d requests counted; want ErrExhausted and 2", err, v.Requests())
	}
}
