package comet

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

func TestPayloadRoundTrip(t *testing.T) {
	for _, size := range []int{256, 1024, 1025, 4096} {
		p := &Payload{Connections: 2, Rate: 200, Time: time.Unix(1_700_000_000, 123_456_789), ID: NewRunID()}
		tx, err := p.Tx(size)
		if err != nil {
			t.Fatal(err)
		}
		// CometBFT's loadtime pads by the same arithmetic, which lands
		// within a few bytes of the size asked for.
		if len(tx) < size-4 || len(tx) > size+2 {
			t.Errorf("size %d: tx of %d bytes", size, len(tx))
		}
		if !bytes.HasPrefix(tx, []byte("a=")) {
			t.Errorf("tx lacks the key prefix: %.10s", tx)
		}
		got, err := ParseTx(tx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Connections != 2 || got.Rate != 200 || got.Size != uint64(size) || !got.Time.Equal(p.Time) || got.ID != p.ID {
			t.Errorf("round trip: %+v; want %+v", got, p)
		}
	}
	if _, err := (&Payload{}).Tx(10); err == nil {
		t.Error("a 10-byte tx was made")
	}
}

func TestParseTxRejects(t *testing.T) {
	for _, tx := range []string{"", "b=00", "a=zz", "a=0a", "a=2a0100"} {
		if _, err := ParseTx([]byte(tx)); err == nil {
			t.Errorf("ParseTx(%q) accepted it", tx)
		}
	}
}

func TestUUID(t *testing.T) {
	id := [16]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	if got := UUID(id); got != "deadbeef-0102-0304-0506-0708090a0b0c" {
		t.Errorf("UUID = %s", got)
	}
	r := NewRunID()
	if r[6]>>4 != 4 || r[8]>>6 != 2 {
		t.Errorf("not a version-4 UUID: %s", UUID(r))
	}
}

// Transactions come from the node's blocks: parsing never panics, and
// what it accepts re-encodes to the same fields.
func FuzzParseTx(f *testing.F) {
	p := &Payload{Connections: 1, Rate: 5, Time: time.Unix(1, 2), ID: NewRunID()}
	tx, _ := p.Tx(200)
	f.Add(tx)
	f.Add([]byte("a=0801"))
	f.Add([]byte("a="))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseTx(b)
		if err != nil {
			return
		}
		again, err := ParseTx(append([]byte("a="), hexOf(got)...))
		if err != nil || again.Connections != got.Connections || again.Rate != got.Rate || again.ID != got.ID || !again.Time.Equal(got.Time) {
			t.Fatalf("re-encoded payload differs: %+v vs %+v (%v)", again, got, err)
		}
	})
}

func hexOf(p *Payload) []byte {
	raw := p.appendFields(nil)
	out := make([]byte, 0, 2*len(raw))
	const digits = "0123456789abcdef"
	for _, c := range raw {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

// Connections build transactions at once: each must be distinct.
func TestParamsConcurrent(t *testing.T) {
	params := Run{Connections: 4, Rate: 10, ID: NewRunID(), Size: 256}.Params()
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				b, err := params(nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[string(b)] {
					t.Errorf("a transaction was built twice")
				}
				seen[string(b)] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}
