package compat

import (
	"encoding/hex"
	"encoding/json"
	"strconv"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// WireTree turns an encoded protobuf message whose type is unknown into a
// tree keyed by field number: varints and fixed-size fields as numbers
// (unsigned, as on the wire), a field repeated on the wire as a list, and
// a length-delimited field as printable text when it is valid UTF-8 with
// no control characters, else as a nested message when it parses as one
// to its end, else as lower-case hex. A message that does not parse is
// its hex under the key "bytes".
func WireTree(b []byte) map[string]any {
	if t, ok := wireMessage(b, 0); ok {
		return t
	}
	return map[string]any{"bytes": hex.EncodeToString(b)}
}

// maxWireDepth bounds the nesting wireMessage follows.
const maxWireDepth = 64

func wireMessage(b []byte, depth int) (map[string]any, bool) {
	out := map[string]any{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		var v any
		switch typ {
		case protowire.VarintType:
			x, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, false
			}
			v, b = json.Number(strconv.FormatUint(x, 10)), b[n:]
		case protowire.Fixed32Type:
			x, n := protowire.ConsumeFixed32(b)
			if n < 0 {
				return nil, false
			}
			v, b = json.Number(strconv.FormatUint(uint64(x), 10)), b[n:]
		case protowire.Fixed64Type:
			x, n := protowire.ConsumeFixed64(b)
			if n < 0 {
				return nil, false
			}
			v, b = json.Number(strconv.FormatUint(x, 10)), b[n:]
		case protowire.BytesType:
			x, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, false
			}
			v, b = wireBytes(x, depth), b[n:]
		default: // groups: long deprecated, not followed
			return nil, false
		}
		key := strconv.FormatUint(uint64(num), 10)
		switch prev := out[key].(type) {
		case nil:
			out[key] = v
		case []any:
			out[key] = append(prev, v)
		default:
			out[key] = []any{prev, v}
		}
	}
	return out, true
}

func wireBytes(b []byte, depth int) any {
	if printable(b) {
		return string(b)
	}
	if depth < maxWireDepth {
		if m, ok := wireMessage(b, depth+1); ok && len(m) > 0 {
			return m
		}
	}
	return hex.EncodeToString(b)
}

func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}
