// Package compat runs differential tests: the same cases sent to every
// target, each answer reduced to a canonical form and a digest, agreement
// judged against a reference target, and every difference located by field
// path and classified. Cases run in the order listed; a case's values go
// up to 8 at a time, or one at a time in order listed, and a case may
// capture values from each target's answer for the cases after it.
package compat

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tandem-bench/tandem/internal/digest"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// An answer's tree is what encoding/json makes of JSON with UseNumber:
// map[string]any, []any, string, json.Number, bool and nil. Protobuf
// messages are turned into the same shape (see ProtoTree).

// maxDepth bounds the nesting of a decoded answer.
const maxDepth = 200

// JSONTree decodes one JSON value into a tree, numbers kept exact.
func JSONTree(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("answer is not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("answer is not JSON: data after the value")
	}
	if depth(v) > maxDepth {
		return nil, fmt.Errorf("answer nests deeper than %d levels", maxDepth)
	}
	return v, nil
}

func depth(v any) int {
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			d = max(d, depth(e))
		}
	case map[string]any:
		for _, e := range x {
			d = max(d, depth(e))
		}
	default:
		return 0
	}
	return d + 1
}

// ProtoTree turns a message into a tree: fields by their .proto names,
// scalars without presence always shown (an unset number is 0), fields
// with presence only when set; bytes as lower-case hex, 64-bit integers
// and floats as exact numbers, enums by name.
func ProtoTree(m protoreflect.Message) map[string]any {
	out := map[string]any{}
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.HasPresence() && !m.Has(fd) {
			continue
		}
		out[string(fd.Name())] = protoField(fd, m.Get(fd))
	}
	return out
}

func protoField(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch {
	case fd.IsList():
		l := v.List()
		out := make([]any, l.Len())
		for i := range l.Len() {
			out[i] = protoScalar(fd, l.Get(i))
		}
		return out
	case fd.IsMap():
		out := map[string]any{}
		v.Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			out[k.String()] = protoScalar(fd.MapValue(), v)
			return true
		})
		return out
	}
	return protoScalar(fd, v)
}

func protoScalar(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return ProtoTree(v.Message())
	case protoreflect.BytesKind:
		return hex.EncodeToString(v.Bytes())
	case protoreflect.StringKind:
		return v.String()
	case protoreflect.BoolKind:
		return v.Bool()
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return json.Number(strconv.Itoa(int(v.Enum())))
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return floatNumber(v.Float())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return json.Number(strconv.FormatInt(v.Int(), 10))
	default: // unsigned
		return json.Number(strconv.FormatUint(v.Uint(), 10))
	}
}

func floatNumber(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64) // as protojson does: a string
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

// ProtoDigest is the SHA-256 over each message's deterministic protobuf
// encoding, each preceded by its length as 8 bytes big-endian.
// It is digest.Of the encodings, as record digests gRPC answers on the wire.
func ProtoDigest(msgs []proto.Message) (string, error) {
	encoded := make([][]byte, len(msgs))
	for i, m := range msgs {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			return "", fmt.Errorf("encode answer: %w", err)
		}
		encoded[i] = b
	}
	return digest.Of(encoded), nil
}

// JSONDigest is the SHA-256 of a tree's canonical JSON.
func JSONDigest(v any) string {
	sum := sha256.Sum256(Canonical(v))
	return hex.EncodeToString(sum[:])
}

// Canonical encodes a tree as canonical JSON: object keys sorted, no
// insignificant space, numbers in one form (integers as digits, others
// in Go's shortest round-trip notation), strings escaped minimally.
func Canonical(v any) []byte {
	var b bytes.Buffer
	writeCanonical(&b, v)
	return b.Bytes()
}

func writeCanonical(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		b.WriteString(canonicalNumber(x))
	case string:
		writeString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	default: // values built in Go (int64, float64, …) from study files
		js, err := json.Marshal(x)
		if err != nil {
			writeString(b, fmt.Sprint(x))
			return
		}
		t, err := JSONTree(js)
		if err != nil {
			writeString(b, string(js))
			return
		}
		writeCanonical(b, t)
	}
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)           // cannot fail for a string
	b.Truncate(b.Len() - 1) // the encoder's newline
}

// canonicalNumber gives 1, 1.0 and 1e0 one form; integers beyond float64's
// exact range keep their digits.
func canonicalNumber(n json.Number) string {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			return "0"
		}
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	if f == 0 {
		return "0" // -0.0 and 0e5 too
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
