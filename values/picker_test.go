package values

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"sync"
	"testing"
)

// TestPickerShares: over 100,000 requests each choice's share is within a
// percentage point of its weight's, a choice of weight 0 is never made,
// and the same (seed, name) picks the same sequence in any order and from
// several goroutines at once.
func TestPickerShares(t *testing.T) {
	for _, tc := range []struct {
		name    string
		weights []float64
	}{
		{"90/10", []float64{90, 10}},
		{"thirds", []float64{1, 1, 1}},
		{"a zero", []float64{5, 0, 3, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPicker(7, "mix/rw", tc.weights)
			if err != nil {
				t.Fatal(err)
			}
			const n = 100_000
			counts := make([]int, len(tc.weights))
			seq := make([]int, n)
			for i := range uint64(n) {
				k := p.Pick(i)
				counts[k]++
				seq[i] = k
			}
			var total float64
			for _, w := range tc.weights {
				total += w
			}
			for k, w := range tc.weights {
				share, want := float64(counts[k])/n, w/total
				if math.Abs(share-want) > 0.01 || w == 0 && counts[k] != 0 {
					t.Errorf("choice %d: share %.4f, want %.4f ± 0.01", k, share, want)
				}
			}
			// backwards, and from four goroutines: the same choices
			for i := n - 1; i >= 0; i-- {
				if k := p.Pick(uint64(i)); k != seq[i] {
					t.Fatalf("request %d picks %d backwards, %d forwards", i, k, seq[i])
				}
			}
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for i := g; i < n; i += 4 {
						if k := p.Pick(uint64(i)); k != seq[i] {
							t.Errorf("request %d picks %d in goroutine %d, %d alone", i, k, g, seq[i])
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

// TestPickerStreams: another name or seed picks another sequence; the
// digest is the SHA-256 of its documented encoding and tells the two apart.
func TestPickerStreams(t *testing.T) {
	a, _ := NewPicker(1, "mix/a", []float64{1, 1})
	b, _ := NewPicker(1, "mix/b", []float64{1, 1})
	c, _ := NewPicker(2, "mix/a", []float64{1, 1})
	same := func(x, y *Picker) bool {
		for i := range uint64(64) {
			if x.Pick(i) != y.Pick(i) {
				return false
			}
		}
		return true
	}
	if same(a, b) || same(a, c) {
		t.Error("another name or seed picks the same 64 choices")
	}
	buf := binary.AppendUvarint([]byte("tandem pick digest v1\n"), 2)
	for i := range uint64(1000) {
		buf = binary.AppendUvarint(buf, uint64(a.Pick(i)))
	}
	sum := sha256.Sum256(buf)
	if d := a.Digest(1000); d.Requests != 1000 || d.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("digest %+v, want the SHA-256 of the encoding, %x", d, sum)
	}
	if a.Digest(1000) == b.Digest(1000) {
		t.Error("two sequences have one digest")
	}
	if a.Digest(999).SHA256 == a.Digest(1000).SHA256 {
		t.Error("digests of 999 and 1000 requests are equal")
	}
}

func TestPickerErrors(t *testing.T) {
	for _, tc := range []struct {
		weights []float64
		want    string
	}{
		{nil, "no weights"},
		{[]float64{0, 0}, "above 0"},
		{[]float64{1, -1}, "weight 2"},
		{[]float64{math.NaN()}, "weight 1"},
		{[]float64{math.Inf(1)}, "weight 1"},
		{[]float64{math.MaxFloat64, math.MaxFloat64}, "finite"},
	} {
		if _, err := NewPicker(1, "x", tc.weights); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("weights %v: error %v, want one with %q", tc.weights, err, tc.want)
		}
	}
}

// TestSlots: a slot renders what its Renderer was given (a JSON string as
// its text, a number as a number, an object as JSON, a header's text), each
// Renderer its own; one not set, or cleared, fails the request; a control
// character in a header's slot is refused when rendered; slots are named
// by the set but no part of its digest.
func TestSlots(t *testing.T) {
	s := open(t, 1, map[string]Spec{"key": Slot{}, "n": Seq{}})
	body, err := s.CompileJSON(map[string]any{"k": "${key}", "s": "id-${key}", "n": "${n}"})
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := s.Compile("Bearer ${key}", Header)
	if err != nil {
		t.Fatal(err)
	}
	r1, r2 := s.NewRenderer(), s.NewRenderer()
	if _, err := body.Append(nil, r1, 0, zeroTime); err == nil || !strings.Contains(err.Error(), "${key}") {
		t.Fatalf("a slot not set renders (error %v)", err)
	}
	for _, tc := range []struct {
		js, want string
	}{
		{`"k1"`, `{"k":"k1","n":3,"s":"id-k1"}`},
		{` 42 `, `{"k":42,"n":3,"s":"id-42"}`},
		{`{"a":[1,"x"]}`, `{"k":{"a":[1,"x"]},"n":3,"s":"id-{\"a\":[1,\"x\"]}"}`},
		{`"quote\"d"`, `{"k":"quote\"d","n":3,"s":"id-quote\"d"}`},
	} {
		if err := r1.SetSlotJSON("key", []byte(tc.js)); err != nil {
			t.Fatal(err)
		}
		got, err := body.Append(nil, r1, 3, zeroTime)
		if err != nil || string(got) != tc.want {
			t.Errorf("slot %s: %s (%v), want %s", tc.js, got, err, tc.want)
		}
	}
	if _, err := body.Append(nil, r2, 0, zeroTime); err == nil {
		t.Error("a Renderer renders another's slot")
	}
	if err := r2.SetSlotText("key", []byte("tok")); err != nil {
		t.Fatal(err)
	}
	if got, _ := hdr.Append(nil, r2, 0, zeroTime); string(got) != "Bearer tok" {
		t.Errorf("header %q", got)
	}
	if err := r2.SetSlotText("key", []byte("a\r\nX: y")); err != nil {
		t.Fatal(err)
	}
	if _, err := hdr.Append(nil, r2, 0, zeroTime); err == nil {
		t.Error("a header renders a captured line break")
	}
	r1.ClearSlots()
	if _, err := body.Append(nil, r1, 0, zeroTime); err == nil {
		t.Error("a cleared slot renders")
	}
	for _, bad := range []string{"null", "", "{", `"a" "b"`} {
		if err := r1.SetSlotJSON("key", []byte(bad)); err == nil {
			t.Errorf("SetSlotJSON(%q) takes it", bad)
		}
	}
	if err := r1.SetSlotText("nope", nil); err == nil {
		t.Error("a slot the set does not have is set")
	}
	if names := strings.Join(s.Names(), ","); names != "key,n" {
		t.Errorf("names %s, want key,n", names)
	}
	alone := open(t, 1, map[string]Spec{"n": Seq{}})
	d1, err := s.Digest(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	d2, _ := alone.Digest(t.Context(), 100)
	if d1 != d2 {
		t.Errorf("a slot changes the digest: %v, %v", d1, d2)
	}
}
