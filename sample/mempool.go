package sample

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"sync"
)

// mempoolCap is how many pending transactions a server holds: the oldest
// is forgotten when one more arrives, so a long load keeps memory flat.
const mempoolCap = 100_000

// pending is a transaction sent with sendtransaction: it waits in the
// mempool and is never mined (the chain is the seed's).
type pending struct {
	txid     [32]byte
	from, to string
	amount   uint64
	nonce    uint64
}

// mempool is the sample's one write path: transactions sent with
// sendtransaction, readable with getmempoolentry until mempoolCap newer
// ones have arrived. It is safe for concurrent use.
type mempool struct {
	mu   sync.Mutex
	byID map[[32]byte]*pending
	ring [][32]byte // arrival order; next is the oldest once the ring is full
	next int
}

func newMempool() *mempool {
	return &mempool{byID: make(map[[32]byte]*pending)}
}

// pendingID is a transaction's id: SHA-256 over its sender, receiver,
// amount and nonce, so both builds give one transaction one id and sending
// it again is idempotent.
func pendingID(from, to string, amount, nonce uint64) [32]byte {
	h := sha256.New()
	var n [8]byte
	h.Write([]byte(from))
	h.Write([]byte{0})
	h.Write([]byte(to))
	h.Write([]byte{0})
	binary.BigEndian.PutUint64(n[:], amount)
	h.Write(n[:])
	binary.BigEndian.PutUint64(n[:], nonce)
	h.Write(n[:])
	var id [32]byte
	h.Sum(id[:0])
	return id
}

// add puts p in the pool (unless it is there already) and returns its id.
func (m *mempool) add(p pending) [32]byte {
	p.txid = pendingID(p.from, p.to, p.amount, p.nonce)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[p.txid]; ok {
		return p.txid
	}
	if len(m.ring) < mempoolCap {
		m.ring = append(m.ring, p.txid)
	} else {
		delete(m.byID, m.ring[m.next])
		m.ring[m.next] = p.txid
		m.next = (m.next + 1) % mempoolCap
	}
	m.byID[p.txid] = &p
	return p.txid
}

// get returns the pending transaction with id txid.
func (m *mempool) get(txid [32]byte) (pending, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.byID[txid]
	if !ok {
		return pending{}, false
	}
	return *p, true
}

// size is the number of pending transactions held.
func (m *mempool) size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID)
}

// view is p as JSON-RPC shows it.
func (p pending) view() map[string]any {
	return map[string]any{
		"txid": hex.EncodeToString(p.txid[:]), "from": p.from, "to": p.to,
		"amount": p.amount, "nonce": p.nonce,
	}
}
