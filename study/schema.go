package study

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// Schema returns the JSON Schema (draft 2020-12) of the study format,
// generated from the same types the parser decodes into, for editors.
func Schema() []byte {
	root := schemaOf(reflect.TypeFor[Study]())
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = "https://github.com/tandem-bench/tandem/docs/study.schema.json"
	root["title"] = "tandem study"
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keys such as ">=" and "<" as written
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		panic(err) // only maps, strings and slices
	}
	return b.Bytes()
}

func schemaOf(t reflect.Type) map[string]any {
	switch t {
	case durationType:
		return map[string]any{"type": "string", "pattern": `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`}
	case valueType:
		return map[string]any{}
	case recordingType:
		return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, structSchema(t)}}
	case intListType:
		return map[string]any{"oneOf": []any{
			map[string]any{"type": "integer", "minimum": 1},
			map[string]any{"type": "array", "items": map[string]any{"type": "integer", "minimum": 1}, "minItems": 1},
		}}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem())
	case reflect.Struct:
		return structSchema(t)
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float64:
		return map[string]any{"type": "number", "minimum": 0}
	}
	panic("study: no schema for " + strings.ToLower(t.String()))
}

// structSchema is the schema of a struct type: its YAML keys, no others.
func structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for _, f := range fields(t) {
		p := schemaOf(t.Field(f.index).Type)
		if f.doc != "" {
			p["description"] = f.doc
		}
		props[f.key] = p
		if f.required {
			required = append(required, f.key)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}
