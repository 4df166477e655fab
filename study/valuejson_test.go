package study

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestCallJSONRoundTrip: a call read from a study survives JSON (as a
// distributed worker gets it): values keep being set, integers stay
// int64, nested lists and maps keep their kinds.
func TestCallJSONRoundTrip(t *testing.T) {
	s, err := Parse("t.yaml", []byte(`version: 1
name: t
targets:
  - {name: a, endpoints: {grpc: "127.0.0.1:1", http: "http://127.0.0.1:2"}}
calls:
  block: {grpc: {method: x.Y/Get, request: {height: 123, tags: [a, 1, 2.5, {deep: true}]}, metadata: {k: v}}}
  post: {http: {method: POST, path: /p, body: "raw text", headers: {A: b}}}
  get: {http: {path: /ping}}
scenarios:
  - {name: s, call: block, load: {concurrency: 1}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range s.Calls {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back Call
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		clearPos(reflect.ValueOf(c).Elem())
		if !reflect.DeepEqual(*c, back) {
			t.Errorf("%s: %+v\nback: %+v", name, *c, back)
		}
	}
	if s.Calls["get"].HTTP.Body.IsSet() {
		t.Error("an unset body came back set")
	}
}

// clearPos zeroes every Value's position (JSON does not carry where the
// value was read).
func clearPos(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			clearPos(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == valueType {
			v.FieldByName("Pos").Set(reflect.Zero(v.FieldByName("Pos").Type()))
			return
		}
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				clearPos(v.Field(i))
			}
		}
	}
}
