package study

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Pos is a position in a study file.
type Pos struct{ Line, Col int }

// Error is one problem in a study file.
type Error struct {
	File string
	Pos
	// Path is the dotted path of the offending value, e.g. scenarios[1].call.
	Path string
	// Msg says what is wrong; Expected, if set, what was expected instead.
	Msg, Expected string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: ", e.File, e.Line, e.Col)
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	if e.Expected != "" {
		b.WriteString(" (" + e.Expected + ")")
	}
	return b.String()
}

// ErrorList is every problem found in a study file, in file order.
type ErrorList []*Error

func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Value is a free-form YAML value (a request body, a case's values),
// decoded to nil, bool, int64, float64, string, []any or map[string]any.
type Value struct {
	V   any
	Pos Pos
	set bool
}

// IsSet reports whether the key was present in the file.
func (v Value) IsSet() bool { return v.set }

// NewValue is a value that is set, as if read from a file (for calls made
// in code, such as `tandem load`'s).
func NewValue(v any) Value { return Value{V: v, set: true} }

// IntList is a positive integer or a list of them.
type IntList []int

var (
	durationType = reflect.TypeFor[time.Duration]()
	valueType    = reflect.TypeFor[Value]()
	intListType  = reflect.TypeFor[IntList]()
)

// decoder decodes YAML nodes into the study types strictly: unknown keys,
// wrong types, duplicate keys and missing required keys are all errors, and
// decoding goes on after one so that every error is reported at once.
type decoder struct {
	file string
	errs ErrorList
	// pos records the position of every decoded value by its path.
	pos map[string]Pos
	// strs records every string decoded that holds a placeholder, by its
	// path (see envElsewhere).
	strs map[string]string
	// budget bounds the nodes decoded, so aliases cannot expand a small
	// file into an enormous study.
	budget int
	// full is set once maxErrors+1 errors are collected: decoding stops
	// there, as it does when the budget runs out.
	full bool
}

// maxNodes is the most YAML nodes a study may expand to.
const maxNodes = 1 << 18

// maxFileSize is the largest study (or compat case file) read, so that a
// huge file is refused before it is parsed.
const maxFileSize = 8 << 20

// maxErrors is the most errors reported for one file; past it, one last
// error says there are more (see capErrors).
const maxErrors = 100

// spend takes one node from the budget and reports whether any was left.
func (d *decoder) spend(n *yaml.Node, path string) bool {
	d.budget--
	if d.budget == 0 {
		d.errorf(n, path, "at most 262,144 values after aliases are expanded", "study too large")
	}
	return d.budget > 0
}

func (d *decoder) errorf(n *yaml.Node, path, expected, format string, args ...any) {
	if d.full {
		return
	}
	d.errs = append(d.errs, &Error{File: d.file, Pos: Pos{n.Line, n.Column}, Path: path, Msg: fmt.Sprintf(format, args...), Expected: expected})
	// One more than is reported, so capErrors knows where the rest begin.
	d.full = len(d.errs) > maxErrors
}

// stop reports whether decoding should stop: the budget is spent or the
// errors are more than are reported.
func (d *decoder) stop() bool { return d.budget <= 0 || d.full }

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!null":
		return "null"
	case "!!bool":
		return "a boolean " + n.Value
	case "!!int":
		return "the integer " + n.Value
	case "!!float":
		return "the number " + n.Value
	}
	return strconv.Quote(n.Value)
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	n = resolve(n)
	if d.full || !d.spend(n, path) {
		return
	}
	d.pos[path] = Pos{n.Line, n.Column}
	if d.decodeSpecial(n, v, path) {
		return
	}
	t := v.Type()
	switch t.Kind() {
	case reflect.Pointer:
		if n.Tag == "!!null" {
			return
		}
		p := reflect.New(t.Elem())
		d.decode(n, p.Elem(), path)
		v.Set(p)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	default:
		d.decodeScalar(n, v, path)
	}
}

// decodeSpecial decodes the types with a YAML form of their own (Value,
// durations, a recording or an IntList written as a scalar) and says
// whether v was one.
func (d *decoder) decodeSpecial(n *yaml.Node, v reflect.Value, path string) bool {
	t := v.Type()
	switch {
	case t == valueType:
		v.Set(reflect.ValueOf(Value{V: d.free(n, path), Pos: Pos{n.Line, n.Column}, set: true}))
		return true
	case t == durationType:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
			d.errorf(n, path, "a duration such as 500ms, 5s or 2m", "got %s", describe(n))
			return true
		}
		dur, err := time.ParseDuration(n.Value)
		if err != nil || dur < 0 {
			d.errorf(n, path, "a duration such as 500ms, 5s or 2m", "bad duration %q", n.Value)
			return true
		}
		v.SetInt(int64(dur))
		return true
	case t == recordingType && n.Kind == yaml.ScalarNode: // a file name alone
		var file string
		before := len(d.errs)
		d.decode(n, reflect.ValueOf(&file).Elem(), path)
		switch {
		case len(d.errs) > before:
		case strings.TrimSpace(file) == "":
			d.errorf(n, path, "a recording's file, relative to the study file", "no file")
		default:
			v.Set(reflect.ValueOf(Recording{File: file}))
		}
		return true
	case t == intListType:
		if n.Kind == yaml.ScalarNode {
			var one int
			before := len(d.errs)
			d.decode(n, reflect.ValueOf(&one).Elem(), path)
			if len(d.errs) > before {
				return true // one mistake, one message
			}
			if one <= 0 {
				d.errorf(n, path, "a positive integer or a list of them", "got %s", describe(n))
				return true
			}
			v.Set(reflect.ValueOf(IntList{one}))
			return true
		}
	}
	return false
}

// decodeMap decodes a mapping into the map v, each key once.
func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	t := v.Type()
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "a mapping", "got %s", describe(n))
		return
	}
	m := reflect.MakeMap(t)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content) && !d.stop(); i += 2 {
		k, val := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, "a string key", "got %s", describe(k))
			continue
		}
		if seen[k.Value] {
			d.errorf(k, join(path, k.Value), "each key once", "duplicate key %q", k.Value)
			continue
		}
		seen[k.Value] = true
		e := reflect.New(t.Elem()).Elem()
		d.decode(val, e, join(path, k.Value))
		m.SetMapIndex(reflect.ValueOf(k.Value), e)
	}
	v.Set(m)
}

// decodeSlice decodes a list into the slice v.
func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "a list", "got %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, c := range n.Content {
		if d.stop() {
			break
		}
		d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

// decodeScalar decodes a string, a boolean or a non-negative number into v.
func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path string) {
	switch t := v.Type(); t.Kind() {
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || n.Tag == "!!bool" {
			d.errorf(n, path, "a string", "got %s", describe(n))
			return
		}
		v.SetString(n.Value)
		d.placeholder(path, n.Value)
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			d.errorf(n, path, "true or false", "got %s", describe(n))
			return
		}
		v.SetBool(n.Value == "true")
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || err != nil || i < 0 || v.OverflowInt(i) {
			d.errorf(n, path, "a non-negative integer", "got %s", describe(n))
			return
		}
		v.SetInt(i)
	case reflect.Uint64:
		u, err := strconv.ParseUint(n.Value, 0, 64)
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || err != nil {
			d.errorf(n, path, "a non-negative integer", "got %s", describe(n))
			return
		}
		v.SetUint(u)
	case reflect.Float64:
		f, err := strconv.ParseFloat(n.Value, 64)
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			d.errorf(n, path, "a non-negative number", "got %s", describe(n))
			return
		}
		v.SetFloat(f)
	default:
		panic(fmt.Sprintf("study: no decoder for %s", t))
	}
}

// field is one YAML key of a struct type.
type field struct {
	key      string
	index    int
	required bool
	doc      string
	// want, from a want tag, is what an error decoding the field's value
	// says was expected, instead of its type's (a number: a fraction).
	want string
}

func fields(t reflect.Type) []field {
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		key, opt, _ := strings.Cut(tag, ",")
		fs = append(fs, field{key: key, index: i, required: opt == "required", doc: t.Field(i).Tag.Get("doc"), want: t.Field(i).Tag.Get("want")})
	}
	return fs
}

func keyList(fs []field) string {
	keys := make([]string, len(fs))
	for i, f := range fs {
		keys[i] = f.key
	}
	return "one of: " + strings.Join(keys, ", ")
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "a mapping", "got %s", describe(n))
		return
	}
	fs := fields(v.Type())
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content) && !d.stop(); i += 2 {
		k, val := resolve(n.Content[i]), n.Content[i+1]
		idx := slices.IndexFunc(fs, func(f field) bool { return f.key == k.Value })
		switch {
		case k.Kind != yaml.ScalarNode:
			d.errorf(k, path, "a string key", "got %s", describe(k))
		case idx < 0:
			d.errorf(k, join(path, k.Value), keyList(fs), "unknown key %q", k.Value)
		case seen[k.Value]:
			d.errorf(k, join(path, k.Value), "each key once", "duplicate key %q", k.Value)
		default:
			seen[k.Value] = true
			before := len(d.errs)
			d.decode(val, v.Field(fs[idx].index), join(path, k.Value))
			for _, e := range d.errs[before:] {
				if fs[idx].want != "" && e.Path == join(path, k.Value) {
					e.Expected = fs[idx].want
				}
			}
		}
	}
	for _, f := range fs {
		if f.required && !seen[f.key] && !d.stop() {
			d.errorf(n, path, f.doc, "missing required key %q", f.key)
		}
	}
}

// free decodes a free-form value.
func (d *decoder) free(n *yaml.Node, path string) any {
	n = resolve(n)
	if d.full || !d.spend(n, path) {
		return nil
	}
	d.pos[path] = Pos{n.Line, n.Column}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content) && !d.stop(); i += 2 {
			k := resolve(n.Content[i])
			if _, dup := m[k.Value]; dup {
				d.errorf(k, join(path, k.Value), "each key once", "duplicate key %q", k.Value)
				continue
			}
			m[k.Value] = d.free(n.Content[i+1], join(path, k.Value))
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			if d.stop() {
				break
			}
			s[i] = d.free(c, fmt.Sprintf("%s[%d]", path, i))
		}
		return s
	}
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		return n.Value == "true"
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(n.Value, 0, 64); err == nil {
			return u
		}
		d.errorf(n, path, "an integer that fits in 64 bits", "integer %s out of range", n.Value)
		return nil
	case "!!float":
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			d.errorf(n, path, "a number", "bad number %s", n.Value)
		}
		return f
	}
	d.placeholder(path, n.Value)
	return n.Value
}

// placeholder records a string that holds a placeholder.
func (d *decoder) placeholder(path, s string) {
	if strings.Contains(s, "${") {
		d.strs[path] = s
	}
}

// yamlFile is what parseYAML read of a file besides its value.
type yamlFile struct {
	// pos locates every value by its path; strs holds every string with a
	// placeholder, by its path.
	pos  map[string]Pos
	strs map[string]string
	// errs are the structural errors; decoded is false when the file is
	// not YAML, is empty, is too large or has more errors than are
	// reported, so that no further check runs.
	errs    ErrorList
	decoded bool
}

// parseYAML decodes data into s, collecting every structural error.
func parseYAML(file string, data []byte, s any) yamlFile {
	d := &decoder{file: file, pos: map[string]Pos{}, strs: map[string]string{}, budget: maxNodes}
	failed := func(e *Error) yamlFile { return yamlFile{pos: d.pos, strs: d.strs, errs: ErrorList{e}} }
	if len(data) > maxFileSize {
		return failed(sizeError(file, int64(len(data)), true))
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return failed(syntaxError(file, err))
	}
	if len(doc.Content) == 0 {
		return failed(&Error{File: file, Pos: Pos{1, 1}, Msg: "empty study", Expected: "a mapping with version, name, targets and calls"})
	}
	d.decode(doc.Content[0], reflect.ValueOf(s).Elem(), "")
	// A second document would be ignored: refuse it where it starts.
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == io.EOF:
	case err != nil:
		d.errs = append(d.errs, syntaxError(file, err))
	default:
		d.errs = append(d.errs, &Error{File: file, Pos: Pos{max(next.Line, 1), max(next.Column, 1)},
			Msg: msgSecondDocument, Expected: "one document: a study file holds one study"})
	}
	// A study over the budget is rejected as it is: checking what was
	// decoded of it would walk up to the budget's values again. One with
	// more errors than are reported was not decoded to the end.
	return yamlFile{pos: d.pos, strs: d.strs, errs: d.errs, decoded: !d.stop()}
}

// readFile reads a study (or compat case) file, refusing one over
// maxFileSize before it is read whole; that refusal is an ErrorList.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > maxFileSize {
		return nil, ErrorList{sizeError(path, fi.Size(), true)}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, ErrorList{sizeError(path, 0, false)}
	}
	return data, nil
}

// msgSecondDocument is the error of a file with a second YAML document.
const msgSecondDocument = "a second YAML document"

// fileLevel reports whether an error is about the file as a whole (a
// second document, or a syntax error in it), not about a value of the
// study, so that it does not keep the values from being checked.
func fileLevel(e *Error) bool {
	return e.Path == "" && (e.Msg == msgSecondDocument || strings.HasPrefix(e.Msg, "YAML syntax: "))
}

// syntaxError is a YAML parser's error, located.
func syntaxError(file string, err error) *Error {
	line := 1
	msg := err.Error()
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		// yaml.v3 syntax errors read "yaml: line N: what".
		if rest, ok := strings.CutPrefix(msg, "yaml: line "); ok {
			if num, what, ok := strings.Cut(rest, ": "); ok {
				if l, err := strconv.Atoi(num); err == nil && l > 0 {
					line, msg = l, what
				}
			}
		}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	return &Error{File: file, Pos: Pos{line, 1}, Msg: "YAML syntax: " + msg}
}

// sizeError refuses a file of size bytes, over maxFileSize; exact is false
// when only a part of it was read.
func sizeError(file string, size int64, exact bool) *Error {
	msg := fmt.Sprintf("file of %s bytes", thousands(size))
	if !exact {
		msg = fmt.Sprintf("file of more than %s bytes", thousands(maxFileSize))
	}
	return &Error{File: file, Pos: Pos{1, 1}, Msg: msg + " is too large",
		Expected: fmt.Sprintf("at most %s bytes (8 MiB)", thousands(maxFileSize))}
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// capErrors sorts errs in file order and keeps the first maxErrors, with
// one last error, where the first left out is, saying there are more.
func capErrors(errs ErrorList) ErrorList {
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Line != errs[j].Line {
			return errs[i].Line < errs[j].Line
		}
		return errs[i].Col < errs[j].Col
	})
	if len(errs) <= maxErrors {
		return errs
	}
	rest := errs[maxErrors]
	return append(errs[:maxErrors:maxErrors], &Error{File: rest.File, Pos: rest.Pos, Msg: "… and more errors",
		Expected: fmt.Sprintf("only the first %d are reported", maxErrors)})
}
