// Package splitmix is the SplitMix64 generator: small, fast and the same on
// every machine, so a seed always yields the same sequence.
package splitmix

// Rand is a SplitMix64 state; its zero value is a valid generator.
type Rand uint64

// Next returns the next 64-bit value.
func (s *Rand) Next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Intn returns a value in [0, n) for n > 0 (with a negligible bias).
func (s *Rand) Intn(n uint64) uint64 { return s.Next() % n }
