package values

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
)

// Picker draws one of several weighted choices for each request number:
// choice k for request i with probability weights[k] / Σ weights. Like a
// source's values, the choice is a function of the seed, the picker's name
// and i alone (its stream is a source's: docs/values.md), so any request
// may be asked for in any order and every target gets the same sequence.
// A scenario's mix picks its calls so. A Picker does not change once made:
// any goroutine may use it.
type Picker struct {
	base uint64
	w    *weighted
	n    int
}

// NewPicker returns the picker of weights (at least one; none negative,
// NaN or infinite; some above 0) under name, seeded by seed.
func NewPicker(seed uint64, name string, weights []float64) (*Picker, error) {
	if len(weights) == 0 {
		return nil, errors.New("picker: no weights")
	}
	var sum float64
	for k, w := range weights {
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("picker: weight %d is %v: want a finite number of 0 or more", k+1, w)
		}
		sum += w
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return nil, errors.New("picker: the weights must add up to a finite number above 0")
	}
	return &Picker{base: baseOf(seed, name), w: newWeighted(weights), n: len(weights)}, nil
}

// Pick is request i's choice, from 0 to the number of weights − 1.
func (p *Picker) Pick(i uint64) int {
	r := draws(p.base, i)
	return p.w.pick(&r)
}

// Len is the number of choices.
func (p *Picker) Len() int { return p.n }

// pickDigestVersion begins what a picker's digest hashes.
const pickDigestVersion = "tandem pick digest v1\n"

// Digest fingerprints the choices of requests 0 to n−1: SHA-256 over
// "tandem pick digest v1\n", the number of choices (uvarint), then each
// request's choice (uvarint). Two runs with equal digests made the same
// choices in the same order.
func (p *Picker) Digest(n uint64) Digest {
	h := sha256.New()
	buf := binary.AppendUvarint([]byte(pickDigestVersion), uint64(p.n))
	for i := range n {
		buf = binary.AppendUvarint(buf, uint64(p.Pick(i)))
		if len(buf) >= 32<<10 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return Digest{Requests: n, SHA256: hex.EncodeToString(h.Sum(nil))}
}
