package compat

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// Difference kinds.
const (
	KindValue     = "value"      // same type, other value
	KindMissing   = "missing"    // in the reference, not in the candidate
	KindExtra     = "extra"      // in the candidate, not in the reference
	KindType      = "type"       // e.g. an object where the reference has a string
	KindOrdering  = "ordering"   // the same elements in another order
	KindSize      = "size"       // lists of different lengths
	KindByteOrder = "byte-order" // equal after reversing the bytes of a hex or base64 field
	KindStatus    = "status"     // the answers' statuses differ
)

// maxShown bounds each side of a difference as displayed.
const maxShown = 200

// Show renders a tree value for display: canonical JSON, cut at maxShown
// bytes (on a rune boundary) with the full length said.
func Show(v any) string {
	if v == nil {
		return "null"
	}
	return shorten(string(Canonical(v)))
}

func shorten(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

// Pattern is a field path with wildcards: "*" for any key, "[*]" for any
// index, as in "txs[*].outputs[*].amount".
type Pattern []string

// ParsePattern parses a path pattern (see study.FieldPath).
func ParsePattern(s string) (Pattern, error) { return study.FieldPath(s) }

// matches reports whether the pattern covers the path: equal length, or
// the path lies under the pattern.
func (p Pattern) matches(path []string) bool {
	if len(path) < len(p) {
		return false
	}
	for i, seg := range p {
		switch {
		case seg == path[i]:
		case seg == "*" && !strings.HasPrefix(path[i], "["):
		case seg == "[*]" && strings.HasPrefix(path[i], "["):
		default:
			return false
		}
	}
	return true
}

func joinPath(segs []string) string {
	var b strings.Builder
	for i, s := range segs {
		if i > 0 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// maxDifferences bounds the differences kept per comparison.
const maxDifferences = 100

// Diff lists where got departs from ref, skipping paths that an ignore
// pattern covers. It returns at most maxDifferences, and how many there
// were in all.
func Diff(ref, got any, ignore []Pattern) ([]results.Difference, int) {
	d := differ{ignore: ignore}
	d.walk(nil, ref, got)
	return d.out, d.total
}

type differ struct {
	ignore []Pattern
	out    []results.Difference
	total  int
}

func (d *differ) add(path []string, kind string, ref, got any) {
	d.total++
	if len(d.out) < maxDifferences {
		r, g := Show(ref), Show(got)
		if kind == KindMissing {
			g = ""
		} else if kind == KindExtra {
			r = ""
		}
		d.out = append(d.out, results.Difference{Path: joinPath(path), Kind: kind, Reference: r, Value: g})
	}
}

func (d *differ) ignored(path []string) bool {
	return slices.ContainsFunc(d.ignore, func(p Pattern) bool { return p.matches(path) })
}

func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func (d *differ) walk(path []string, ref, got any) {
	if d.ignored(path) {
		return
	}
	if typeOf(ref) != typeOf(got) {
		d.add(path, KindType, ref, got)
		return
	}
	switch r := ref.(type) {
	case map[string]any:
		g := got.(map[string]any)
		keys := make([]string, 0, len(r)+len(g))
		for k := range r {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := r[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := append(path[:len(path):len(path)], k)
			rv, inRef := r[k]
			gv, inGot := g[k]
			switch {
			case d.ignored(p):
			case !inGot:
				d.add(p, KindMissing, rv, nil)
			case !inRef:
				d.add(p, KindExtra, nil, gv)
			default:
				d.walk(p, rv, gv)
			}
		}
	case []any:
		d.list(path, r, got.([]any))
	case json.Number:
		if canonicalNumber(r) != canonicalNumber(got.(json.Number)) {
			d.add(path, KindValue, ref, got)
		}
	case string:
		g := got.(string)
		if r == g {
			return
		}
		if reversedBytes(r, g) {
			d.add(path, KindByteOrder, ref, got)
			return
		}
		d.add(path, KindValue, ref, got)
	default:
		if ref != got {
			d.add(path, KindValue, ref, got)
		}
	}
}

func (d *differ) list(path []string, r, g []any) {
	if len(r) != len(g) {
		d.add(path, KindSize, json.Number(strconv.Itoa(len(r))), json.Number(strconv.Itoa(len(g))))
	} else if !slices.EqualFunc(r, g, sameTree) && sameElements(r, g) {
		d.add(path, KindOrdering, r, g)
		return
	}
	for i := range min(len(r), len(g)) {
		d.walk(append(path[:len(path):len(path)], "["+strconv.Itoa(i)+"]"), r[i], g[i])
	}
}

func sameTree(a, b any) bool { return bytes.Equal(Canonical(a), Canonical(b)) }

// sameElements reports whether two lists hold the same elements, counted
// with multiplicity, in any order.
func sameElements(a, b []any) bool {
	count := map[string]int{}
	for _, e := range a {
		count[string(Canonical(e))]++
	}
	for _, e := range b {
		k := string(Canonical(e))
		if count[k] == 0 {
			return false
		}
		count[k]--
	}
	return true
}

// reversedBytes reports whether two strings encode byte strings (hex, or
// base64 as protobuf's JSON writes bytes) that are each other reversed.
func reversedBytes(a, b string) bool {
	if len(a) != len(b) || len(a) < 4 {
		return false
	}
	for _, dec := range []func(string) ([]byte, error){hex.DecodeString, base64.StdEncoding.DecodeString} {
		x, err1 := dec(a)
		y, err2 := dec(b)
		if err1 != nil || err2 != nil || len(x) < 2 {
			continue
		}
		slices.Reverse(y)
		if bytes.Equal(x, y) {
			return true
		}
	}
	return false
}

// Reversed returns a hex or base64 byte string with its bytes in reverse
// order, in the same encoding; other strings come back unchanged.
func Reversed(s string) string {
	if x, err := hex.DecodeString(s); err == nil && len(x) > 0 {
		slices.Reverse(x)
		if strings.ToUpper(s) == s {
			return strings.ToUpper(hex.EncodeToString(x))
		}
		return hex.EncodeToString(x)
	}
	if x, err := base64.StdEncoding.DecodeString(s); err == nil && len(x) > 0 {
		slices.Reverse(x)
		return base64.StdEncoding.EncodeToString(x)
	}
	return s
}
