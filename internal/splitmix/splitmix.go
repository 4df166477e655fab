// Package splitmix is the SplitMix64 generator: small, fast and the same on
// every machine, so a seed always yields the same sequence.
package splitmix

// gamma is SplitMix64's increment: the state advances by it at every value.
const gamma = 0x9e3779b97f4a7c15

// Rand is a SplitMix64 state; its zero value is a valid generator.
type Rand uint64

// Next returns the next 64-bit value.
func (s *Rand) Next() uint64 {
	*s += gamma
	return mix(uint64(*s))
}

// Intn returns a value in [0, n) for n > 0 (with a negligible bias).
func (s *Rand) Intn(n uint64) uint64 { return s.Next() % n }

// At returns the value that Next would return at its i-th call (from 0) on
// Rand(seed), without computing the ones before: SplitMix64's state moves
// by a constant, so any value of the sequence is one step away.
func At(seed, i uint64) uint64 { return mix(seed + (i+1)*gamma) }

// mix is SplitMix64's output function: a bijection of the state.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
