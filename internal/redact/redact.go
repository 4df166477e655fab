// Package redact hides the passwords of URLs in what tandem prints and
// writes: progress lines, errors, results.
package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
)

// urlPassword matches the scheme://user:password@ of a URL.
var urlPassword = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*:)[^@\s/]+@`)

// Hidden is what a password is replaced with.
const Hidden = "xxx"

// URLs returns s with the password of every URL in it replaced by Hidden;
// the rest of s, the URLs included, stays as written.
func URLs(s string) string { return urlPassword.ReplaceAllString(s, "${1}"+Hidden+"@") }

// Copy sets dst (a pointer) to a deep copy of src in which every string,
// map keys included, has passed through hide: whatever a value holds, in
// any field, now or added later. src and dst are JSON values (src is
// encoded and dst decoded with encoding/json; numbers keep every digit).
func Copy(dst, src any, hide func(string) string) error {
	data, err := json.Marshal(src)
	if err != nil {
		return fmt.Errorf("redact: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return fmt.Errorf("redact: %w", err)
	}
	if data, err = json.Marshal(hideAll(tree, hide)); err != nil {
		return fmt.Errorf("redact: %w", err)
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return fmt.Errorf("redact: %w", err)
	}
	return nil
}

// hideAll is v, a decoded JSON value, with every string passed through
// hide.
func hideAll(v any, hide func(string) string) any {
	switch v := v.(type) {
	case string:
		return hide(v)
	case []any:
		for i := range v {
			v[i] = hideAll(v[i], hide)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[hide(k)] = hideAll(e, hide)
		}
		return out
	}
	return v // numbers, booleans, null
}
