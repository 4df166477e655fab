package study

import (
	"encoding/json"
	"strings"
	"testing"
)

// A value comes back from JSON as it went, its numbers exact: an integer
// as int64, a float that prints as written as float64, and any other
// (past int64, more digits than a float64 keeps) as written.
func TestValueJSONNumbers(t *testing.T) {
	for _, in := range []string{`{"id":18446744073709551615}`, `{"n":5}`, `{"x":0.1}`, `[1e3,12345678901234567890123,-7]`} {
		var raw any
		dec := json.NewDecoder(strings.NewReader(in))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(NewValue(raw))
		if err != nil {
			t.Fatal(err)
		}
		var back Value
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(back.V)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != in {
			t.Errorf("%s came back as %s", in, out)
		}
	}
	var v Value
	if err := json.Unmarshal([]byte(`{"v":{"n":5,"x":0.5}}`), &v); err != nil {
		t.Fatal(err)
	}
	m := v.V.(map[string]any)
	if _, ok := m["n"].(int64); !ok {
		t.Errorf("5 came back as %T", m["n"])
	}
	if _, ok := m["x"].(float64); !ok {
		t.Errorf("0.5 came back as %T", m["x"])
	}
}
