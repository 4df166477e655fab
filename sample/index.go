package sample

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// account is what the index knows of one address.
type account struct {
	balance int64
	// txs counts distinct transactions that touch the address.
	txs uint64
	// rows counts the rows of a naive join: one per output paying the
	// address plus one per transaction it sends.
	rows uint64
}

type txLoc struct {
	height uint64
	index  int
}

// store answers the service's queries. The index is one; build b's
// slow path, which rescans the chain for every query, is the other.
type store interface {
	block(h uint64) (*ledgerpb.Block, bool)
	tx(id []byte) (*ledgerpb.Transaction, bool)
	account(addr string) (account, bool)
}

// index is the built, in-memory index of a chain.
type index struct {
	blocks   []*ledgerpb.Block
	txs      map[[32]byte]txLoc
	accounts map[string]*account
}

func (ix *index) block(h uint64) (*ledgerpb.Block, bool) {
	if h >= uint64(len(ix.blocks)) {
		return nil, false
	}
	return ix.blocks[h], true
}

func (ix *index) tx(id []byte) (*ledgerpb.Transaction, bool) {
	if len(id) != 32 {
		return nil, false
	}
	loc, ok := ix.txs[[32]byte(id)]
	if !ok {
		return nil, false
	}
	return ix.blocks[loc.height].Txs[loc.index], true
}

func (ix *index) account(addr string) (account, bool) {
	a, ok := ix.accounts[addr]
	if !ok {
		return account{}, false
	}
	return *a, true
}

func (ix *index) add(b *ledgerpb.Block) {
	ix.blocks = append(ix.blocks, b)
	for i, tx := range b.Txs {
		ix.txs[[32]byte(tx.Txid)] = txLoc{b.Height, i}
		touch(ix.accounts, tx)
	}
}

// touch applies one transaction to the accounts it names.
func touch(accounts map[string]*account, tx *ledgerpb.Transaction) {
	get := func(addr string) *account {
		a := accounts[addr]
		if a == nil {
			a = &account{}
			accounts[addr] = a
		}
		return a
	}
	seen := make(map[string]bool, len(tx.Outputs)+1)
	from := get(tx.From)
	from.rows++
	seen[tx.From] = true
	for _, o := range tx.Outputs {
		from.balance -= int64(o.Amount)
		to := get(o.Address)
		to.balance += int64(o.Amount)
		to.rows++
		seen[o.Address] = true
	}
	for addr := range seen {
		accounts[addr].txs++
	}
}

// buildIndex generates and verifies the chain block by block, writes the
// index into dir in the build's format and returns it. Build a writes a
// compact length-prefixed protobuf file, build b one JSON document per block.
func buildIndex(ctx context.Context, opts Options) (*index, error) {
	if err := os.MkdirAll(opts.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	name := "blocks.pb"
	if opts.Build == BuildB {
		name = "blocks.jsonl"
	}
	f, err := os.Create(filepath.Join(opts.DataDir, name))
	if err != nil {
		return nil, fmt.Errorf("create index: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	ix := &index{txs: make(map[[32]byte]txLoc), accounts: make(map[string]*account)}
	gen := newChainGen(opts.Seed, opts.Addresses)
	var lenbuf [binary.MaxVarintLen64]byte
	for h := 0; h < opts.Blocks; h++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		b := gen.block()
		if !verify(b, opts.Work) {
			return nil, fmt.Errorf("block %d: bad hash", h)
		}
		var raw []byte
		if opts.Build == BuildB {
			raw, err = protojson.Marshal(b)
			raw = append(raw, '\n')
		} else {
			raw, err = proto.MarshalOptions{Deterministic: true}.Marshal(b)
			w.Write(lenbuf[:binary.PutUvarint(lenbuf[:], uint64(len(raw)))])
		}
		if err != nil {
			return nil, fmt.Errorf("encode block %d: %w", h, err)
		}
		if _, err := w.Write(raw); err != nil {
			return nil, fmt.Errorf("write index: %w", err)
		}
		ix.add(b)
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("write index: %w", err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("sync index: %w", err)
	}
	return ix, f.Close()
}

// scan is build b's slow path before its index is ready: every query
// regenerates the chain from the seed up to what it needs.
type scan struct {
	seed      uint64
	blocks    int
	addresses int
}

func (s scan) walk(fn func(*ledgerpb.Block) bool) {
	gen := newChainGen(s.seed, s.addresses)
	for h := 0; h < s.blocks; h++ {
		if !fn(gen.block()) {
			return
		}
	}
}

func (s scan) block(h uint64) (found *ledgerpb.Block, ok bool) {
	s.walk(func(b *ledgerpb.Block) bool {
		if b.Height == h {
			found, ok = b, true
		}
		return !ok
	})
	return found, ok
}

func (s scan) tx(id []byte) (found *ledgerpb.Transaction, ok bool) {
	s.walk(func(b *ledgerpb.Block) bool {
		for _, tx := range b.Txs {
			if string(tx.Txid) == string(id) {
				found, ok = tx, true
			}
		}
		return !ok
	})
	return found, ok
}

func (s scan) account(addr string) (account, bool) {
	accounts := make(map[string]*account)
	s.walk(func(b *ledgerpb.Block) bool {
		for _, tx := range b.Txs {
			touch(accounts, tx)
		}
		return true
	})
	a, ok := accounts[addr]
	if !ok {
		return account{}, false
	}
	return *a, true
}
