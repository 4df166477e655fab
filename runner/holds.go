package runner

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"

	"github.com/tandem-bench/tandem/compat"
	"github.com/tandem-bench/tandem/study"
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

// Meets reports whether a JSON answer meets a readiness condition's
// predicate (equals, a comparison with a number, or a regular expression)
// and returns the field's value as JSON for error messages. A field that
// is missing, or not a number where one is compared, does not meet it.
func Meets(answer []byte, c *study.Condition) (bool, string) {
	if c.Equals.IsSet() {
		return Holds(answer, c.Path, c.Equals.V)
	}
	var tree any
	if err := json.Unmarshal(answer, &tree); err != nil {
		return false, "(not JSON)"
	}
	v, ok := compat.Extract(tree, c.Path)
	if !ok {
		return false, "(no such field)"
	}
	got, _ := json.Marshal(v)
	if c.Matches != "" {
		re, err := regexp.Compile(c.Matches)
		if err != nil {
			return false, string(got)
		}
		text, isString := v.(string)
		if !isString {
			text = string(got)
		}
		return re.MatchString(text), string(got)
	}
	x, ok := numeric(v)
	if !ok {
		return false, string(got)
	}
	switch {
	case c.AtLeast != nil:
		return x >= *c.AtLeast, string(got)
	case c.Above != nil:
		return x > *c.Above, string(got)
	case c.AtMost != nil:
		return x <= *c.AtMost, string(got)
	case c.Below != nil:
		return x < *c.Below, string(got)
	}
	return false, string(got)
}

// numeric is a JSON value as a number: a number, or a string that holds
// one (protojson writes 64-bit integers as strings).
func numeric(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case string:
		f, err := strconv.ParseFloat(n, 64)
		return f, err == nil
	}
	return 0, false
}

// number is the number at path in a JSON answer.
func number(answer []byte, path string) (float64, bool) {
	var tree any
	if err := json.Unmarshal(answer, &tree); err != nil {
		return 0, false
	}
	v, ok := compat.Extract(tree, path)
	if !ok {
		return 0, false
	}
	return numeric(v)
}
