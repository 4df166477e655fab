package sample

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"
)

// JSON-RPC 2.0 error codes the sample uses.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeNoMethod       = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeNotFound       = -5
	codeOutOfRange     = -8
)

type rpcRequest struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Method  string            `json:"method"`
	Params  []json.RawMessage `json:"params"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type jsonrpcHandler struct{ s *Server }

func (h *jsonrpcHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var req rpcRequest
	resp := rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null")}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		resp.Error = &rpcError{codeParse, "parse error: " + err.Error()}
	} else if req.JSONRPC != "2.0" || req.Method == "" {
		resp.Error = &rpcError{codeInvalidRequest, "want jsonrpc 2.0 with a method"}
	} else {
		if req.ID != nil {
			resp.ID = req.ID
		}
		resp.Result, resp.Error = h.call(req.Method, req.Params)
	}
	code := "0"
	if resp.Error != nil {
		code = strconv.Itoa(resp.Error.Code)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
	h.s.metrics.observe("jsonrpc", req.Method, code, start)
}

// badInput is the error for malformed parameters: invalid params in build a,
// internal error in build b (a planted difference).
func (h *jsonrpcHandler) badInput(format string, args ...any) *rpcError {
	code := codeInvalidParams
	if h.s.opts.Build == BuildB {
		code = codeInternal
	}
	return &rpcError{code, fmt.Sprintf(format, args...)}
}

func (h *jsonrpcHandler) call(method string, params []json.RawMessage) (any, *rpcError) {
	st := h.s.current()
	switch method {
	case "getinfo":
		o := h.s.opts
		return map[string]any{"build": o.Build, "version": Version, "chain": "sample", "height": o.Blocks, "indexed": h.s.Indexed()}, nil
	case "getblock":
		var height uint64
		if len(params) != 1 || json.Unmarshal(params[0], &height) != nil {
			return nil, h.badInput("want [height]")
		}
		b, ok := st.block(height)
		if !ok {
			return nil, &rpcError{codeOutOfRange, "block height out of range"}
		}
		txids := make([]string, len(b.Txs))
		for i, tx := range b.Txs {
			txids[i] = hex.EncodeToString(tx.Txid)
		}
		return map[string]any{
			"height": b.Height, "hash": hex.EncodeToString(b.Hash), "previousblockhash": hex.EncodeToString(b.PrevHash),
			"time": b.Time, "tx": txids,
		}, nil
	case "getrawtransaction":
		var txid string
		verbosity := 0
		if len(params) < 1 || len(params) > 2 || json.Unmarshal(params[0], &txid) != nil ||
			(len(params) == 2 && json.Unmarshal(params[1], &verbosity) != nil) {
			return nil, h.badInput("want [txid, verbosity]")
		}
		id, err := hex.DecodeString(txid)
		if err != nil || len(id) != 32 {
			return nil, h.badInput("txid must be 64 hex digits")
		}
		tx, ok := st.tx(id)
		if !ok {
			return nil, &rpcError{codeNotFound, "no such transaction"}
		}
		if verbosity == 0 {
			raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(tx)
			if err != nil {
				return nil, &rpcError{codeInternal, err.Error()}
			}
			// Build b wraps the hex string in an object (a planted difference).
			if h.s.opts.Build == BuildB {
				return map[string]string{"hex": hex.EncodeToString(raw)}, nil
			}
			return hex.EncodeToString(raw), nil
		}
		outs := make([]map[string]any, len(tx.Outputs))
		for i, o := range tx.Outputs {
			outs[i] = map[string]any{"address": o.Address, "amount": o.Amount}
		}
		return map[string]any{"txid": txid, "height": tx.Height, "from": tx.From, "vout": outs}, nil
	case "getbalance":
		var addr string
		if len(params) != 1 || json.Unmarshal(params[0], &addr) != nil || !validAddress(addr) {
			return nil, h.badInput("want [address]")
		}
		a, _ := st.account(addr)
		count := a.txs
		if h.s.opts.Build == BuildB {
			count = a.rows
		}
		return map[string]any{"address": addr, "balance": a.balance, "tx_count": count}, nil
	case "sendtransaction":
		return h.send(params)
	case "getmempoolentry":
		var txid string
		if len(params) != 1 || json.Unmarshal(params[0], &txid) != nil {
			return nil, h.badInput("want [txid]")
		}
		id, err := hex.DecodeString(txid)
		if err != nil || len(id) != 32 {
			return nil, h.badInput("txid must be 64 hex digits")
		}
		p, ok := h.s.mempool.get([32]byte(id))
		if !ok {
			return nil, &rpcError{codeNotFound, "no such transaction in the mempool"}
		}
		return p.view(), nil
	case "getmempoolinfo":
		return map[string]any{"size": h.s.mempool.size(), "cap": mempoolCap}, nil
	}
	return nil, &rpcError{codeNoMethod, fmt.Sprintf("method %q not found", method)}
}

// send is sendtransaction [from, to, amount, nonce]: the transaction goes
// to the mempool and its id is the answer, {"txid": HEX}. Build a refuses
// an amount of 0 as invalid params; build b takes it (a planted
// difference).
func (h *jsonrpcHandler) send(params []json.RawMessage) (any, *rpcError) {
	var p pending
	if len(params) != 4 || json.Unmarshal(params[0], &p.from) != nil || json.Unmarshal(params[1], &p.to) != nil ||
		json.Unmarshal(params[2], &p.amount) != nil || json.Unmarshal(params[3], &p.nonce) != nil {
		return nil, h.badInput("want [from, to, amount, nonce]: two addresses and two unsigned integers")
	}
	if !validAddress(p.from) || !validAddress(p.to) {
		return nil, h.badInput("malformed address")
	}
	if p.amount == 0 && h.s.opts.Build == BuildA {
		return nil, h.badInput("amount must be at least 1")
	}
	id := h.s.mempool.add(p)
	return map[string]any{"txid": hex.EncodeToString(id[:])}, nil
}
