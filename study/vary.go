package study

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/internal/splitmix"
)

// MaxCases bounds the cases one compat entry expands to.
const MaxCases = 100_000

// Values lists the values of one case variable: a list as written, or a
// generator (a map with one key):
//
//	sample: {min: 0, max: 1999, count: 20}  distinct seeded integers in [min, max]
//	boundaries: {min: 0, max: 1999}         min−1, min, min+1, max−1, max, max+1
//	invalid: int | uint | string | hex | bool  values of the wrong type or form
//	duplicates: [a, b]                      [a, b], [a, a, b], [a, b, a, b]
//
// seed drives sample; the same seed gives the same values on every machine.
func Values(v Value, seed uint64) ([]any, error) {
	switch x := v.V.(type) {
	case []any:
		return x, nil
	case map[string]any:
		if len(x) != 1 {
			return nil, fmt.Errorf("a generator has one key (sample, boundaries, invalid or duplicates); got %d", len(x))
		}
		for k, arg := range x {
			switch k {
			case "sample":
				return sampleValues(arg, seed)
			case "boundaries":
				lo, hi, err := bounds(arg, "boundaries")
				if err != nil {
					return nil, err
				}
				var out []any
				for _, n := range []int64{lo - 1, lo, lo + 1, hi - 1, hi, hi + 1} {
					if !slices.Contains(out, any(n)) {
						out = append(out, n)
					}
				}
				return out, nil
			case "invalid":
				kind, _ := arg.(string)
				vals, ok := invalidValues[kind]
				if !ok {
					return nil, fmt.Errorf("invalid: want one of int, uint, string, hex, bool; got %v", arg)
				}
				return slices.Clone(vals), nil
			case "duplicates":
				l, ok := arg.([]any)
				if !ok || len(l) == 0 {
					return nil, fmt.Errorf("duplicates: want a non-empty list of values")
				}
				firstTwice := append([]any{l[0]}, l...)
				return []any{slices.Clone(l), firstTwice, append(slices.Clone(l), l...)}, nil
			}
			return nil, fmt.Errorf("unknown generator %q: want sample, boundaries, invalid or duplicates", k)
		}
	}
	return nil, fmt.Errorf("want a list of values or a generator, got %s", kindOf(v.V))
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case int64, float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

// invalidValues are the values of the wrong type or form for each kind.
var invalidValues = map[string][]any{
	"int":    {"1", 1.5, nil, true, "9223372036854775808", -1e30},
	"uint":   {int64(-1), "1", 1.5, nil, "18446744073709551616"},
	"string": {"", int64(1), nil, strings.Repeat("x", 10_000), "\u0000", "é\u202e"},
	"hex":    {"", "zz", "abc", "0x00", strings.Repeat("00", 1_000)},
	"bool":   {"true", int64(1), nil},
}

func bounds(arg any, what string) (lo, hi int64, err error) {
	m, ok := arg.(map[string]any)
	if !ok {
		return 0, 0, fmt.Errorf("%s: want {min: N, max: N}", what)
	}
	lo, ok1 := m["min"].(int64)
	hi, ok2 := m["max"].(int64)
	if !ok1 || !ok2 || lo > hi {
		return 0, 0, fmt.Errorf("%s: want integers min ≤ max", what)
	}
	if lo == math.MinInt64 || hi == math.MaxInt64 {
		return 0, 0, fmt.Errorf("%s: bounds too large", what)
	}
	return lo, hi, nil
}

func sampleValues(arg any, seed uint64) ([]any, error) {
	lo, hi, err := bounds(arg, "sample")
	if err != nil {
		return nil, err
	}
	count, _ := arg.(map[string]any)["count"].(int64)
	if count < 1 || count > MaxCases {
		return nil, fmt.Errorf("sample: want a count between 1 and %d", MaxCases)
	}
	r := splitmix.Rand(seed)
	span := uint64(hi-lo) + 1 // 0 when the range covers every int64
	if span != 0 && uint64(count) > span {
		count = int64(span) // every value once
	}
	seen := make(map[int64]bool, count)
	out := make([]any, 0, count)
	for int64(len(out)) < count {
		n := r.Next()
		if span != 0 {
			n %= span
		}
		if v := lo + int64(n); !seen[v] { // distinct values, in drawn order
			seen[v] = true
			out = append(out, v)
		}
	}
	return out, nil
}

// VarSeed is the seed of one generated variable: the study's seed mixed
// with the case's index and the variable's name.
func VarSeed(seed uint64, caseIndex int, name string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", caseIndex, name)
	return seed ^ h.Sum64()
}

// Expand lists a case's variable bindings: the cartesian product of its
// variables' values, variables in name order, at most MaxCases. A case
// without variables has one empty binding.
func (c *Case) Expand(seed uint64, caseIndex int) ([]map[string]any, error) {
	names := slices.Sorted(maps.Keys(c.Vary))
	lists := make([][]any, len(names))
	total := 1
	for i, name := range names {
		vals, err := Values(c.Vary[name], VarSeed(seed, caseIndex, name))
		if err != nil {
			return nil, fmt.Errorf("vary %s: %w", name, err)
		}
		if len(vals) == 0 {
			return nil, fmt.Errorf("vary %s: no values", name)
		}
		lists[i] = vals
		if total *= len(vals); total > MaxCases {
			return nil, fmt.Errorf("vary: more than %d combinations", MaxCases)
		}
	}
	out := make([]map[string]any, 0, total)
	idx := make([]int, len(names))
	for {
		b := make(map[string]any, len(names))
		for i, name := range names {
			b[name] = lists[i][idx[i]]
		}
		out = append(out, b)
		i := len(idx) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < len(lists[i]) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return out, nil
		}
	}
}
