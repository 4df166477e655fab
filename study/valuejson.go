package study

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// valueJSON is a Value as JSON: what it holds and whether it was set.
type valueJSON struct {
	V   any  `json:"v"`
	Set bool `json:"set,omitempty"`
}

// MarshalJSON encodes the value and whether it was set, so that a call
// handed to a distributed worker as JSON comes back as the study had it.
func (v Value) MarshalJSON() ([]byte, error) {
	return json.Marshal(valueJSON{V: v.V, Set: v.set})
}

// UnmarshalJSON decodes what MarshalJSON wrote, numbers as the study's
// decoder makes them (int64 when integral, else float64).
func (v *Value) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var j valueJSON
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("study value: %w", err)
	}
	*v = Value{V: fromJSONNumbers(j.V), set: j.Set}
	return nil
}

// fromJSONNumbers turns json.Numbers into int64 or float64 where that
// holds them exactly (prints back as they were written); any other stays
// a json.Number, which encodes as written (a uint64 past int64's range,
// more digits than a float64 keeps).
func fromJSONNumbers(x any) any {
	switch t := x.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, err := t.Float64()
		if err != nil || math.IsInf(f, 0) || strconv.FormatFloat(f, 'g', -1, 64) != t.String() {
			return t
		}
		return f
	case []any:
		for i := range t {
			t[i] = fromJSONNumbers(t[i])
		}
	case map[string]any:
		for k := range t {
			t[k] = fromJSONNumbers(t[k])
		}
	}
	return x
}
