package runner

import (
	"encoding/json"
	"reflect"
	"strconv"

	"github.com/tandem-bench/tandem/compat"
)

// Holds reports whether the field at a path of a JSON answer equals want,
// and returns the field's value as JSON for error messages. The path is a
// compat field path (result.txs[0].height; result.txs.0.height too).
// Numbers compare by value; a missing field equals null.
func Holds(answer []byte, path string, want any) (bool, string) {
	var tree any
	if err := json.Unmarshal(answer, &tree); err != nil {
		return false, "(not JSON)"
	}
	v, ok := compat.Extract(tree, path)
	if !ok && want != nil {
		return false, "(no such field)"
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
