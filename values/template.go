package values

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Context is where a text template's output goes; it decides how a value
// is written there.
type Context uint8

// The contexts of a text template (a JSON document has CompileJSON).
const (
	// Text takes values as they are: a TCP send, a body that is text.
	Text Context = iota + 1
	// URL is a request target (path and query): a value before the
	// first '?' is percent-encoded as a path segment (url.PathEscape: a '/'
	// in it is %2F), after it as a query component (url.QueryEscape).
	URL
	// Header is an HTTP header value: a source whose value could hold a
	// control character (CR and LF among them) is refused when compiled,
	// so that no value can split the header.
	Header
)

// String names the context, for errors.
func (c Context) String() string {
	switch c {
	case Text:
		return "text"
	case URL:
		return "URL"
	case Header:
		return "header"
	}
	return fmt.Sprintf("Context(%d)", c)
}

// enc is how one splice writes its value.
type enc uint8

const (
	encText       enc = iota + 1 // as text
	encPath                      // percent-encoded, a path segment
	encQuery                     // percent-encoded, a query component
	encHeader                    // as text, checked for control characters
	encJSON                      // a JSON value of the value's type
	encJSONString                // inside a JSON string
)

// Template is a request part compiled once: literal bytes and splice
// points. It does not change once compiled: any goroutine may render it,
// each with its own Renderer.
type Template struct {
	set   *Set
	parts []part
	tail  []byte
	names []string
	time  bool
	slots bool
}

// part is literal bytes, then one value.
type part struct {
	lit []byte
	ref ref
	enc enc
	// name is the placeholder, for errors
	name string
}

// Names lists the placeholders the template uses (NAME or NAME.COLUMN), in
// order of first use.
func (t *Template) Names() []string { return slices.Clone(t.names) }

// UsesTime reports whether the template holds a time value: only then does
// Append read its now.
func (t *Template) UsesTime() bool { return t.time }

// UsesSlots reports whether the template holds a Slot: it renders only
// once its Renderer has the slot's value.
func (t *Template) UsesSlots() bool { return t.slots }

// Static reports whether the template has no placeholders: every request
// renders the same bytes, which the caller may encode once.
func (t *Template) Static() bool { return len(t.parts) == 0 }

// Append appends request i's rendering to dst, with now as the send time
// of time values. It allocates nothing once r's buffers have grown. On an
// error (a once feeder past its last row: ErrExhausted; a feeder's file
// unreadable) dst is returned as it was.
func (t *Template) Append(dst []byte, r *Renderer, i uint64, now time.Time) ([]byte, error) {
	if r.set != t.set {
		return dst, errors.New("values: the Renderer is of another Set than the template")
	}
	start := len(dst)
	for k := range t.parts {
		p := &t.parts[k]
		dst = append(dst, p.lit...)
		v, err := r.value(p.ref, i, now)
		if err != nil {
			return dst[:start], fmt.Errorf("${%s}: %w", p.name, err)
		}
		switch p.enc {
		case encText:
			dst = appendText(dst, v)
		case encPath:
			dst = appendURL(dst, v, pathSegment)
		case encQuery:
			dst = appendURL(dst, v, queryPart)
		case encHeader:
			n := len(dst)
			dst = appendText(dst, v)
			if headerUnsafe(dst[n:]) >= 0 {
				return dst[:start], fmt.Errorf("${%s}: request %d's value has a control character, which an HTTP header cannot carry", p.name, i)
			}
		case encJSON:
			dst = appendJSON(dst, v)
		case encJSONString:
			dst = appendJSONInString(dst, v)
		}
	}
	return append(dst, t.tail...), nil
}

// segment is a piece of a template's text: literal text, or a placeholder.
type segment struct {
	lit  string
	name string // "" for literal text
}

// parseText splits s into literal text and placeholders ${NAME}, as the
// study format writes them: "$${" stands for a literal "${"; an unclosed
// or empty placeholder is an error.
func parseText(s string) ([]segment, error) {
	var segs []segment
	var lit strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			lit.WriteString(s)
			break
		}
		if i > 0 && s[i-1] == '$' {
			lit.WriteString(s[:i-1] + "${")
			s = s[i+2:]
			continue
		}
		lit.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unclosed placeholder in %q", s[i:])
		}
		name := s[i+2 : i+end]
		if name == "" {
			return nil, errors.New("empty placeholder ${}")
		}
		if lit.Len() > 0 {
			segs = append(segs, segment{lit: lit.String()})
			lit.Reset()
		}
		segs = append(segs, segment{name: name})
		s = s[i+end+1:]
	}
	if lit.Len() > 0 {
		segs = append(segs, segment{lit: lit.String()})
	}
	return segs, nil
}

// Placeholders lists the names of the placeholders in s, each once, in
// order of first use; a malformed placeholder is an error.
func Placeholders(s string) ([]string, error) {
	segs, err := parseText(s)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, g := range segs {
		if g.name != "" && !slices.Contains(names, g.name) {
			names = append(names, g.name)
		}
	}
	return names, nil
}

// builder assembles a template: literal bytes pending, then a splice.
type builder struct {
	t   *Template
	lit []byte
}

func (b *builder) splice(name string, r ref, e enc) {
	b.t.parts = append(b.t.parts, part{lit: b.lit, ref: r, enc: e, name: name})
	b.lit = nil
	if !slices.Contains(b.t.names, name) {
		b.t.names = append(b.t.names, name)
	}
	if _, ok := r.gen.(*timeGen); ok {
		b.t.time = true
	}
	if r.slot > 0 {
		b.t.slots = true
	}
}

func (b *builder) done() *Template {
	b.t.tail = b.lit
	return b.t
}

// Compile compiles text with placeholders ${NAME} (a generator) and
// ${NAME.COLUMN} (a feeder's column) for context c. An unknown name is an
// error that lists the names there are.
func (s *Set) Compile(text string, c Context) (*Template, error) {
	if c != Text && c != URL && c != Header {
		return nil, fmt.Errorf("unknown context %d", c)
	}
	segs, err := parseText(text)
	if err != nil {
		return nil, err
	}
	b := builder{t: &Template{set: s}}
	query := false
	for _, g := range segs {
		if g.name == "" {
			if c == Header && headerUnsafe([]byte(g.lit)) >= 0 {
				return nil, fmt.Errorf("a header value with a line break or another control character in its text: %q", g.lit)
			}
			b.lit = append(b.lit, g.lit...)
			query = query || strings.Contains(g.lit, "?")
			continue
		}
		r, err := s.resolve(g.name)
		if err != nil {
			return nil, err
		}
		e := encText
		switch {
		case c == URL && query:
			e = encQuery
		case c == URL:
			e = encPath
		case c == Header:
			if err := s.headerSafe(g.name, r); err != nil {
				return nil, err
			}
			e = encHeader
		}
		b.splice(g.name, r, e)
	}
	return b.done(), nil
}

// CompileJSON compiles a JSON document given as the tree YAML or JSON
// decoding makes (maps, lists, strings, numbers, booleans, nil); it renders
// compact, with map keys sorted. A string that is exactly one placeholder
// takes the value with its type (a number stays a number, bytes are a
// base64 string); a placeholder inside a longer string is written as text,
// escaped for JSON. Map keys are written as they are.
func (s *Set) CompileJSON(v any) (*Template, error) {
	b := builder{t: &Template{set: s}}
	if err := s.compileJSON(&b, v); err != nil {
		return nil, err
	}
	return b.done(), nil
}

func (s *Set) compileJSON(b *builder, v any) error {
	switch x := v.(type) {
	case nil:
		b.lit = append(b.lit, "null"...)
	case bool:
		b.lit = strconv.AppendBool(b.lit, x)
	case string:
		return s.compileJSONString(b, x)
	case int64:
		b.lit = strconv.AppendInt(b.lit, x, 10)
	case int:
		b.lit = strconv.AppendInt(b.lit, int64(x), 10)
	case uint64:
		b.lit = strconv.AppendUint(b.lit, x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%v is not a JSON number", x)
		}
		b.lit = appendFloat(b.lit, x)
	case json.Number:
		if !json.Valid([]byte(x)) {
			return fmt.Errorf("%q is not a JSON number", string(x))
		}
		b.lit = append(b.lit, x...)
	case []any:
		b.lit = append(b.lit, '[')
		for k, e := range x {
			if k > 0 {
				b.lit = append(b.lit, ',')
			}
			if err := s.compileJSON(b, e); err != nil {
				return fmt.Errorf("[%d]: %w", k, err)
			}
		}
		b.lit = append(b.lit, ']')
	case map[string]any:
		b.lit = append(b.lit, '{')
		for k, key := range slices.Sorted(maps.Keys(x)) {
			if k > 0 {
				b.lit = append(b.lit, ',')
			}
			b.lit = append(b.lit, '"')
			b.lit = appendJSONString(b.lit, []byte(key))
			b.lit = append(b.lit, '"', ':')
			if err := s.compileJSON(b, x[key]); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
		}
		b.lit = append(b.lit, '}')
	default:
		return fmt.Errorf("a %T is not a JSON value", v)
	}
	return nil
}

func (s *Set) compileJSONString(b *builder, x string) error {
	segs, err := parseText(x)
	if err != nil {
		return err
	}
	if len(segs) == 1 && segs[0].name != "" {
		r, err := s.resolve(segs[0].name)
		if err != nil {
			return err
		}
		b.splice(segs[0].name, r, encJSON)
		return nil
	}
	b.lit = append(b.lit, '"')
	for _, g := range segs {
		if g.name == "" {
			b.lit = appendJSONString(b.lit, []byte(g.lit))
			continue
		}
		r, err := s.resolve(g.name)
		if err != nil {
			return err
		}
		b.splice(g.name, r, encJSONString)
	}
	b.lit = append(b.lit, '"')
	return nil
}

// resolve finds what a placeholder names.
func (s *Set) resolve(name string) (ref, error) {
	if k, ok := s.slots[name]; ok {
		return ref{slot: k + 1}, nil
	}
	if g, ok := s.gens[name]; ok {
		return ref{gen: g}, nil
	}
	if fi, ok := s.feeders[name]; ok {
		return ref{}, fmt.Errorf("${%s} is a feeder: name one of its columns, as ${%s.%s}", name, name, s.list[fi].columns[0])
	}
	if feeder, col, ok := strings.Cut(name, "."); ok {
		if fi, ok := s.feeders[feeder]; ok {
			f := s.list[fi]
			c, ok := f.col[col]
			if !ok {
				return ref{}, fmt.Errorf("${%s}: %s has no column %q (its columns: %s)", name, f.path, col, strings.Join(f.columns, ", "))
			}
			return ref{feeder: fi, col: c}, nil
		}
		if _, ok := s.gens[feeder]; ok {
			return ref{}, fmt.Errorf("${%s}: %s is a generator, not a feeder: it has no columns", name, feeder)
		}
	}
	return ref{}, fmt.Errorf("unknown value ${%s} (the values: %s)", name, s.known())
}

// known lists the names for an error: generators, and feeders as NAME.*.
func (s *Set) known() string {
	var l []string
	for name := range s.gens {
		l = append(l, name)
	}
	for name := range s.feeders {
		l = append(l, name+".*")
	}
	for name := range s.slots {
		l = append(l, name)
	}
	if len(l) == 0 {
		return "none"
	}
	slices.Sort(l)
	return strings.Join(l, ", ")
}

// headerSafe refuses a source whose value could hold a byte an HTTP header
// cannot carry: random bytes, a choice or a feeder's column with a control
// character.
func (s *Set) headerSafe(name string, r ref) error {
	if r.slot > 0 {
		return nil // set at run time: Append checks each value
	}
	switch g := r.gen.(type) {
	case nil:
		f := s.list[r.feeder]
		if line := f.unsafe[r.col]; line > 0 {
			return fmt.Errorf("%s:%d: column %q has a line break or another control character, which an HTTP header cannot carry (${%s} is in a header)", f.path, line, f.columns[r.col], name)
		}
	case *bytesGen:
		if !g.hex {
			return fmt.Errorf("${%s} is random bytes, which may hold CR or LF: an HTTP header cannot carry them (hex can)", name)
		}
	case *choiceGen:
		for k, o := range g.options {
			if (o.t == tString || o.t == tRaw) && headerUnsafe(o.b) >= 0 {
				return fmt.Errorf("${%s}: choice %d has a line break or another control character, which an HTTP header cannot carry", name, k+1)
			}
		}
	}
	return nil
}
