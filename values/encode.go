package values

import (
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"
)

// vtype is the type of one value.
type vtype uint8

const (
	tInt    vtype = iota + 1 // n
	tFloat                   // f
	tString                  // b, text
	tBytes                   // b, binary: base64 in JSON
	tRaw                     // b, a JSON literal other than a string: number, true, false, null, object, array
)

// value is one value of one request. b points into a Renderer's buffers or
// a feeder's window: it is valid until the Renderer's next value.
type value struct {
	t vtype
	n int64
	f float64
	b []byte
}

// appendText appends v as it reads inside text: strings and bytes as they
// are, numbers in JSON's notation, other JSON values as JSON.
func appendText(dst []byte, v value) []byte {
	switch v.t {
	case tInt:
		return strconv.AppendInt(dst, v.n, 10)
	case tFloat:
		return appendFloat(dst, v.f)
	}
	return append(dst, v.b...)
}

// appendJSON appends v as a JSON value: strings quoted, bytes as a base64
// string (protobuf JSON's form for bytes), numbers and literals as they are.
func appendJSON(dst []byte, v value) []byte {
	switch v.t {
	case tString:
		dst = append(dst, '"')
		dst = appendJSONString(dst, v.b)
		return append(dst, '"')
	case tBytes:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.b)
		return append(dst, '"')
	case tRaw:
		return append(dst, v.b...)
	}
	return appendText(dst, v)
}

// appendJSONInString appends v's text escaped for the inside of a JSON
// string; bytes as base64.
func appendJSONInString(dst []byte, v value) []byte {
	switch v.t {
	case tString, tRaw:
		return appendJSONString(dst, v.b)
	case tBytes:
		return base64.StdEncoding.AppendEncode(dst, v.b)
	}
	return appendText(dst, v)
}

// appendFloat appends f as encoding/json writes a float64.
func appendFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s escaped for the inside of a JSON string, byte
// for byte as encoding/json does without its HTML escaping: '"', '\\' and
// control characters escaped, U+2028 and U+2029 as \u escapes, invalid
// UTF-8 as \ufffd.
func appendJSONString(dst, s []byte) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// urlMode is how a value is percent-encoded in a request target.
type urlMode uint8

const (
	pathSegment urlMode = iota // as url.PathEscape: '/' encoded, so a value stays one segment
	queryPart                  // as url.QueryEscape: ' ' as '+', '&', '=' and '+' encoded
)

// appendURLEscaped appends s percent-encoded as url.PathEscape or
// url.QueryEscape would, without allocating.
func appendURLEscaped(dst, s []byte, mode urlMode) []byte {
	for _, c := range s {
		switch {
		case !urlEscapes(c, mode):
			dst = append(dst, c)
		case c == ' ' && mode == queryPart:
			dst = append(dst, '+')
		default:
			dst = append(dst, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&0xf])
		}
	}
	return dst
}

// urlEscapes is net/url's shouldEscape for path segments and query
// components.
func urlEscapes(c byte, mode urlMode) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return false
	}
	switch c {
	case '-', '_', '.', '~':
		return false
	case '$', '&', '+', ',', '/', ':', ';', '=', '?', '@':
		if mode == pathSegment {
			return c == '/' || c == ';' || c == ',' || c == '?'
		}
		return true
	}
	return true
}

// appendURL appends v's text percent-encoded for a path segment or a query.
func appendURL(dst []byte, v value, mode urlMode) []byte {
	switch v.t {
	case tInt:
		return strconv.AppendInt(dst, v.n, 10) // digits and '-' need no escape
	case tFloat:
		var buf [32]byte // '+' of an exponent is escaped in a query
		return appendURLEscaped(dst, appendFloat(buf[:0], v.f), mode)
	}
	return appendURLEscaped(dst, v.b, mode)
}

// headerUnsafe reports the first byte of s that may not be in an HTTP header
// value: a control character other than a tab (CR and LF among them).
func headerUnsafe(s []byte) int {
	for i, c := range s {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return i
		}
	}
	return -1
}
