package values

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Spec defines one named source of values: Seq, Uniform, Float, Choice,
// Zipf, Bytes, Hex, Time, File or Slot.
type Spec interface {
	validate() error
}

// Seq is the request's number counted from From: From, From+1, …
type Seq struct {
	From int64
}

// Uniform is an integer drawn uniformly from [Min, Max].
type Uniform struct {
	Min, Max int64
}

// Float is a float drawn uniformly from [Min, Max).
type Float struct {
	Min, Max float64
}

// Choice is one of Values, drawn uniformly or, with Weights (one per value,
// not negative, not all 0), in proportion to them. A value is a string, a
// number (int64 or float64), a bool, nil, or a list or map of these, as
// decoded from YAML or JSON.
type Choice struct {
	Values  []any
	Weights []float64
}

// Zipf is a key of N drawn with Zipf's law: key k (0 ≤ k < N, 0 the most
// frequent) with probability proportional to 1/(k+1)^S, S > 0.
type Zipf struct {
	N uint64
	S float64
}

// Bytes is N random bytes (1 ≤ N ≤ MaxLen).
type Bytes struct {
	N int
}

// Hex is N random lower-case hex digits (1 ≤ N ≤ MaxLen).
type Hex struct {
	N int
}

// Time is the send time that the caller gives at render, in Format. It is
// the one value that is not a function of the request's number, and no
// part of the digest.
type Time struct {
	Format TimeFormat
}

// Slot is a value that no source draws: each Renderer holds its own,
// set by SetSlotJSON or SetSlotText (what a flow's step captured from an
// earlier answer, per virtual user). It is not a function of the
// request's number and no part of the digest; rendering a slot that is not
// set is an error. ParseSpec never makes one: only code does.
type Slot struct{}

// File is a feeder: one row of a file per request, its columns named by a
// CSV file's header or by the keys of a JSONL file's first object.
type File struct {
	Path   string
	Format FileFormat
	Order  Order
}

// MaxLen bounds Bytes and Hex lengths.
const MaxLen = 1 << 20

// MaxZipfN bounds a Zipf's N: the sampler computes in float64.
const MaxZipfN = 1 << 50

// TimeFormat is how a Time value is written.
type TimeFormat uint8

// The time formats.
const (
	UnixNS      TimeFormat = iota + 1 // nanoseconds since 1970, an integer
	UnixUS                            // microseconds since 1970
	UnixMS                            // milliseconds since 1970
	Unix                              // seconds since 1970
	RFC3339                           // 2006-01-02T15:04:05Z, UTC, a string
	RFC3339Nano                       // 2006-01-02T15:04:05.999999999Z, UTC, a string
)

var timeFormatNames = map[TimeFormat]string{
	UnixNS: "unix_ns", UnixUS: "unix_us", UnixMS: "unix_ms", Unix: "unix",
	RFC3339: "rfc3339", RFC3339Nano: "rfc3339nano",
}

// String is the format's name in a study file.
func (f TimeFormat) String() string {
	if s, ok := timeFormatNames[f]; ok {
		return s
	}
	return fmt.Sprintf("TimeFormat(%d)", f)
}

// FileFormat is a feeder file's format.
type FileFormat uint8

// The feeder formats.
const (
	CSV   FileFormat = iota + 1 // a header row of column names, then rows (RFC 4180, as encoding/csv reads it)
	JSONL                       // one JSON object per line; blank lines are skipped
)

// String is the format's name in a study file.
func (f FileFormat) String() string {
	switch f {
	case CSV:
		return "csv"
	case JSONL:
		return "jsonl"
	}
	return fmt.Sprintf("FileFormat(%d)", f)
}

// Order is which row of a feeder a request takes.
type Order uint8

// The feeder orders.
const (
	Sequential Order = iota + 1 // row i mod rows: the file again and again
	Random                      // a seeded row drawn uniformly per request
	Once                        // row i: the run ends when the rows do (Set.Limit)
)

var orderNames = map[Order]string{Sequential: "sequential", Random: "random", Once: "once"}

// String is the order's name in a study file.
func (o Order) String() string {
	if s, ok := orderNames[o]; ok {
		return s
	}
	return fmt.Sprintf("Order(%d)", o)
}

func (s Seq) validate() error { return nil }

func (Slot) validate() error { return nil }

func (s Uniform) validate() error {
	if s.Min > s.Max {
		return fmt.Errorf("uniform: min %d is above max %d", s.Min, s.Max)
	}
	return nil
}

func (s Float) validate() error {
	if !finite(s.Min) || !finite(s.Max) || !(s.Min < s.Max) || !finite(s.Max-s.Min) {
		return fmt.Errorf("float: want finite min < max; got [%v, %v)", s.Min, s.Max)
	}
	return nil
}

func (s Choice) validate() error {
	if len(s.Values) == 0 {
		return errors.New("choice: no values")
	}
	if s.Weights == nil {
		return nil
	}
	if len(s.Weights) != len(s.Values) {
		return fmt.Errorf("choice: %d weights for %d values", len(s.Weights), len(s.Values))
	}
	var total float64
	for i, w := range s.Weights {
		if !finite(w) || w < 0 {
			return fmt.Errorf("choice: weight %d is %v; want a finite number ≥ 0", i+1, w)
		}
		total += w
	}
	if !(total > 0) || !finite(total) {
		return fmt.Errorf("choice: the weights add up to %v; want a finite sum above 0", total)
	}
	return nil
}

func (s Zipf) validate() error {
	if s.N < 1 || s.N > MaxZipfN {
		return fmt.Errorf("zipf: n is %d; want 1 to %d", s.N, uint64(MaxZipfN))
	}
	if !finite(s.S) || s.S <= 0 || s.S > 100 {
		return fmt.Errorf("zipf: s is %v; want 0 < s ≤ 100", s.S)
	}
	return nil
}

func (s Bytes) validate() error { return checkLen("bytes", s.N) }

func (s Hex) validate() error { return checkLen("hex", s.N) }

func checkLen(kind string, n int) error {
	if n < 1 || n > MaxLen {
		return fmt.Errorf("%s: length %d; want 1 to %d", kind, n, MaxLen)
	}
	return nil
}

func (s Time) validate() error {
	if _, ok := timeFormatNames[s.Format]; !ok {
		return fmt.Errorf("time: unknown format %d", s.Format)
	}
	return nil
}

func (s File) validate() error {
	if s.Path == "" {
		return errors.New("file: no path")
	}
	if s.Format != CSV && s.Format != JSONL {
		return fmt.Errorf("file %s: unknown format %d", s.Path, s.Format)
	}
	if _, ok := orderNames[s.Order]; !ok {
		return fmt.Errorf("file %s: unknown order %d", s.Path, s.Order)
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// ParseSpec reads one source as a study file writes it, from the tree that
// YAML or JSON decoding gives (maps, lists, strings, numbers):
//
//	{seq: {from: 1}}                 or {seq: {}}: from 0
//	{uniform: {min: 1, max: 100}}
//	{float: {min: 0, max: 1}}
//	{choice: [a, b, c]}              or {choice: {values: [a, b], weights: [3, 1]}}
//	{zipf: {n: 1000000, s: 0.99}}
//	{bytes: 16}
//	{hex: 32}
//	{time: unix_ms}                  unix_ns, unix_us, unix_ms, unix, rfc3339, rfc3339nano
//	{csv: users.csv, order: random}  or {jsonl: rows.jsonl}; order: sequential (default), random, once
//
// A file's path is as written; the caller resolves it against the study's
// directory.
func ParseSpec(v any) (Spec, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a map with one of seq, uniform, float, choice, zipf, bytes, hex, time, csv or jsonl; got %s", kindOf(v))
	}
	if _, ok := m["csv"]; ok {
		return parseFile(m, "csv", CSV)
	}
	if _, ok := m["jsonl"]; ok {
		return parseFile(m, "jsonl", JSONL)
	}
	if len(m) != 1 {
		return nil, fmt.Errorf("a generator has one key (seq, uniform, float, choice, zipf, bytes, hex or time); got %s", keyList(m))
	}
	for k, arg := range m {
		s, err := parseGenerator(k, arg)
		if err != nil {
			return nil, err
		}
		return s, s.validate()
	}
	panic("unreachable")
}

func parseGenerator(k string, arg any) (Spec, error) {
	switch k {
	case "seq":
		f, err := fields(k, arg, "from")
		if err != nil {
			return nil, err
		}
		from, err := optInt(k, f, "from")
		return Seq{From: from}, err
	case "uniform":
		f, err := fields(k, arg, "min", "max")
		if err != nil {
			return nil, err
		}
		lo, err1 := reqInt(k, f, "min")
		hi, err2 := reqInt(k, f, "max")
		return Uniform{Min: lo, Max: hi}, errors.Join(err1, err2)
	case "float":
		f, err := fields(k, arg, "min", "max")
		if err != nil {
			return nil, err
		}
		lo, err1 := reqFloat(k, f, "min")
		hi, err2 := reqFloat(k, f, "max")
		return Float{Min: lo, Max: hi}, errors.Join(err1, err2)
	case "choice":
		return parseChoice(arg)
	case "zipf":
		f, err := fields(k, arg, "n", "s")
		if err != nil {
			return nil, err
		}
		n, err1 := reqInt(k, f, "n")
		s, err2 := reqFloat(k, f, "s")
		if n < 1 {
			n = 0
		}
		return Zipf{N: uint64(n), S: s}, errors.Join(err1, err2)
	case "bytes", "hex":
		n, ok := asInt(arg)
		if !ok || n < 1 || n > MaxLen {
			return nil, fmt.Errorf("%s: want a length from 1 to %d; got %s", k, MaxLen, show(arg))
		}
		if k == "bytes" {
			return Bytes{N: int(n)}, nil
		}
		return Hex{N: int(n)}, nil
	case "time":
		s, _ := arg.(string)
		for f, name := range timeFormatNames {
			if name == s {
				return Time{Format: f}, nil
			}
		}
		return nil, fmt.Errorf("time: want unix_ns, unix_us, unix_ms, unix, rfc3339 or rfc3339nano; got %s", show(arg))
	}
	return nil, fmt.Errorf("unknown source %q: want seq, uniform, float, choice, zipf, bytes, hex, time, csv or jsonl", k)
}

func parseChoice(arg any) (Spec, error) {
	if l, ok := arg.([]any); ok {
		c := Choice{Values: l}
		return c, c.validate()
	}
	f, err := fields("choice", arg, "values", "weights")
	if err != nil {
		return nil, fmt.Errorf("choice: want a list of values or {values: [...], weights: [...]}")
	}
	vals, ok := f["values"].([]any)
	if !ok {
		return nil, fmt.Errorf("choice: values: want a list; got %s", show(f["values"]))
	}
	c := Choice{Values: vals}
	if w, set := f["weights"]; set {
		l, ok := w.([]any)
		if !ok {
			return nil, fmt.Errorf("choice: weights: want a list of numbers; got %s", show(w))
		}
		for i, x := range l {
			n, ok := asFloat(x)
			if !ok {
				return nil, fmt.Errorf("choice: weight %d: want a number; got %s", i+1, show(x))
			}
			c.Weights = append(c.Weights, n)
		}
	}
	return c, c.validate()
}

func parseFile(m map[string]any, key string, format FileFormat) (Spec, error) {
	for k := range m {
		if k != key && k != "order" {
			return nil, fmt.Errorf("%s: unknown key %q: want %s and order", key, k, key)
		}
	}
	path, ok := m[key].(string)
	if !ok || path == "" {
		return nil, fmt.Errorf("%s: want the file's path; got %s", key, show(m[key]))
	}
	spec := File{Path: path, Format: format, Order: Sequential}
	if o, set := m["order"]; set {
		s, _ := o.(string)
		spec.Order = 0
		for ord, name := range orderNames {
			if name == s {
				spec.Order = ord
			}
		}
		if spec.Order == 0 {
			return nil, fmt.Errorf("%s: order: want sequential, random or once; got %s", key, show(o))
		}
	}
	return spec, spec.validate()
}

// fields is arg as a map with only the keys given.
func fields(kind string, arg any, keys ...string) (map[string]any, error) {
	if arg == nil {
		return map[string]any{}, nil
	}
	m, ok := arg.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a map with %s; got %s", kind, strings.Join(keys, ", "), show(arg))
	}
	for k := range m {
		known := false
		for _, want := range keys {
			known = known || k == want
		}
		if !known {
			return nil, fmt.Errorf("%s: unknown key %q: want %s", kind, k, strings.Join(keys, ", "))
		}
	}
	return m, nil
}

func optInt(kind string, m map[string]any, key string) (int64, error) {
	if _, set := m[key]; !set {
		return 0, nil
	}
	return reqInt(kind, m, key)
}

func reqInt(kind string, m map[string]any, key string) (int64, error) {
	n, ok := asInt(m[key])
	if !ok {
		return 0, fmt.Errorf("%s: %s: want an integer; got %s", kind, key, show(m[key]))
	}
	return n, nil
}

func reqFloat(kind string, m map[string]any, key string) (float64, error) {
	n, ok := asFloat(m[key])
	if !ok {
		return 0, fmt.Errorf("%s: %s: want a number; got %s", kind, key, show(m[key]))
	}
	return n, nil
}

// asInt reads an integer as YAML and JSON decoders give it.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return int64(x), true
		}
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case int, int64, uint64, float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("%T", v)
}

func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return fmt.Sprintf("%q", x)
	case int, int64, uint64, float64, json.Number, bool:
		return fmt.Sprint(x)
	}
	return kindOf(v)
}

func keyList(m map[string]any) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}
