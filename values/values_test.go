package values

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/splitmix"
)

// everySpec is one source of each kind, a feeder of each format and order.
func everySpec(t testing.TB) map[string]Spec {
	dir := t.TempDir()
	csvPath, jsonlPath := filepath.Join(dir, "u.csv"), filepath.Join(dir, "u.jsonl")
	var csvText, jsonlText strings.Builder
	csvText.WriteString("id,name\n")
	for k := range 50 {
		csvText.WriteString(strings.Repeat("x", k%7) + ",\"n," + string(rune('a'+k%26)) + "\"\n")
		jsonlText.WriteString(`{"id": ` + string(rune('0'+k%10)) + `, "tags": ["a", {"b": 1.50}]}` + "\n")
	}
	writeFile(t, csvPath, csvText.String())
	writeFile(t, jsonlPath, jsonlText.String())
	return map[string]Spec{
		"seq":  Seq{From: 5},
		"uni":  Uniform{Min: -3, Max: 1000},
		"flt":  Float{Min: -1, Max: 2.5},
		"ch":   Choice{Values: []any{"a", int64(2), 1.5, []any{"x"}}, Weights: []float64{1, 2, 0, 3}},
		"zipf": Zipf{N: 1000, S: 0.99},
		"raw":  Bytes{N: 11},
		"hex":  Hex{N: 9},
		"now":  Time{Format: UnixNS},
		"seqf": File{Path: csvPath, Format: CSV, Order: Sequential},
		"rnd":  File{Path: jsonlPath, Format: JSONL, Order: Random},
		"once": File{Path: csvPath, Format: CSV, Order: Once},
	}
}

// everyTemplate uses every name of everySpec.
const everyTemplate = "${seq} ${uni} ${flt} ${ch} ${zipf} ${raw} ${hex} ${now} ${seqf.id} ${seqf.name} ${rnd.id} ${rnd.tags} ${once.name}"

// The same seed gives the same values, whatever the order requests are
// rendered in and whichever goroutine renders them; another seed gives
// others; and a source's values depend on its own name, not on the others
// in the set.
func TestDeterminism(t *testing.T) {
	specs := everySpec(t)
	const n = 50
	now := time.Unix(1_700_000_000, 42)
	renderAll := func(s *Set, order []uint64) []string {
		tpl, err := s.Compile(everyTemplate, Text)
		if err != nil {
			t.Fatal(err)
		}
		r := s.NewRenderer()
		out := make([]string, n)
		for _, i := range order {
			b, err := tpl.Append(nil, r, i, now)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = string(b)
		}
		return out
	}
	forward := make([]uint64, n)
	for i := range forward {
		forward[i] = uint64(i)
	}
	a := open(t, 1, specs)
	want := renderAll(a, forward)

	backward := make([]uint64, n)
	for i := range backward {
		backward[i] = uint64(n - 1 - i)
	}
	shuffled := append([]uint64(nil), forward...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	b := open(t, 1, specs)
	for name, order := range map[string][]uint64{"backward": backward, "shuffled": shuffled} {
		if got := renderAll(b, order); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: another order gives other values:\n got %q\nwant %q", name, got[:3], want[:3])
		}
	}

	// 8 goroutines, each its own Renderer, each every 8th request, at once
	tpl, err := b.Compile(everyTemplate, Text)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, n)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			r := b.NewRenderer()
			for i := w; i < n; i += 8 {
				out, err := tpl.Append(nil, r, uint64(i), now)
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = string(out)
			}
		})
	}
	wg.Wait()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("8 goroutines give other values than one")
	}

	other := renderAll(open(t, 2, specs), forward)
	same := 0
	for i := range n {
		if other[i] == want[i] {
			same++
		}
	}
	if same > 0 {
		t.Errorf("seed 2 gives seed 1's values for %d requests of %d", same, n)
	}

	// the source "uni" alone: its values are those it has beside the others
	alone := open(t, 1, map[string]Spec{"uni": specs["uni"]})
	r, rAll := alone.NewRenderer(), a.NewRenderer()
	for i := range uint64(n) {
		if x, y := render(t, alone, r, "${uni}", Text, i), render(t, a, rAll, "${uni}", Text, i); x != y {
			t.Fatalf("request %d: uni alone is %s; beside the others %s", i, x, y)
		}
	}
}

// docDraws is request i's generator of a source as docs/values.md defines
// it, written out here apart from the code: base = SplitMix64's first
// value from seed XOR FNV-1a-64(name); request i's generator is SplitMix64
// seeded with the base stream's i-th value.
func docDraws(seed uint64, name string, i uint64) *splitmix.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	base := splitmix.Rand(seed ^ h.Sum64())
	stream := splitmix.Rand(base.Next())
	var x uint64
	for range i + 1 {
		x = stream.Next()
	}
	r := splitmix.Rand(x)
	return &r
}

// Each generator's values are those its documented definition gives.
func TestDefinitions(t *testing.T) {
	const seed = 99
	s := open(t, seed, map[string]Spec{
		"seq": Seq{From: -2}, "u": Uniform{Min: 10, Max: 19}, "f": Float{Min: 1, Max: 3}, "c": Choice{Values: []any{"p", "q", "r"}},
		"b": Bytes{N: 10}, "h": Hex{N: 7},
	})
	r := s.NewRenderer()
	for i := range uint64(200) {
		if got, want := render(t, s, r, "${seq}", Text, i), int64(i)-2; got != itoa(want) {
			t.Fatalf("seq %d: %s; want %d", i, got, want)
		}
		// uniform: Lemire's method, a draw's high half of x·span unless its low half is below 2^64 mod span
		d := docDraws(seed, "u", i)
		span := uint64(10)
		hi, lo := mul64(d.Next(), span)
		for lo < -span%span {
			hi, lo = mul64(d.Next(), span)
		}
		if got := render(t, s, r, "${u}", Text, i); got != itoa(10+int64(hi)) {
			t.Fatalf("uniform %d: %s; want %d", i, got, 10+int64(hi))
		}
		// float: min + (top 53 bits / 2^53)·(max − min)
		d = docDraws(seed, "f", i)
		if got, want := render(t, s, r, "${f}", Text, i), string(appendFloat(nil, 1+float64(d.Next()>>11)/(1<<53)*2)); got != want {
			t.Fatalf("float %d: %s; want %s", i, got, want)
		}
		// bytes: the draws' little-endian bytes; hex: those bytes in hex, cut
		d = docDraws(seed, "b", i)
		var raw []byte
		raw = binary.LittleEndian.AppendUint64(raw, d.Next())
		raw = binary.LittleEndian.AppendUint64(raw, d.Next())
		if got := render(t, s, r, "${b}", Text, i); got != string(raw[:10]) {
			t.Fatalf("bytes %d: %x; want %x", i, got, raw[:10])
		}
		d = docDraws(seed, "h", i)
		if got, want := render(t, s, r, "${h}", Text, i), hex.EncodeToString(binary.LittleEndian.AppendUint64(nil, d.Next()))[:7]; got != want {
			t.Fatalf("hex %d: %s; want %s", i, got, want)
		}
		d = docDraws(seed, "c", i)
		hi, _ = mul64(d.Next(), 3) // 2^64 mod 3 = 1: a low half of 0 is drawn again, too rare to meet here
		if got, want := render(t, s, r, "${c}", Text, i), []string{"p", "q", "r"}[hi]; got != want {
			t.Fatalf("choice %d: %s; want %s", i, got, want)
		}
	}
}

func mul64(x, y uint64) (hi, lo uint64) {
	const mask = 1<<32 - 1
	x0, x1, y0, y1 := x&mask, x>>32, y&mask, y>>32
	w0 := x0 * y0
	t := x1*y0 + w0>>32
	w1, w2 := t&mask, t>>32
	w1 += x0 * y1
	return x1*y1 + w2 + w1>>32, x * y
}

func itoa(n int64) string { return string(appendText(nil, value{t: tInt, n: n})) }

// Uniform integers stay within [min, max], reach both ends, and fall in
// equal shares (each of 10 values within 5 % of 10,000 over 100,000
// draws: 5 standard deviations); the whole int64 range and a single value
// work too.
func TestUniform(t *testing.T) {
	s := open(t, 3, map[string]Spec{"u": Uniform{Min: -5, Max: 4}, "all": Uniform{Min: math.MinInt64, Max: math.MaxInt64}, "one": Uniform{Min: 7, Max: 7}})
	r := s.NewRenderer()
	counts := map[int64]int{}
	neg := 0
	for i := range uint64(100_000) {
		v := s.gens["u"].value(r, i, zeroTime)
		counts[v.n]++
		if s.gens["all"].value(r, i, zeroTime).n < 0 {
			neg++
		}
		if one := s.gens["one"].value(r, i, zeroTime).n; one != 7 {
			t.Fatalf("uniform [7, 7] gave %d", one)
		}
	}
	for n := int64(-5); n <= 4; n++ {
		if c := counts[n]; math.Abs(float64(c)/10_000-1) > 0.05 {
			t.Errorf("value %d drawn %d times; want 10,000 ± 5 %%", n, c)
		}
		delete(counts, n)
	}
	if len(counts) > 0 {
		t.Errorf("values outside [-5, 4]: %v", counts)
	}
	if math.Abs(float64(neg)/50_000-1) > 0.05 {
		t.Errorf("the whole int64 range: %d negative of 100,000; want half", neg)
	}
}

// Floats stay within [min, max) and fill its tenths in equal shares; a
// range one float wide gives its min.
func TestFloat(t *testing.T) {
	s := open(t, 4, map[string]Spec{"f": Float{Min: -2, Max: 3}, "tight": Float{Min: 1, Max: math.Nextafter(1, 2)}})
	r := s.NewRenderer()
	var tenths [10]int
	for i := range uint64(100_000) {
		f := s.gens["f"].value(r, i, zeroTime).f
		if f < -2 || f >= 3 {
			t.Fatalf("request %d: %v outside [-2, 3)", i, f)
		}
		tenths[int((f+2)*2)]++
		if g := s.gens["tight"].value(r, i, zeroTime).f; g != 1 {
			t.Fatalf("[1, next float after 1) gave %v", g)
		}
	}
	for k, c := range tenths {
		if math.Abs(float64(c)/10_000-1) > 0.05 {
			t.Errorf("tenth %d: %d draws; want 10,000 ± 5 %%", k, c)
		}
	}
}

// A weighted choice draws each value in proportion to its weight (within 5 %
// over 100,000 draws), never one of weight 0; an unweighted one in equal
// shares.
func TestChoice(t *testing.T) {
	s := open(t, 5, map[string]Spec{
		"w": Choice{Values: []any{"a", "b", "never", "c"}, Weights: []float64{1, 2, 0, 7}},
		"e": Choice{Values: []any{int64(1), int64(2), int64(3), int64(4)}},
	})
	r := s.NewRenderer()
	w, e := map[string]int{}, map[int64]int{}
	for i := range uint64(100_000) {
		w[string(s.gens["w"].value(r, i, zeroTime).b)]++
		e[s.gens["e"].value(r, i, zeroTime).n]++
	}
	for v, share := range map[string]float64{"a": 0.1, "b": 0.2, "c": 0.7} {
		if got := float64(w[v]) / 100_000; math.Abs(got/share-1) > 0.05 {
			t.Errorf("%s: share %.4f; want %.2f ± 5 %%", v, got, share)
		}
	}
	if w["never"] > 0 {
		t.Errorf("a value of weight 0 was drawn %d times", w["never"])
	}
	for v := int64(1); v <= 4; v++ {
		if got := float64(e[v]) / 100_000; math.Abs(got/0.25-1) > 0.05 {
			t.Errorf("%d: share %.4f; want 0.25 ± 5 %%", v, got)
		}
	}
}

// Bytes and hex have their length; hex is lower-case digits.
func TestBytesHex(t *testing.T) {
	s := open(t, 6, map[string]Spec{"b": Bytes{N: 33}, "h": Hex{N: 17}, "one": Hex{N: 1}})
	r := s.NewRenderer()
	hexDigits := regexp.MustCompile(`^[0-9a-f]+$`)
	seen := map[string]bool{}
	for i := range uint64(1000) {
		if b := render(t, s, r, "${b}", Text, i); len(b) != 33 {
			t.Fatalf("bytes: %d; want 33", len(b))
		}
		h := render(t, s, r, "${h}", Text, i)
		if len(h) != 17 || !hexDigits.MatchString(h) {
			t.Fatalf("hex: %q; want 17 lower-case hex digits", h)
		}
		seen[render(t, s, r, "${one}", Text, i)] = true
	}
	if len(seen) != 16 {
		t.Errorf("one hex digit over 1,000 requests: %d distinct; want all 16", len(seen))
	}
}

// Time values are the send time given, in each format.
func TestTime(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 891_234_567, time.FixedZone("X", 3600))
	for _, c := range []struct {
		format TimeFormat
		want   string
	}{
		{UnixNS, "1772597167891234567"},
		{UnixUS, "1772597167891234"},
		{UnixMS, "1772597167891"},
		{Unix, "1772597167"},
		{RFC3339, "2026-03-04T04:06:07Z"},
		{RFC3339Nano, "2026-03-04T04:06:07.891234567Z"},
	} {
		s := open(t, 1, map[string]Spec{"t": Time{Format: c.format}})
		tpl, err := s.Compile("${t}", Text)
		if err != nil {
			t.Fatal(err)
		}
		out, err := tpl.Append(nil, s.NewRenderer(), 12345, now)
		if err != nil || string(out) != c.want || !tpl.UsesTime() {
			t.Errorf("%v: %q, %v (uses time: %v); want %q", c.format, out, err, tpl.UsesTime(), c.want)
		}
	}
}

// The digest is what docs/values.md says: SHA-256 of the version line,
// then for each request each name (sorted, time left out) with its value.
func TestDigestEncoding(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.csv")
	writeFile(t, path, "b,a\n1,x\n2,y\n")
	s := open(t, 8, map[string]Spec{"s": Seq{From: 1}, "h": Hex{N: 4}, "t": Time{Format: Unix}, "f": File{Path: path, Format: CSV, Order: Sequential}})
	d, err := s.Digest(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	h.Write([]byte("tandem values digest v1\n"))
	str := func(name, tag, v string) {
		h.Write([]byte{byte(len(name))})
		h.Write([]byte(name + tag))
		h.Write([]byte{byte(len(v))})
		h.Write([]byte(v))
	}
	for i := range uint64(3) {
		str("f.a", "s", []string{"x", "y"}[i%2])
		str("f.b", "s", []string{"1", "2"}[i%2])
		d := docDraws(8, "h", i)
		str("h", "s", hex.EncodeToString(binary.LittleEndian.AppendUint64(nil, d.Next()))[:4])
		h.Write([]byte{1, 's', 'i'})
		h.Write(binary.BigEndian.AppendUint64(nil, 1+i))
	}
	if want := hex.EncodeToString(h.Sum(nil)); d.SHA256 != want || d.Requests != 3 {
		t.Errorf("digest %+v; want 3 requests, %s", d, want)
	}
}

// Digests agree for the same seed and differ with the seed or the count;
// time values are no part of them; a once feeder caps the requests.
func TestDigest(t *testing.T) {
	ctx := context.Background()
	specs := everySpec(t)
	a, err := open(t, 1, specs).Digest(ctx, 200)
	if err != nil {
		t.Fatal(err)
	}
	if a.Requests != 50 {
		t.Errorf("digest over %d requests; the once feeder has 50 rows", a.Requests)
	}
	b, _ := open(t, 1, specs).Digest(ctx, 200)
	c, _ := open(t, 2, specs).Digest(ctx, 200)
	d, _ := open(t, 1, specs).Digest(ctx, 49)
	delete(specs, "now")
	e, _ := open(t, 1, specs).Digest(ctx, 200)
	if a != b || a == c || a.SHA256 == d.SHA256 || a != e {
		t.Errorf("same seed %v, %v; other seed %v; 49 requests %v; without the time value %v", a, b, c, d, e)
	}
}

// Bad definitions are refused when the set opens, saying what is wrong.
func TestOpenErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		spec Spec
		want string
	}{
		{"u", Uniform{Min: 2, Max: 1}, "value u: uniform: min 2 is above max 1"},
		{"f", Float{Min: 1, Max: 1}, "value f: float: want finite min < max; got [1, 1)"},
		{"f", Float{Min: math.Inf(-1), Max: 1}, "want finite min < max"},
		{"f", Float{Min: -math.MaxFloat64, Max: math.MaxFloat64}, "want finite min < max"},
		{"c", Choice{}, "value c: choice: no values"},
		{"c", Choice{Values: []any{1}, Weights: []float64{1, 2}}, "choice: 2 weights for 1 values"},
		{"c", Choice{Values: []any{1, 2}, Weights: []float64{1, -1}}, "choice: weight 2 is -1"},
		{"c", Choice{Values: []any{1, 2}, Weights: []float64{0, 0}}, "choice: the weights add up to 0"},
		{"c", Choice{Values: []any{math.NaN()}}, "choice: value 1: NaN is not a JSON number"},
		{"z", Zipf{N: 0, S: 1}, "zipf: n is 0"},
		{"z", Zipf{N: 10, S: 0}, "zipf: s is 0; want 0 < s ≤ 100"},
		{"z", Zipf{N: 10, S: math.NaN()}, "zipf: s is NaN"},
		{"b", Bytes{N: 0}, "bytes: length 0"},
		{"h", Hex{N: MaxLen + 1}, "hex: length 1048577"},
		{"t", Time{}, "time: unknown format 0"},
		{"x", File{Format: CSV, Order: Once}, "file: no path"},
		{"x", File{Path: "a.csv", Order: Once}, "file a.csv: unknown format 0"},
		{"x", File{Path: "a.csv", Format: CSV}, "file a.csv: unknown order 0"},
		{"x", File{Path: "testdata/none.csv", Format: CSV, Order: Once}, "feeder x: open testdata/none.csv: "},
		{"x", File{Path: "testdata", Format: CSV, Order: Once}, "feeder x: testdata: not a regular file"},
		{"a.b", Seq{}, `value "a.b": a name is letters`},
		{"1a", Seq{}, `value "1a": a name is letters`},
		{"", Seq{}, `value "": a name is letters`},
		{"n", nil, "value n: no definition"},
	} {
		_, err := Open(context.Background(), 1, map[string]Spec{c.name: c.spec})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %#v: %v; want %q", c.name, c.spec, err, c.want)
		}
	}
}

// ParseSpec reads each source as a study writes it, and says what is wrong
// with a bad one.
func TestParseSpec(t *testing.T) {
	for _, c := range []struct {
		in   any
		want Spec
	}{
		{map[string]any{"seq": map[string]any{"from": int64(1)}}, Seq{From: 1}},
		{map[string]any{"seq": nil}, Seq{}},
		{map[string]any{"uniform": map[string]any{"min": int64(1), "max": int64(6)}}, Uniform{Min: 1, Max: 6}},
		{map[string]any{"float": map[string]any{"min": int64(0), "max": 0.5}}, Float{Min: 0, Max: 0.5}},
		{map[string]any{"choice": []any{"a", int64(1)}}, Choice{Values: []any{"a", int64(1)}}},
		{map[string]any{"choice": map[string]any{"values": []any{"a", "b"}, "weights": []any{int64(3), 0.5}}}, Choice{Values: []any{"a", "b"}, Weights: []float64{3, 0.5}}},
		{map[string]any{"zipf": map[string]any{"n": int64(1000), "s": 0.99}}, Zipf{N: 1000, S: 0.99}},
		{map[string]any{"bytes": int64(16)}, Bytes{N: 16}},
		{map[string]any{"hex": 32}, Hex{N: 32}},
		{map[string]any{"time": "rfc3339"}, Time{Format: RFC3339}},
		{map[string]any{"time": "unix_ms"}, Time{Format: UnixMS}},
		{map[string]any{"csv": "u.csv"}, File{Path: "u.csv", Format: CSV, Order: Sequential}},
		{map[string]any{"jsonl": "r.jsonl", "order": "once"}, File{Path: "r.jsonl", Format: JSONL, Order: Once}},
		{map[string]any{"csv": "u.csv", "order": "random"}, File{Path: "u.csv", Format: CSV, Order: Random}},
	} {
		got, err := ParseSpec(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: %#v, %v; want %#v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct {
		in   any
		want string
	}{
		{"seq", "want a map with one of seq, uniform"},
		{map[string]any{}, "a generator has one key (seq, uniform, float, choice, zipf, bytes, hex or time); got none"},
		{map[string]any{"seq": nil, "hex": 2}, "got hex, seq"},
		{map[string]any{"sequence": nil}, `unknown source "sequence"`},
		{map[string]any{"seq": map[string]any{"start": int64(1)}}, `seq: unknown key "start": want from`},
		{map[string]any{"uniform": map[string]any{"min": int64(1)}}, "uniform: max: want an integer; got nothing"},
		{map[string]any{"uniform": map[string]any{"min": 1.5, "max": int64(2)}}, "uniform: min: want an integer; got 1.5"},
		{map[string]any{"uniform": map[string]any{"min": int64(3), "max": int64(2)}}, "uniform: min 3 is above max 2"},
		{map[string]any{"float": map[string]any{"min": "0", "max": int64(1)}}, `float: min: want a number; got "0"`},
		{map[string]any{"choice": "a"}, "choice: want a list of values or {values: [...], weights: [...]}"},
		{map[string]any{"choice": map[string]any{"values": []any{"a"}, "weights": []any{"x"}}}, `choice: weight 1: want a number; got "x"`},
		{map[string]any{"zipf": map[string]any{"n": int64(-1), "s": 1.0}}, "zipf: n is 0; want 1 to"},
		{map[string]any{"bytes": "16"}, `bytes: want a length from 1 to 1048576; got "16"`},
		{map[string]any{"hex": int64(0)}, "hex: want a length from 1 to 1048576; got 0"},
		{map[string]any{"time": "iso"}, `time: want unix_ns, unix_us, unix_ms, unix, rfc3339 or rfc3339nano; got "iso"`},
		{map[string]any{"csv": int64(1)}, "csv: want the file's path; got 1"},
		{map[string]any{"jsonl": "a", "order": "shuffled"}, `jsonl: order: want sequential, random or once; got "shuffled"`},
		{map[string]any{"csv": "a", "header": true}, `csv: unknown key "header": want csv and order`},
	} {
		_, err := ParseSpec(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want %q", c.in, err, c.want)
		}
	}
}
