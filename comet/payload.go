// Package comet speaks to CometBFT nodes the way its own QA tools do:
// transactions carry CometBFT's loadtime payload (test/loadtime/payload),
// and a Confirmer reads committed blocks to find them again and time them.
package comet

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// keyPrefix makes the kvstore app keep one key for every transaction
// instead of one per transaction (as CometBFT's loadtime does).
const keyPrefix = "a="

// Payload is CometBFT's loadtime payload (message loadtime.payload.Payload:
// connections = 1, rate = 2, size = 3, time = 4 as google.protobuf.Timestamp,
// id = 5, padding = 6).
type Payload struct {
	Connections, Rate, Size uint64
	Time                    time.Time
	ID                      [16]byte
	Padding                 []byte
}

// appendFields encodes the payload's fields in field order.
func (p *Payload) appendFields(b []byte) []byte {
	if p.Connections != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, p.Connections)
	}
	if p.Rate != 0 {
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, p.Rate)
	}
	if p.Size != 0 {
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, p.Size)
	}
	var ts []byte
	if s := p.Time.Unix(); s != 0 {
		ts = protowire.AppendTag(ts, 1, protowire.VarintType)
		ts = protowire.AppendVarint(ts, uint64(s))
	}
	if n := p.Time.Nanosecond(); n != 0 {
		ts = protowire.AppendTag(ts, 2, protowire.VarintType)
		ts = protowire.AppendVarint(ts, uint64(n))
	}
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendBytes(b, ts)
	b = protowire.AppendTag(b, 5, protowire.BytesType)
	b = protowire.AppendBytes(b, p.ID[:])
	if len(p.Padding) > 0 {
		b = protowire.AppendTag(b, 6, protowire.BytesType)
		b = protowire.AppendBytes(b, p.Padding)
	}
	return b
}

// Tx encodes the payload as a transaction of the given total size: the key
// prefix and the hex of the protobuf encoding, padded with random bytes the
// way CometBFT's loadtime does (half the remaining room, as hex doubles it).
func (p *Payload) Tx(size int) ([]byte, error) {
	p.Size = uint64(size)
	p.Padding = []byte{0}
	unpadded := len(keyPrefix) + 2*len(p.appendFields(nil))
	if size < unpadded {
		return nil, fmt.Errorf("size %d cannot hold the payload's %d bytes", size, unpadded)
	}
	p.Padding = make([]byte, (size-unpadded)/2)
	if _, err := rand.Read(p.Padding); err != nil {
		return nil, err
	}
	raw := p.appendFields(nil)
	tx := make([]byte, len(keyPrefix)+hex.EncodedLen(len(raw)))
	copy(tx, keyPrefix)
	hex.Encode(tx[len(keyPrefix):], raw)
	return tx, nil
}

// ErrNotPayload is a transaction that does not carry a loadtime payload.
var ErrNotPayload = errors.New("not a loadtime transaction")

// ParseTx reads the payload out of a transaction.
func ParseTx(tx []byte) (*Payload, error) {
	h, ok := bytes.CutPrefix(tx, []byte(keyPrefix))
	if !ok {
		return nil, ErrNotPayload
	}
	raw := make([]byte, hex.DecodedLen(len(h)))
	if _, err := hex.Decode(raw, h); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotPayload, err)
	}
	p := &Payload{}
	bad := func(n int) error { return fmt.Errorf("%w: %v", ErrNotPayload, protowire.ParseError(n)) }
	var secs, nanos uint64
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return nil, bad(n)
		}
		raw = raw[n:]
		switch {
		case typ == protowire.VarintType && num >= 1 && num <= 3:
			v, n := protowire.ConsumeVarint(raw)
			if n < 0 {
				return nil, bad(n)
			}
			raw = raw[n:]
			switch num {
			case 1:
				p.Connections = v
			case 2:
				p.Rate = v
			case 3:
				p.Size = v
			}
		case typ == protowire.BytesType && num >= 4 && num <= 6:
			v, n := protowire.ConsumeBytes(raw)
			if n < 0 {
				return nil, bad(n)
			}
			raw = raw[n:]
			switch num {
			case 4:
				if secs, nanos, n = parseTimestamp(v); n < 0 {
					return nil, fmt.Errorf("%w: bad time", ErrNotPayload)
				}
			case 5:
				if len(v) != 16 {
					return nil, fmt.Errorf("%w: id of %d bytes", ErrNotPayload, len(v))
				}
				copy(p.ID[:], v)
			case 6:
				p.Padding = v
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, raw)
			if n < 0 {
				return nil, bad(n)
			}
			raw = raw[n:]
		}
	}
	p.Time = time.Unix(int64(secs), int64(nanos))
	return p, nil
}

func parseTimestamp(b []byte) (secs, nanos uint64, n int) {
	for len(b) > 0 {
		num, typ, m := protowire.ConsumeTag(b)
		if m < 0 || typ != protowire.VarintType {
			return 0, 0, -1
		}
		b = b[m:]
		v, m := protowire.ConsumeVarint(b)
		if m < 0 {
			return 0, 0, -1
		}
		b = b[m:]
		switch num {
		case 1:
			secs = v
		case 2:
			nanos = v
		}
	}
	return secs, nanos, 0
}

// UUID formats a run id as CometBFT's report tool prints it.
func UUID(id [16]byte) string {
	h := hex.EncodeToString(id[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// NewRunID returns a random version-4 UUID.
func NewRunID() [16]byte {
	var id [16]byte
	rand.Read(id[:])
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}
