package sample

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/tandem-bench/tandem/internal/splitmix"
	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"google.golang.org/protobuf/proto"
)

// genesisTime is the Unix time of block 0; each later block is 75 s younger.
const genesisTime = 1_700_000_000

// Address returns the i-th address of the sample chain's address space.
func Address(i int) string { return fmt.Sprintf("tz1%06d", i) }

// chainGen produces a chain's blocks one after another. The same seed gives
// the same blocks, hashes and transactions on every machine and in both builds.
type chainGen struct {
	rng       splitmix.Rand
	addresses int
	next      uint64
	prevHash  []byte
}

func newChainGen(seed uint64, addresses int) *chainGen {
	return &chainGen{rng: splitmix.Rand(seed), addresses: addresses, prevHash: make([]byte, 32)}
}

// block returns the next block. Some transactions pay one address twice: real
// chains have such outputs, and indexers disagree on how to count them.
func (g *chainGen) block() *ledgerpb.Block {
	h := g.next
	g.next++
	b := &ledgerpb.Block{Height: h, PrevHash: g.prevHash, Time: genesisTime + int64(h)*75}
	ntx := int(g.rng.Next() % 5)
	for i := 0; i < ntx; i++ {
		tx := &ledgerpb.Transaction{Height: h, From: Address(int(g.rng.Next() % uint64(g.addresses)))}
		nout := 1 + int(g.rng.Next()%3)
		for j := 0; j < nout; j++ {
			tx.Outputs = append(tx.Outputs, &ledgerpb.Output{
				Address: Address(int(g.rng.Next() % uint64(g.addresses))),
				Amount:  1 + g.rng.Next()%1_000_000,
			})
		}
		if nout > 1 && g.rng.Next()%4 == 0 {
			tx.Outputs[nout-1].Address = tx.Outputs[0].Address
		}
		tx.Txid = txid(tx, i)
		b.Txs = append(b.Txs, tx)
	}
	b.Hash = blockHash(b)
	g.prevHash = b.Hash
	return b
}

func txid(tx *ledgerpb.Transaction, index int) []byte {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(tx)
	if err != nil {
		panic(err) // a freshly built message always marshals
	}
	var idx [4]byte
	binary.BigEndian.PutUint32(idx[:], uint32(index))
	sum := sha256.Sum256(append(raw, idx[:]...))
	return sum[:]
}

func blockHash(b *ledgerpb.Block) []byte {
	d := sha256.New()
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], b.Height)
	binary.BigEndian.PutUint64(buf[8:], uint64(b.Time))
	d.Write(b.PrevHash)
	d.Write(buf[:])
	for _, tx := range b.Txs {
		d.Write(tx.Txid)
	}
	return d.Sum(nil)
}

// verify re-derives a block's hash work rounds times: the proof check that
// makes building an index take real CPU time.
func verify(b *ledgerpb.Block, rounds int) bool {
	sum := blockHash(b)
	for i := 0; i < rounds; i++ {
		s := sha256.Sum256(sum)
		sum = s[:]
	}
	return len(sum) == 32
}
