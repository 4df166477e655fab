package compat

import (
	"bytes"
	"testing"

	"github.com/tandem-bench/tandem/study"
)

// Canonical form is a fixed point: canonicalising it again changes nothing,
// and what it encodes decodes to the same tree.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.0,"x",null]}`, `"\u00e9<>"`, `[1e400,-0,0.1]`, `{"":{"":[]}}`, `12345678901234567890`, `[-0.0, -0e5, 0.0, -0]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := JSONTree(data)
		if err != nil {
			return
		}
		c := Canonical(v)
		v2, err := JSONTree(c)
		if err != nil {
			t.Fatalf("canonical form %q does not parse: %v", c, err)
		}
		if c2 := Canonical(v2); !bytes.Equal(c, c2) {
			t.Fatalf("not a fixed point: %q then %q", c, c2)
		}
	})
}

// The differ never panics, finds nothing between a tree and itself, and
// names only known kinds at paths that parse.
func FuzzDiff(f *testing.F) {
	f.Add([]byte(`{"a":[1,2],"h":"0011"}`), []byte(`{"a":[2,1],"h":"1100","x":null}`), "a")
	f.Add([]byte(`"abc"`), []byte(`{"hex":"abc"}`), "txs[*].time")
	f.Fuzz(func(t *testing.T, a, b []byte, ignore string) {
		x, err1 := JSONTree(a)
		y, err2 := JSONTree(b)
		if err1 != nil || err2 != nil {
			return
		}
		var pats []Pattern
		if p, err := study.FieldPath(ignore); err == nil {
			pats = append(pats, p)
		}
		if d, n := Diff(x, x, pats); len(d) != 0 || n != 0 {
			t.Fatalf("a tree differs from itself: %+v", d)
		}
		diffs, total := Diff(x, y, pats)
		if total < len(diffs) || len(diffs) > maxDifferences {
			t.Fatalf("%d kept of %d", len(diffs), total)
		}
		for _, d := range diffs {
			switch d.Kind {
			case KindValue, KindMissing, KindExtra, KindType, KindOrdering, KindSize, KindByteOrder:
			default:
				t.Fatalf("unknown kind %q", d.Kind)
			}
			if _, err := study.FieldPath(d.Path); err != nil && d.Path != "" {
				// keys may hold any character; only index syntax is checked
				if bytes.ContainsAny([]byte(d.Path), ".[]") {
					continue
				}
				t.Fatalf("path %q does not parse: %v", d.Path, err)
			}
		}
	})
}
