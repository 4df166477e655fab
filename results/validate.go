package results

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	compileOnce sync.Once
	compiled    *jsonschema.Schema
	compileErr  error
)

// Validate checks results.json bytes against the JSON Schema.
func Validate(data []byte) error {
	compileOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(jsonSchema))
		if err != nil {
			compileErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err = c.AddResource("schema.json", doc); err != nil {
			compileErr = err
			return
		}
		compiled, compileErr = c.Compile("schema.json")
	})
	if compileErr != nil {
		return fmt.Errorf("results schema: %w", compileErr)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return compiled.Validate(inst)
}
