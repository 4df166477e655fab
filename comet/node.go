package comet

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Node is a CometBFT node's RPC over HTTP (the rpc.laddr address).
type Node struct {
	URL    string
	Client *http.Client
	// BlockWait bounds the wait for the next block after the mempool
	// drained; default 10 s.
	BlockWait time.Duration
}

// maxRPCBody bounds one RPC answer.
const maxRPCBody = 256 << 20

func (n *Node) get(ctx context.Context, path string, out any) error {
	c := n.Client
	if c == nil {
		c = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(n.URL, "/")+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("cometbft rpc %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRPCBody))
	if err != nil {
		return fmt.Errorf("cometbft rpc %s: %w", path, err)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    string `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("cometbft rpc %s: not JSON-RPC (HTTP %d): %.100q", path, resp.StatusCode, body)
	}
	if env.Error != nil {
		return fmt.Errorf("cometbft rpc %s: %s %s", path, env.Error.Message, env.Error.Data)
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		return fmt.Errorf("cometbft rpc %s: unexpected result: %w", path, err)
	}
	return nil
}

// Height returns the latest committed height.
func (n *Node) Height(ctx context.Context) (int64, error) {
	var st struct {
		SyncInfo struct {
			Height string `json:"latest_block_height"`
		} `json:"sync_info"`
	}
	if err := n.get(ctx, "/status", &st); err != nil {
		return 0, err
	}
	return strconv.ParseInt(st.SyncInfo.Height, 10, 64)
}

// Mempool returns the number of transactions waiting in the mempool.
func (n *Node) Mempool(ctx context.Context) (int, error) {
	var m struct {
		N string `json:"n_txs"`
	}
	if err := n.get(ctx, "/num_unconfirmed_txs", &m); err != nil {
		return 0, err
	}
	return strconv.Atoi(m.N)
}

// Block is a committed block's time and transactions.
type Block struct {
	Height int64
	Time   time.Time
	Txs    [][]byte
}

// Block fetches the block at height h.
func (n *Node) Block(ctx context.Context, h int64) (Block, error) {
	var b struct {
		Block struct {
			Header struct {
				Height string    `json:"height"`
				Time   time.Time `json:"time"`
			} `json:"header"`
			Data struct {
				Txs []string `json:"txs"`
			} `json:"data"`
		} `json:"block"`
	}
	if err := n.get(ctx, "/block?height="+strconv.FormatInt(h, 10), &b); err != nil {
		return Block{}, err
	}
	out := Block{Height: h, Time: b.Block.Header.Time}
	for _, t := range b.Block.Data.Txs {
		tx, err := base64.StdEncoding.DecodeString(t)
		if err != nil {
			return Block{}, fmt.Errorf("block %d: a transaction is not base64: %w", h, err)
		}
		out.Txs = append(out.Txs, tx)
	}
	return out, nil
}

// TxHash is a transaction's hash as CometBFT computes it (SHA-256).
func TxHash(tx []byte) [32]byte { return sha256.Sum256(tx) }
