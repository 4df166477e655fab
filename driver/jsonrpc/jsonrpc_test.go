package jsonrpc

import (
	"encoding/json"
	"testing"
)

func TestRequestAndReply(t *testing.T) {
	r, err := NewRequest("getblock", []byte(`[5, "x"]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(r.Append(nil, 42)); got != `{"jsonrpc":"2.0","id":42,"method":"getblock","params":[5, "x"]}` {
		t.Errorf("Append = %s", got)
	}
	if _, err := NewRequest("m", []byte(`[1,`)); err == nil {
		t.Error("NewRequest with broken params = nil error")
	}
	if _, err := NewRequest("m", []byte(`[1] [2]`)); err == nil {
		t.Error("NewRequest with two values = nil error")
	}
	cases := []struct{ reply, result, status string }{
		{`{"jsonrpc":"2.0","id":42,"result":{"a":[1,2]}}`, `{"a":[1,2]}`, ""},
		{`{"id":42,"result":"abc"}`, `"abc"`, ""},
		{`{"id":42,"result":null}`, `null`, ""},
		{`{"id":42,"error":{"code":-32601,"message":"x"}}`, "", "jsonrpc:-32601"},
		{`{"id":42,"error":{"code":7}}`, "", "jsonrpc:7"},
		{`{"id":42,"error":{"message":"no code"}}`, "", "protocol"},
		{`{"id":41,"result":1}`, "", "protocol"},
		{`{"id":"42","result":1}`, "", "protocol"},
		{`{"id":42}`, "", "protocol"},
		{`garbage`, "", "protocol"},
	}
	for _, c := range cases {
		res, r := CheckReply([]byte(c.reply), 42)
		if string(res) != c.result || r.Status != c.status {
			t.Errorf("CheckReply(%s) = %q, %q; want %q, %q", c.reply, res, r.Status, c.result, c.status)
		}
	}
}

func FuzzCheckReply(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"result":{"a":1}}`, `{"id":1,"error":{"code":-32601}}`, `{"id":1,"result":"x"}`, `[]`, `{"id":"1"}`, ``} {
		f.Add([]byte(s), int64(1))
	}
	f.Fuzz(func(t *testing.T, reply []byte, id int64) {
		res, r := CheckReply(reply, id)
		if r.Status == "" && (r.Units != 1 || res == nil) {
			t.Fatalf("CheckReply(%q) succeeded with units %d and result %q", reply, r.Units, res)
		}
		if r.Status != "" && res != nil {
			t.Fatalf("CheckReply(%q) failed (%s) but returned a result", reply, r.Status)
		}
	})
}

func TestAppendWith(t *testing.T) {
	r, err := NewRequest("broadcast_tx_sync", []byte(`{"tx":"old"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.AppendWith(nil, 7, func(dst []byte) ([]byte, error) { return append(dst, `{"tx":"new"}`...), nil })
	if err != nil || string(got) != `{"jsonrpc":"2.0","id":7,"method":"broadcast_tx_sync","params":{"tx":"new"}}` {
		t.Errorf("AppendWith = %s, %v", got, err)
	}
	if fixed := string(r.Append(nil, 8)); fixed != `{"jsonrpc":"2.0","id":8,"method":"broadcast_tx_sync","params":{"tx":"old"}}` {
		t.Errorf("Append after AppendWith = %s", fixed)
	}
}

// A method name with control characters or quotes still makes valid JSON,
// and decodes back to itself.
func TestRequestMethodIsValidJSON(t *testing.T) {
	for _, method := range []string{"getblock", "with\x1b[2Jescape", "quote\"and\\slash", "tab\tnewline\n", "ünïcode\u2028"} {
		r, err := NewRequest(method, []byte(`[1]`))
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.AppendWith(nil, 7, func(dst []byte) ([]byte, error) { return append(dst, `[1]`...), nil })
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Method string }
		if err := json.Unmarshal(b, &got); err != nil || got.Method != method {
			t.Errorf("NewRequest(%q) = %s: %v, method %q", method, b, err, got.Method)
		}
	}
}

func TestCheckReplyTo(t *testing.T) {
	cases := []struct{ request, reply, result, status string }{
		{`{"jsonrpc":"2.0","id":7,"method":"m"}`, `{"jsonrpc":"2.0","id":7,"result":[1]}`, `[1]`, ""},
		{`{"jsonrpc":"2.0","id":7,"method":"m"}`, `{"id":7.0,"result":1}`, `1`, ""},
		{`{"jsonrpc":"2.0","id":"x\u0041","method":"m"}`, `{"id":"xA","result":"ok"}`, `"ok"`, ""},
		{`{"jsonrpc":"2.0","id":"x","method":"m"}`, `{"id":"x","error":{"code":-32602,"message":"bad"}}`, "", "jsonrpc:-32602"},
		{`{"jsonrpc":"2.0","id":null,"method":"m"}`, `{"id":null,"result":true}`, `true`, ""},
		{`{"jsonrpc":"2.0","id":"7","method":"m"}`, `{"id":7,"result":1}`, "", "protocol"},
		{`{"jsonrpc":"2.0","id":7,"method":"m"}`, `{"id":8,"result":1}`, "", "protocol"},
		{`{"jsonrpc":"2.0","id":7,"method":"m"}`, `{"result":1}`, "", "protocol"},
		{`{"jsonrpc":"2.0","method":"m"}`, `{"id":1,"result":1}`, "", "protocol"},
	}
	for _, c := range cases {
		res, r := CheckReplyTo([]byte(c.reply), []byte(c.request))
		if string(res) != c.result || r.Status != c.status {
			t.Errorf("CheckReplyTo(%s, %s) = %q, %q; want %q, %q", c.reply, c.request, res, r.Status, c.result, c.status)
		}
	}
}
