package runner

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// Holds reports whether the field at a dotted path (list elements by
// index, e.g. result.txs.0.height) of a JSON answer equals want, and returns
// the field's value as JSON for error messages. Numbers compare by value.
func Holds(answer []byte, path string, want any) (bool, string) {
	var v any
	if err := json.Unmarshal(answer, &v); err != nil {
		return false, "(not JSON)"
	}
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return false, "(no such field)"
			}
			v = x[i]
		default:
			return false, "(no such field)"
		}
	}
	got, _ := json.Marshal(v)
	var norm any
	if b, err := json.Marshal(want); err == nil {
		json.Unmarshal(b, &norm)
	}
	// protojson writes 64-bit integers as strings
	if s, ok := v.(string); ok {
		if f, ok := norm.(float64); ok {
			if g, err := strconv.ParseFloat(s, 64); err == nil {
				return g == f, string(got)
			}
		}
	}
	return reflect.DeepEqual(v, norm), string(got)
}
