package sample

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestMempoolWriteThenRead(t *testing.T) {
	sa, _ := start(t, BuildA, 10)
	sb, _ := start(t, BuildB, 10)
	ids := map[Build]string{}
	for _, s := range []*Server{sa, sb} {
		res, rerr := rpc(t, s, "sendtransaction", "tz1000010", "tz1000042", 5, 1)
		if rerr != nil {
			t.Fatalf("%s: sendtransaction: %v", s.opts.Build, rerr)
		}
		var sent struct{ Txid string }
		if err := json.Unmarshal(res, &sent); err != nil || len(sent.Txid) != 64 {
			t.Fatalf("%s: sendtransaction = %s, %v; want {txid: 64 hex digits}", s.opts.Build, res, err)
		}
		ids[s.opts.Build] = sent.Txid
		res, rerr = rpc(t, s, "getmempoolentry", sent.Txid)
		if rerr != nil {
			t.Fatalf("%s: getmempoolentry: %v", s.opts.Build, rerr)
		}
		var got struct {
			Txid, From, To string
			Amount, Nonce  uint64
		}
		if err := json.Unmarshal(res, &got); err != nil {
			t.Fatal(err)
		}
		if got.Txid != sent.Txid || got.From != "tz1000010" || got.To != "tz1000042" || got.Amount != 5 || got.Nonce != 1 {
			t.Errorf("%s: getmempoolentry = %s; want what was sent", s.opts.Build, res)
		}
		// sending it again is idempotent: the same id, one entry
		again, _ := rpc(t, s, "sendtransaction", "tz1000010", "tz1000042", 5, 1)
		if string(again) != string(mustJSON(t, map[string]string{"txid": sent.Txid})) {
			t.Errorf("%s: sent again = %s; want the same txid", s.opts.Build, again)
		}
		info, _ := rpc(t, s, "getmempoolinfo")
		if string(info) != fmt.Sprintf(`{"cap":%d,"size":1}`, mempoolCap) {
			t.Errorf("%s: getmempoolinfo = %s; want size 1", s.opts.Build, info)
		}
	}
	if ids[BuildA] != ids[BuildB] {
		t.Errorf("one transaction, two ids: a %s, b %s", ids[BuildA], ids[BuildB])
	}
}

func TestMempoolErrors(t *testing.T) {
	sa, _ := start(t, BuildA, 10)
	sb, _ := start(t, BuildB, 10)
	for _, tc := range []struct {
		method string
		params []any
		codeA  int // 0: an answer
		codeB  int
	}{
		{"sendtransaction", []any{"tz1000010", "tz1000042", 0, 1}, codeInvalidParams, 0}, // planted: b takes a zero amount
		{"sendtransaction", []any{"tz1000010", "tz1000042", 5}, codeInvalidParams, codeInternal},
		{"sendtransaction", []any{"tz1000010", "nope", 5, 1}, codeInvalidParams, codeInternal},
		{"sendtransaction", []any{"tz1000010", "tz1000042", -5, 1}, codeInvalidParams, codeInternal},
		{"getmempoolentry", []any{"00"}, codeInvalidParams, codeInternal},
		{"getmempoolentry", []any{fmt.Sprintf("%064x", 7)}, codeNotFound, codeNotFound},
	} {
		for _, c := range []struct {
			s    *Server
			want int
		}{{sa, tc.codeA}, {sb, tc.codeB}} {
			_, rerr := rpc(t, c.s, tc.method, tc.params...)
			got := 0
			if rerr != nil {
				got = rerr.Code
			}
			if got != c.want {
				t.Errorf("%s: %s%v: code %d; want %d", c.s.opts.Build, tc.method, tc.params, got, c.want)
			}
		}
	}
}

func TestMempoolForgetsTheOldest(t *testing.T) {
	m := newMempool()
	first := m.add(pending{from: "tz1000001", to: "tz1000002", amount: 1, nonce: 0})
	var last [32]byte
	for n := uint64(1); n <= mempoolCap; n++ {
		last = m.add(pending{from: "tz1000001", to: "tz1000002", amount: 1, nonce: n})
	}
	if m.size() != mempoolCap {
		t.Errorf("size %d after %d sends; want the cap %d", m.size(), mempoolCap+1, mempoolCap)
	}
	if _, ok := m.get(first); ok {
		t.Error("the oldest is still held past the cap")
	}
	if p, ok := m.get(last); !ok || p.nonce != mempoolCap {
		t.Errorf("the newest = %+v, %v; want nonce %d", p, ok, mempoolCap)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
