package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tandem-bench/tandem/internal/host"
)

// New returns a Results with the schema set and every list empty, not null.
func New() *Results {
	return &Results{Schema: Schema, Targets: []Target{}, Scenarios: []Scenario{}, Sweeps: []Sweep{},
		Findings: []Finding{}, Warnings: []string{}}
}

// Marshal encodes r as indented JSON with a final newline.
func Marshal(r *Results) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encode results: %w", err)
	}
	return buf.Bytes(), nil
}

// Write stores r at path atomically: it writes a temporary file beside it,
// syncs it and renames it over path, so path always holds a whole file.
func Write(path string, r *Results) error {
	data, err := Marshal(r)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, data)
}

// WriteFileAtomic writes data to path through a synced temporary file and a
// rename.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPattern(filepath.Base(path)))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// tempPrefix starts a temporary file's name: ".NAME.tandem-PID-NONCE.tmp".
func tempPrefix(name string) string { return "." + strings.ReplaceAll(name, "*", "_") + ".tandem-" }

// tempPattern is os.CreateTemp's pattern for a temporary copy of name made
// by this process (the * becomes a random nonce).
func tempPattern(name string) string { return host.StaleName(tempPrefix(name)) + "*.tmp" }

// RemoveStaleTemps removes from dir the temporary files WriteFileAtomic
// left there when its process was killed mid-write, and returns their
// names. Only a name WriteFileAtomic makes (".NAME.tandem-PID-NONCE.tmp")
// whose process is no longer running is removed: a user's file, or a live
// run's, is never touched. A run calls it on its output directory first.
func RemoveStaleTemps(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		i := strings.LastIndex(name, ".tandem-")
		if i < 1 || !e.Type().IsRegular() || !host.Stale(path, name[:i+len(".tandem-")], ".tmp") {
			continue
		}
		if err := os.Remove(path); err != nil {
			return removed, err
		}
		removed = append(removed, name)
	}
	return removed, nil
}

// Parse decodes results.json bytes. It refuses a file without the tandem
// schema identifier or with a major version other than 1, and reports
// syntax errors with their line and column.
func Parse(data []byte) (*Results, error) {
	var head struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, jsonError(data, err)
	}
	if head.Schema == nil {
		return nil, errors.New(`no "schema" field: not a tandem results file`)
	}
	major, ok := strings.CutPrefix(*head.Schema, schemaPrefix)
	if !ok {
		return nil, fmt.Errorf("schema %q is not a tandem results schema (want %s)", *head.Schema, Schema)
	}
	if v, err := strconv.Atoi(major); err != nil || v != 1 {
		return nil, fmt.Errorf("schema %q: %w: this tandem reads %s; use a tandem that knows this version", *head.Schema, ErrVersion, Schema)
	}
	r := New()
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(r); err != nil {
		return nil, jsonError(data, err)
	}
	return r, nil
}

// Read reads and parses a results file; errors name the file.
func Read(path string) (*Results, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := Parse(data)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) && pe.Line > 0 {
			return nil, fmt.Errorf("%s:%w", path, err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// ParseError is a syntax or type error in a results file, with its
// position when known.
type ParseError struct {
	Line, Col int
	Err       error
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%d:%d: %v", e.Line, e.Col, e.Err)
	}
	return e.Err.Error()
}

func (e *ParseError) Unwrap() error { return e.Err }

// jsonError attaches the line and column of a decoding error.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	if off < 0 {
		return &ParseError{Err: err}
	}
	// Offsets count the bytes read, the offending one included.
	line, col := lineCol(data, max(off-1, 0))
	return &ParseError{Line: line, Col: col, Err: err}
}

func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// JSONSchema returns the JSON Schema of results.json.
func JSONSchema() []byte { return append([]byte(nil), jsonSchema...) }
