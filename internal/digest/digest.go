// Package digest holds the canonical digest of a sequence of protobuf
// messages, shared by compat (answers decoded and re-encoded) and record
// (answers as they pass on the wire): the SHA-256 over each message's bytes,
// each preceded by its length as 8 bytes big-endian, in lower-case hex.
package digest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// Messages digests messages one after another, each announced with its
// length before its bytes are written (so a stream can be digested as it
// passes). The zero value is not usable: see NewMessages.
type Messages struct {
	h hash.Hash
	n int
}

// NewMessages returns an empty digest.
func NewMessages() *Messages { return &Messages{h: sha256.New()} }

// Begin starts a message of size bytes; its bytes follow through Write.
func (m *Messages) Begin(size uint64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], size)
	m.h.Write(b[:])
	m.n++
}

// Write adds bytes of the current message.
func (m *Messages) Write(p []byte) (int, error) { return m.h.Write(p) }

// Count is how many messages were begun.
func (m *Messages) Count() int { return m.n }

// Sum is the digest, in lower-case hex.
func (m *Messages) Sum() string { return hex.EncodeToString(m.h.Sum(nil)) }

// Of is the digest of whole messages.
func Of(msgs [][]byte) string {
	m := NewMessages()
	for _, b := range msgs {
		m.Begin(uint64(len(b)))
		m.Write(b)
	}
	return m.Sum()
}
