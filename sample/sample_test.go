package sample

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

const testBlocks = 300

// start runs a sample server for the test and closes it at cleanup.
func start(t *testing.T, build Build, work int) (*Server, ledgerpb.LedgerClient) {
	t.Helper()
	s, err := Start(context.Background(), Options{Build: build, DataDir: t.TempDir(), Blocks: testBlocks, Work: work})
	if err != nil {
		t.Fatalf("Start(%s): %v", build, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	cc, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return s, ledgerpb.NewLedgerClient(cc)
}

func waitIndexed(t *testing.T, s *Server) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !s.Indexed() {
		if time.Now().After(deadline) {
			t.Fatal("index not built after 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func rpc(t *testing.T, s *Server, method string, params ...any) (json.RawMessage, *rpcError) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	resp, err := http.Post("http://"+s.HTTPAddr()+"/", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.ID != 7 {
		t.Errorf("%s: id %d; want 7", method, out.ID)
	}
	return out.Result, out.Error
}

// dupAddress finds an address paid twice by one transaction.
func dupAddress(t *testing.T) (addr string, txid []byte) {
	g := newChainGen(1, 300)
	for h := 0; h < testBlocks; h++ {
		for _, tx := range g.block().Txs {
			seen := map[string]bool{}
			for _, o := range tx.Outputs {
				if seen[o.Address] && o.Address != tx.From {
					return o.Address, tx.Txid
				}
				seen[o.Address] = true
			}
		}
	}
	t.Fatal("no transaction pays one address twice")
	return "", nil
}

func TestChainIsDeterministic(t *testing.T) {
	a, b := newChainGen(42, 100), newChainGen(42, 100)
	for i := 0; i < 50; i++ {
		x, y := a.block(), b.block()
		if !bytes.Equal(x.Hash, y.Hash) {
			t.Fatalf("block %d: hashes differ", i)
		}
		if i > 0 && len(x.PrevHash) != 32 {
			t.Fatalf("block %d: prev hash %x", i, x.PrevHash)
		}
	}
	if c := newChainGen(43, 100); bytes.Equal(c.block().Hash, newChainGen(42, 100).block().Hash) {
		t.Error("seeds 42 and 43 give the same genesis block")
	}
}

func TestBuildsAgreeAndDiffer(t *testing.T) {
	ctx := context.Background()
	sa, a := start(t, BuildA, 10)
	sb, b := start(t, BuildB, 10)
	waitIndexed(t, sb)

	t.Run("info", func(t *testing.T) {
		ia, err := a.Info(ctx, &ledgerpb.InfoRequest{})
		if err != nil {
			t.Fatal(err)
		}
		ib, err := b.Info(ctx, &ledgerpb.InfoRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if ia.Build != "a" || ib.Build != "b" || ia.Height != testBlocks || !ia.Indexed || !ib.Indexed {
			t.Errorf("Info: a %v, b %v", ia, ib)
		}
	})
	t.Run("block hash agrees, prev_hash reversed in b", func(t *testing.T) {
		ba, err := a.GetBlock(ctx, &ledgerpb.BlockRequest{Height: 17})
		if err != nil {
			t.Fatal(err)
		}
		bb, err := b.GetBlock(ctx, &ledgerpb.BlockRequest{Height: 17})
		if err != nil {
			t.Fatal(err)
		}
		rev := slices.Clone(bb.PrevHash)
		slices.Reverse(rev)
		if !bytes.Equal(ba.Hash, bb.Hash) || !bytes.Equal(ba.PrevHash, rev) || bytes.Equal(ba.PrevHash, bb.PrevHash) {
			t.Errorf("GetBlock(17): a hash %x prev %x; b hash %x prev %x", ba.Hash, ba.PrevHash, bb.Hash, bb.PrevHash)
		}
		prev, _ := a.GetBlock(ctx, &ledgerpb.BlockRequest{Height: 16})
		if !bytes.Equal(prev.Hash, ba.PrevHash) {
			t.Errorf("a: block 17's prev_hash %x is not block 16's hash %x", ba.PrevHash, prev.Hash)
		}
	})
	t.Run("status codes", func(t *testing.T) {
		cases := []struct {
			name         string
			call         func(ledgerpb.LedgerClient) error
			wantA, wantB codes.Code
		}{
			{"short txid", func(c ledgerpb.LedgerClient) error {
				_, err := c.GetTransaction(ctx, &ledgerpb.TxRequest{Txid: []byte{1, 2}})
				return err
			}, codes.InvalidArgument, codes.Internal},
			{"bad address", func(c ledgerpb.LedgerClient) error {
				_, err := c.GetBalance(ctx, &ledgerpb.BalanceRequest{Address: "nope"})
				return err
			}, codes.InvalidArgument, codes.Internal},
			{"beyond tip", func(c ledgerpb.LedgerClient) error {
				_, err := c.GetBlock(ctx, &ledgerpb.BlockRequest{Height: testBlocks})
				return err
			}, codes.NotFound, codes.NotFound},
			{"unknown txid", func(c ledgerpb.LedgerClient) error {
				_, err := c.GetTransaction(ctx, &ledgerpb.TxRequest{Txid: make([]byte, 32)})
				return err
			}, codes.NotFound, codes.NotFound},
		}
		for _, c := range cases {
			if got := status.Code(c.call(a)); got != c.wantA {
				t.Errorf("%s: a says %v; want %v", c.name, got, c.wantA)
			}
			if got := status.Code(c.call(b)); got != c.wantB {
				t.Errorf("%s: b says %v; want %v", c.name, got, c.wantB)
			}
		}
	})
	t.Run("duplicate address counted twice by b", func(t *testing.T) {
		addr, _ := dupAddress(t)
		ga, err := a.GetBalance(ctx, &ledgerpb.BalanceRequest{Address: addr})
		if err != nil {
			t.Fatal(err)
		}
		gb, err := b.GetBalance(ctx, &ledgerpb.BalanceRequest{Address: addr})
		if err != nil {
			t.Fatal(err)
		}
		if ga.Balance != gb.Balance || gb.TxCount <= ga.TxCount || ga.TxCount == 0 {
			t.Errorf("GetBalance(%s): a %v, b %v; want equal balances and b counting more", addr, ga, gb)
		}
	})
	t.Run("stream", func(t *testing.T) {
		st, err := a.GetBlockRange(ctx, &ledgerpb.BlockRange{Start: 10, End: 19})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			blk, err := st.Recv()
			if err != nil {
				break
			}
			if blk.Height != uint64(10+n) {
				t.Errorf("message %d has height %d", n, blk.Height)
			}
			n++
		}
		if n != 10 {
			t.Errorf("GetBlockRange(10, 19) streamed %d blocks; want 10", n)
		}
		st, _ = a.GetBlockRange(ctx, &ledgerpb.BlockRange{Start: testBlocks - 2, End: testBlocks + 5})
		n = 0
		var last error
		for last == nil {
			if _, last = st.Recv(); last == nil {
				n++
			}
		}
		if n != 2 || status.Code(last) != codes.NotFound {
			t.Errorf("range past the tip: %d blocks then %v; want 2 then NOT_FOUND", n, last)
		}
	})
	t.Run("jsonrpc", func(t *testing.T) {
		_, txid := dupAddress(t)
		id := hex.EncodeToString(txid)
		ra, ea := rpc(t, sa, "getrawtransaction", id, 0)
		rb, eb := rpc(t, sb, "getrawtransaction", id, 0)
		var hexA string
		var objB struct{ Hex string }
		if ea != nil || eb != nil || json.Unmarshal(ra, &hexA) != nil || json.Unmarshal(rb, &objB) != nil || hexA != objB.Hex || hexA == "" {
			t.Errorf("getrawtransaction verbosity 0: a %s %v, b %s %v; want a string and an object holding it", ra, ea, rb, eb)
		}
		va, _ := rpc(t, sa, "getrawtransaction", id, 1)
		vb, _ := rpc(t, sb, "getrawtransaction", id, 1)
		if !bytes.Equal(va, vb) {
			t.Errorf("getrawtransaction verbosity 1 differs: %s vs %s", va, vb)
		}
		if _, e := rpc(t, sa, "getbalance", "x"); e == nil || e.Code != codeInvalidParams {
			t.Errorf("a getbalance(x) error %v; want %d", e, codeInvalidParams)
		}
		if _, e := rpc(t, sb, "getbalance", "x"); e == nil || e.Code != codeInternal {
			t.Errorf("b getbalance(x) error %v; want %d", e, codeInternal)
		}
		if _, e := rpc(t, sa, "nosuch"); e == nil || e.Code != codeNoMethod {
			t.Errorf("nosuch: error %v; want %d", e, codeNoMethod)
		}
		if _, e := rpc(t, sa, "getblock", testBlocks+1); e == nil || e.Code != codeOutOfRange {
			t.Errorf("getblock past tip: error %v; want %d", e, codeOutOfRange)
		}
	})
	t.Run("metrics", func(t *testing.T) {
		resp, err := http.Get("http://" + sa.HTTPAddr() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		for _, want := range []string{`sample_build_info{build="a"} 1`, "sample_indexed 1", `sample_requests_total{api="grpc"`, "process_resident_memory_bytes"} {
			if !bytes.Contains(buf.Bytes(), []byte(want)) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}

func TestBuildBAnswersWhileIndexing(t *testing.T) {
	ctx := context.Background()
	sb, b := start(t, BuildB, 50_000) // an index that takes a while
	if sb.Indexed() {
		t.Fatal("b indexed at once; the test needs a slower index")
	}
	info, err := b.Info(ctx, &ledgerpb.InfoRequest{})
	if err != nil || info.Indexed {
		t.Fatalf("Info while indexing = %v, %v; want indexed false", info, err)
	}
	blk, err := b.GetBlock(ctx, &ledgerpb.BlockRequest{Height: 5})
	if err != nil {
		t.Fatalf("GetBlock while indexing: %v", err)
	}
	want := newChainGen(1, 300)
	for i := 0; i < 5; i++ {
		want.block()
	}
	if !bytes.Equal(blk.Hash, want.block().Hash) {
		t.Errorf("slow path block 5 hash %x differs from the chain's", blk.Hash)
	}
}

func TestOptionsErrors(t *testing.T) {
	for _, o := range []Options{{Build: "c", DataDir: "x"}, {Build: BuildA}} {
		if _, err := Start(context.Background(), o); err == nil {
			t.Errorf("Start(%+v) = nil error", o)
		}
	}
}
