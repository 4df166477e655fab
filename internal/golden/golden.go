// Package golden compares test output with golden files under testdata/.
// `go test -update` rewrites them. Import it from tests only: it registers
// the -update flag.
package golden

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Check compares got with the file at path, or rewrites the file with
// -update. A difference is reported at its first differing line.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if string(got) == string(want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			t.Errorf("%s differs at line %d (go test -update rewrites it):\n got %.300s\nwant %.300s", path, i+1, g[i], w[i])
			return
		}
	}
	t.Errorf("%s: %d lines; want %d (go test -update rewrites it)", path, len(g), len(w))
}
