package values

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
	"time"

	"github.com/tandem-bench/tandem/internal/splitmix"
)

// generator is a source computed from the request's number: it keeps no
// state that changes, so any goroutine may call it for any i.
type generator interface {
	value(r *Renderer, i uint64, now time.Time) value
}

// baseOf is a source's stream: the first SplitMix64 value from the seed
// XOR the FNV-1a 64 hash of the source's name.
func baseOf(seed uint64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	r := splitmix.Rand(seed ^ h.Sum64())
	return r.Next()
}

// draws is request i's generator: SplitMix64 seeded with the i-th value of
// the source's stream.
func draws(base, i uint64) splitmix.Rand { return splitmix.Rand(splitmix.At(base, i)) }

// bounded is a draw uniform in [0, n), without bias (Lemire's method:
// draws below the threshold are drawn again); n = 0 stands for 2^64.
func bounded(r *splitmix.Rand, n uint64) uint64 {
	x := r.Next()
	if n == 0 {
		return x
	}
	hi, lo := bits.Mul64(x, n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(r.Next(), n)
		}
	}
	return hi
}

type seqGen struct{ from int64 }

func (g *seqGen) value(_ *Renderer, i uint64, _ time.Time) value {
	return value{t: tInt, n: g.from + int64(i)}
}

type uniformGen struct {
	base uint64
	min  int64
	span uint64 // max − min + 1; 0 for every int64
}

func (g *uniformGen) value(_ *Renderer, i uint64, _ time.Time) value {
	r := draws(g.base, i)
	return value{t: tInt, n: g.min + int64(bounded(&r, g.span))}
}

type floatGen struct {
	base            uint64
	min, max, width float64
}

func (g *floatGen) value(_ *Renderer, i uint64, _ time.Time) value {
	r := draws(g.base, i)
	f := g.min + float64(unit(&r)*g.width)
	if f >= g.max { // by rounding
		f = math.Nextafter(g.max, math.Inf(-1))
	}
	return value{t: tFloat, f: f}
}

type choiceGen struct {
	base    uint64
	options []value
	w       *weighted // nil when unweighted
}

func newChoice(base uint64, c Choice) (*choiceGen, error) {
	g := &choiceGen{base: base}
	for i, v := range c.Values {
		o, err := constValue(v)
		if err != nil {
			return nil, fmt.Errorf("choice: value %d: %w", i+1, err)
		}
		g.options = append(g.options, o)
	}
	if c.Weights != nil {
		g.w = newWeighted(c.Weights)
	}
	return g, nil
}

func (g *choiceGen) value(_ *Renderer, i uint64, _ time.Time) value {
	r := draws(g.base, i)
	if g.w == nil {
		return g.options[bounded(&r, uint64(len(g.options)))]
	}
	return g.options[g.w.pick(&r)]
}

// weighted draws an index by weight: u·total against the running sums.
type weighted struct {
	cum  []float64 // running sums of the weights
	last int       // the last index of positive weight
}

func newWeighted(weights []float64) *weighted {
	w := &weighted{}
	var sum float64
	for i, x := range weights {
		sum += x
		w.cum = append(w.cum, sum)
		if x > 0 {
			w.last = i
		}
	}
	return w
}

// pick is the first index whose running sum is above u·total, u a draw of
// r in [0, 1).
func (w *weighted) pick(r *splitmix.Rand) int {
	u := unit(r) * w.cum[len(w.cum)-1]
	lo, hi := 0, len(w.cum)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if w.cum[m] > u {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return min(lo, w.last) // u rounded up to the total
}

// constValue is a value given in a study (a choice's): strings as strings,
// integers and floats as numbers, anything else as its JSON.
func constValue(v any) (value, error) {
	switch x := v.(type) {
	case string:
		return value{t: tString, b: []byte(x)}, nil
	case int64:
		return value{t: tInt, n: x}, nil
	case int:
		return value{t: tInt, n: int64(x)}, nil
	case float64:
		if !finite(x) {
			return value{}, fmt.Errorf("%v is not a JSON number", x)
		}
		return value{t: tFloat, f: x}, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return value{}, fmt.Errorf("not a JSON value: %w", err)
	}
	return value{t: tRaw, b: bytes.TrimSuffix(b.Bytes(), []byte("\n"))}, nil
}

type zipfGen struct {
	base uint64
	z    zipfSampler
}

func (g *zipfGen) value(_ *Renderer, i uint64, _ time.Time) value {
	r := draws(g.base, i)
	return value{t: tInt, n: int64(g.z.sample(&r) - 1)}
}

// bytesGen is n bytes: the little-endian bytes of request i's draws, in
// turn; as hex, the lower-case hex of those bytes, cut to n digits.
type bytesGen struct {
	base uint64
	n    int
	hex  bool
}

func (g *bytesGen) value(rd *Renderer, i uint64, _ time.Time) value {
	r := draws(g.base, i)
	b := rd.scratch[:0]
	for len(b) < g.n {
		x := r.Next()
		for k := 0; k < 8; k++ {
			c := byte(x >> (8 * k))
			if g.hex {
				b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				b = append(b, c)
			}
		}
	}
	rd.scratch = b
	if g.hex {
		return value{t: tString, b: b[:g.n]}
	}
	return value{t: tBytes, b: b[:g.n]}
}

type timeGen struct{ format TimeFormat }

func (g *timeGen) value(rd *Renderer, _ uint64, now time.Time) value {
	switch g.format {
	case UnixNS:
		return value{t: tInt, n: now.UnixNano()}
	case UnixUS:
		return value{t: tInt, n: now.UnixMicro()}
	case UnixMS:
		return value{t: tInt, n: now.UnixMilli()}
	case Unix:
		return value{t: tInt, n: now.Unix()}
	case RFC3339:
		rd.scratch = now.UTC().AppendFormat(rd.scratch[:0], time.RFC3339)
	default:
		rd.scratch = now.UTC().AppendFormat(rd.scratch[:0], time.RFC3339Nano)
	}
	return value{t: tString, b: rd.scratch}
}

// newGenerator builds a spec's generator.
func newGenerator(seed uint64, name string, s Spec) (generator, error) {
	base := baseOf(seed, name)
	switch x := s.(type) {
	case Seq:
		return &seqGen{from: x.From}, nil
	case Uniform:
		return &uniformGen{base: base, min: x.Min, span: uint64(x.Max-x.Min) + 1}, nil
	case Float:
		return &floatGen{base: base, min: x.Min, max: x.Max, width: x.Max - x.Min}, nil
	case Choice:
		return newChoice(base, x)
	case Zipf:
		return &zipfGen{base: base, z: newZipf(x.N, x.S)}, nil
	case Bytes:
		return &bytesGen{base: base, n: x.N}, nil
	case Hex:
		return &bytesGen{base: base, n: x.N, hex: true}, nil
	case Time:
		return &timeGen{format: x.Format}, nil
	}
	return nil, fmt.Errorf("unknown spec %T", s)
}
