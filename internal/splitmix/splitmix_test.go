package splitmix

import "testing"

// The reference sequence for seed 1234567 from the algorithm's published
// C implementation (Vigna, splitmix64.c).
func TestKnownSequence(t *testing.T) {
	r := Rand(1234567)
	want := []uint64{6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431, 16408922859458223821}
	for i, w := range want {
		if got := r.Next(); got != w {
			t.Fatalf("value %d: %d; want %d", i, got, w)
		}
	}
}

// At(seed, i) is the value of the i-th call of Next, for any i.
func TestAtIsTheSequence(t *testing.T) {
	for _, seed := range []uint64{0, 1234567, 1<<64 - 1} {
		r := Rand(seed)
		for i := range uint64(1000) {
			want := r.Next()
			if got := At(seed, i); got != want {
				t.Fatalf("At(%d, %d) = %d; want %d (Next's %d-th value)", seed, i, got, want, i)
			}
		}
	}
}
