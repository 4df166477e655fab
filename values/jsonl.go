package values

import (
	"bytes"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// The JSONL reader: a feeder's line is checked once with json.Valid when
// the file is opened; these functions then walk an object's members
// without allocating. They never read past their input, whatever it holds
// (FuzzJSONL gives them any bytes), and report what is not an object.

// jsonMembers walks the members of the JSON object in b.
type jsonMembers struct {
	b []byte
	i int
}

// errNotObject says a line's JSON value is not an object.
var errNotObject = errors.New("not a JSON object")

// errBadJSON says a line is not the JSON it was when the file was opened.
var errBadJSON = errors.New("not valid JSON")

// newMembers starts at the object in b, or says what b holds instead.
func newMembers(b []byte) (jsonMembers, error) {
	i := skipSpace(b, 0)
	if i >= len(b) {
		return jsonMembers{}, errBadJSON
	}
	if b[i] != '{' {
		return jsonMembers{}, errNotObject
	}
	return jsonMembers{b: b, i: skipSpace(b, i+1)}, nil
}

// next returns the next member: its key with its quotes, and its value.
// ok is false after the last; err says the object is not valid JSON.
func (m *jsonMembers) next() (key, val []byte, ok bool, err error) {
	b, i := m.b, m.i
	if i < len(b) && b[i] == '}' {
		return nil, nil, false, nil
	}
	if i >= len(b) || b[i] != '"' {
		return nil, nil, false, errBadJSON
	}
	ke := stringEnd(b, i)
	if ke < 0 {
		return nil, nil, false, errBadJSON
	}
	j := skipSpace(b, ke)
	if j >= len(b) || b[j] != ':' {
		return nil, nil, false, errBadJSON
	}
	j = skipSpace(b, j+1)
	ve := valueEnd(b, j)
	if ve <= j {
		return nil, nil, false, errBadJSON
	}
	key, val = b[i:ke], b[j:ve]
	j = skipSpace(b, ve)
	if j < len(b) && b[j] == ',' {
		j = skipSpace(b, j+1)
	}
	m.i = j
	return key, val, true, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the JSON string that starts at b[i], or −1
// when it is not closed.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd is the index after the JSON value that starts at b[i], or −1
// when it is not closed.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = stringEnd(b, j) - 1; j < 0 {
					return -1
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

// appendUnquoted appends the JSON string s (with its quotes) decoded, as
// encoding/json decodes it: invalid UTF-8 and lone surrogates become
// U+FFFD.
func appendUnquoted(dst, s []byte) []byte {
	if len(s) < 2 {
		return dst
	}
	s = s[1 : len(s)-1]
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			var r rune
			r, i = unescape(s, i)
			dst = utf8.AppendRune(dst, r)
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			dst = utf8.AppendRune(dst, r) // RuneError for invalid UTF-8
			i += size
		}
	}
	return dst
}

// unescape reads the escape at s[i] == '\\' and returns its rune and the
// index after it; a surrogate pair is one rune.
func unescape(s []byte, i int) (rune, int) {
	switch s[i+1] {
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	case 'u':
		r, ok := hex4(s, i+2)
		if !ok {
			return utf8.RuneError, len(s)
		}
		if !utf16.IsSurrogate(r) {
			return r, i + 6
		}
		if i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
			r2, ok := hex4(s, i+8)
			if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
				return dec, i + 12
			}
		}
		return utf8.RuneError, i + 6
	}
	return rune(s[i+1]), i + 2 // '"', '\\', '/'
}

// hex4 reads four hex digits at s[i].
func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// appendCompact appends the JSON value v without the whitespace outside
// its strings.
func appendCompact(dst, v []byte) []byte {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case ' ', '\t', '\n', '\r':
		case '"':
			e := stringEnd(v, i)
			if e < 0 {
				return append(dst, v[i:]...)
			}
			dst = append(dst, v[i:e]...)
			i = e - 1
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// jsonKind names what a JSON value is, from its first byte.
func jsonKind(v []byte) string {
	i := skipSpace(v, 0)
	if i >= len(v) {
		return "nothing"
	}
	switch v[i] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// jsonKey is a member's key decoded, in buf when it has escapes or
// invalid UTF-8.
func jsonKey(buf, quoted []byte) ([]byte, []byte) {
	if k := quoted[1 : len(quoted)-1]; bytes.IndexByte(k, '\\') < 0 && utf8.Valid(k) {
		return buf, k
	}
	buf = appendUnquoted(buf[:0], quoted)
	return buf, buf
}
