package record

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tandem-bench/tandem/internal/redact"
)

// Marker replaces a redacted value (a binary body's matches are masked
// byte for byte instead, so its framing still holds).
const Marker = redact.Hidden

// SecretHeaders are always redacted, unless secrets are kept.
var SecretHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// Rules say what is redacted when an exchange is recorded.
type Rules struct {
	// Headers are patterns of further header names whose values are
	// redacted (matched against the canonical name, case-insensitively).
	Headers []*regexp.Regexp
	// Values are patterns redacted wherever they match in header values,
	// the query and the body.
	Values []*regexp.Regexp
	// Keep keeps everything: nothing is redacted.
	Keep bool
}

// CompileRules compiles --redact-header and --redact-value patterns.
func CompileRules(headers, values []string, keep bool) (Rules, error) {
	r := Rules{Keep: keep}
	for _, p := range headers {
		re, err := regexp.Compile("(?i)" + p)
		if err != nil {
			return Rules{}, fmt.Errorf("--redact-header %q: %w", p, err)
		}
		r.Headers = append(r.Headers, re)
	}
	for _, p := range values {
		re, err := regexp.Compile(p)
		if err != nil {
			return Rules{}, fmt.Errorf("--redact-value %q: %w", p, err)
		}
		if re.MatchString("") {
			return Rules{}, fmt.Errorf("--redact-value %q: matches the empty string (want a pattern of the secret itself)", p)
		}
		r.Values = append(r.Values, re)
	}
	return r, nil
}

// secretHeader reports whether a header's value is redacted whole.
func (r Rules) secretHeader(name string) bool {
	if slices.ContainsFunc(SecretHeaders, func(s string) bool { return strings.EqualFold(s, name) }) {
		return true
	}
	return slices.ContainsFunc(r.Headers, func(re *regexp.Regexp) bool { return re.MatchString(name) })
}

// Apply redacts e's request in place (its headers, query and body) and
// its answer's headers, and notes what it redacted in e.Redacted.
func (r Rules) Apply(e *Exchange) {
	if r.Keep {
		return
	}
	for _, name := range sortedKeys(e.Headers) {
		if r.redactHeader(e.Headers, name) {
			e.Redacted = append(e.Redacted, "header "+name)
		}
	}
	for _, name := range sortedKeys(e.AnswerHeaders) {
		r.redactHeader(e.AnswerHeaders, name)
	}
	if path, query, ok := strings.Cut(e.Path, "?"); ok {
		if q := r.text(query); q != query {
			e.Path = path + "?" + q
			e.Redacted = append(e.Redacted, "query")
		}
	}
	if b := r.body(e.Body); !bytes.Equal(b, e.Body) {
		e.Body = b
		e.Redacted = append(e.Redacted, "body")
	}
}

// redactHeader redacts one header's values; true if any changed.
func (r Rules) redactHeader(h http.Header, name string) bool {
	vs := h[name]
	changed := false
	for i, v := range vs {
		nv := Marker
		if !r.secretHeader(name) {
			nv = r.text(v)
		}
		if nv != v {
			vs[i], changed = nv, true
		}
	}
	return changed
}

// text is s with every value pattern's matches replaced by Marker.
func (r Rules) text(s string) string {
	for _, re := range r.Values {
		s = re.ReplaceAllLiteralString(s, Marker)
	}
	return s
}

// body is b with every value pattern's matches redacted: replaced by
// Marker in text, masked with x bytes of the same length in binary (so a
// gRPC frame's lengths still hold).
func (r Rules) body(b []byte) []byte {
	if len(r.Values) == 0 || len(b) == 0 {
		return b
	}
	if utf8.Valid(b) {
		return []byte(r.text(string(b)))
	}
	out := bytes.Clone(b)
	for _, re := range r.Values {
		for _, m := range re.FindAllIndex(out, -1) {
			for i := m[0]; i < m[1]; i++ {
				out[i] = 'x'
			}
		}
	}
	return out
}

func sortedKeys(h http.Header) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
