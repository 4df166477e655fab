package study

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse holds that any input either parses into a study or yields an
// ErrorList whose every entry has a position, and never panics.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/valid/*.yaml", "testdata/errors/*.yaml", "../demo/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err == nil {
			if s == nil || s.Version != 1 || len(s.Targets) == 0 {
				t.Fatalf("Parse accepted an incomplete study: %+v", s)
			}
			return
		}
		var list ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Fatalf("Parse error %T %v; want a non-empty ErrorList", err, err)
		}
		for _, e := range list {
			if e.Line < 1 || e.Col < 1 {
				t.Fatalf("error without a position: %v", e)
			}
		}
	})
}
