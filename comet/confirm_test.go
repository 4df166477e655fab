package comet

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// chain is a purpose-built server for the slice of CometBFT's RPC that a
// Confirmer reads: /status, /num_unconfirmed_txs and /block.
type chain struct {
	mu      sync.Mutex
	blocks  []Block // index = height - 1
	mempool int
	grow    bool // a new empty block on every /status
}

func (c *chain) serve(t *testing.T) *Node {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		var result any
		switch r.URL.Path {
		case "/status":
			if c.grow {
				last := c.blocks[len(c.blocks)-1]
				c.blocks = append(c.blocks, Block{Height: last.Height + 1, Time: last.Time.Add(500 * time.Millisecond)})
			}
			result = map[string]any{"sync_info": map[string]any{"latest_block_height": strconv.Itoa(len(c.blocks))}}
		case "/num_unconfirmed_txs":
			result = map[string]any{"n_txs": strconv.Itoa(c.mempool)}
		case "/block":
			h, _ := strconv.Atoi(r.URL.Query().Get("height"))
			if h < 1 || h > len(c.blocks) {
				json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": -32603, "message": "height not available"}})
				return
			}
			b := c.blocks[h-1]
			txs := []string{}
			for _, tx := range b.Txs {
				txs = append(txs, base64.StdEncoding.EncodeToString(tx))
			}
			result = map[string]any{"block": map[string]any{"header": map[string]any{"height": strconv.Itoa(h), "time": b.Time.Format(time.RFC3339Nano)},
				"data": map[string]any{"txs": txs}}}
		default:
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": -1, "result": result})
	}))
	t.Cleanup(srv.Close)
	return &Node{URL: srv.URL}
}

func tx(t *testing.T, id [16]byte, sent time.Time) []byte {
	p := &Payload{Connections: 1, Rate: 10, Time: sent, ID: id}
	b, err := p.Tx(256)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1000, int64(time.Hour), 3) }

func TestConfirmDuplicatesAndNegatives(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	run, other := NewRunID(), NewRunID()
	a, b, late := tx(t, run, t0), tx(t, run, t0.Add(100*time.Millisecond)), tx(t, run, t0.Add(5*time.Second))
	c := &chain{blocks: []Block{
		{Height: 1, Time: t0.Add(-time.Second)},
		{Height: 2, Time: t0.Add(500 * time.Millisecond), Txs: [][]byte{a, b, tx(t, other, t0), []byte("not a payload")}},
		{Height: 3, Time: t0.Add(time.Second), Txs: [][]byte{a, late}}, // a again: a node restarted under load re-proposes it
		{Height: 4, Time: t0.Add(1500 * time.Millisecond)},
	}, grow: true}
	n := c.serve(t)
	conf, err := n.Confirm(context.Background(), run, 1, time.Second, newHist)
	if err != nil {
		t.Fatal(err)
	}
	// a and b in block 2 get block 3's time; late in block 3 gets block 4's,
	// which is before its send time: negative.
	if conf.Confirmed != 3 || conf.Duplicates != 1 || conf.Negative != 1 || !conf.Drained {
		t.Errorf("confirmed %d, duplicates %d, negative %d, drained %v; want 3, 1, 1, true", conf.Confirmed, conf.Duplicates, conf.Negative, conf.Drained)
	}
	wantMean := (time.Second + 900*time.Millisecond + (1500*time.Millisecond - 5*time.Second)) / 3
	if conf.Mean != wantMean {
		t.Errorf("mean %s; want %s (negative latencies count, as in CometBFT's report)", conf.Mean, wantMean)
	}
	if conf.Latency.TotalCount() != 2 || len(conf.Blocks) != 2 || conf.Blocks[0].Height != 2 || conf.Blocks[0].Txs != 2 {
		t.Errorf("histogram %d values, blocks %+v", conf.Latency.TotalCount(), conf.Blocks)
	}
}

func TestConfirmStalledNode(t *testing.T) {
	c := &chain{blocks: []Block{{Height: 1, Time: time.Now()}}, mempool: 5}
	n := c.serve(t)
	n.BlockWait = 300 * time.Millisecond
	start := time.Now()
	_, err := n.Confirm(context.Background(), NewRunID(), 1, 200*time.Millisecond, newHist)
	if err == nil || !strings.Contains(err.Error(), "no block after height 1") {
		t.Errorf("a node that makes no blocks: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("waited %s; the bound is drain + block wait", d)
	}
}

func TestNodeErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html>not json-rpc</html>")
	}))
	defer srv.Close()
	if _, err := (&Node{URL: srv.URL}).Height(context.Background()); err == nil || !strings.Contains(err.Error(), "not JSON-RPC") {
		t.Errorf("garbage: %v", err)
	}
	if _, err := (&Node{URL: "http://127.0.0.1:1"}).Height(context.Background()); err == nil {
		t.Error("a closed port answered")
	}
}
