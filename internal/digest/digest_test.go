package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestOf(t *testing.T) {
	// by hand: the 8-byte big-endian length of each message, then its bytes
	want := func(parts ...[]byte) string {
		h := sha256.New()
		for _, p := range parts {
			h.Write(p)
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	cases := []struct {
		name string
		msgs [][]byte
		want string
	}{
		{"none", nil, want()},
		{"one empty", [][]byte{{}}, want(make([]byte, 8))},
		{"two", [][]byte{{0x08, 0x01}, {0xff}}, want([]byte{0, 0, 0, 0, 0, 0, 0, 2, 0x08, 0x01}, []byte{0, 0, 0, 0, 0, 0, 0, 1, 0xff})},
	}
	for _, c := range cases {
		if got := Of(c.msgs); got != c.want {
			t.Errorf("%s: %s; want %s", c.name, got, c.want)
		}
	}
	// streamed in pieces: the same digest
	m := NewMessages()
	m.Begin(2)
	m.Write([]byte{0x08})
	m.Write([]byte{0x01})
	m.Begin(1)
	m.Write([]byte{0xff})
	if m.Sum() != cases[2].want || m.Count() != 2 {
		t.Errorf("streamed: %s (%d messages); want %s (2)", m.Sum(), m.Count(), cases[2].want)
	}
}
