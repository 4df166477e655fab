package values

import (
	"context"
	"os"
	"testing"
	"time"
)

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func open(t testing.TB, seed uint64, specs map[string]Spec) *Set {
	t.Helper()
	s, err := Open(context.Background(), seed, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// render is request i of text compiled in context c.
func render(t testing.TB, s *Set, r *Renderer, text string, c Context, i uint64) string {
	t.Helper()
	tpl, err := s.Compile(text, c)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tpl.Append(nil, r, i, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

var zeroTime time.Time
