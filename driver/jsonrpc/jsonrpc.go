// Package jsonrpc builds JSON-RPC 2.0 requests once and checks answers
// without decoding them whole, for the drivers that carry JSON-RPC (HTTP and
// WebSocket). Only the id changes from one request to the next.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/buger/jsonparser"
	"github.com/tandem-bench/tandem/load"
)

// Request is an encoded JSON-RPC 2.0 request without its id.
type Request struct {
	prefix, suffix []byte
	// head is the suffix up to the params, for requests whose params
	// change (AppendWith).
	head []byte
}

// NewRequest encodes a request for method with params (JSON; empty means []).
func NewRequest(method string, params []byte) (*Request, error) {
	if len(params) == 0 {
		params = []byte("[]")
	}
	if !Valid(params) {
		return nil, fmt.Errorf("params for %s: not valid JSON", method)
	}
	name, err := json.Marshal(method) // JSON's quoting, not Go's (\x1b is no JSON escape)
	if err != nil {
		return nil, fmt.Errorf("method %q: %w", method, err)
	}
	head := fmt.Appendf(nil, `,"method":%s,"params":`, name)
	return &Request{
		prefix: []byte(`{"jsonrpc":"2.0","id":`),
		suffix: append(append(head[:len(head):len(head)], params...), '}'),
		head:   head,
	}, nil
}

// AppendWith appends the request with the given id and the params that
// params appends (fresh for every request, such as a new transaction).
func (r *Request) AppendWith(dst []byte, id int64, params func(dst []byte) ([]byte, error)) ([]byte, error) {
	dst = append(strconv.AppendInt(append(dst, r.prefix...), id, 10), r.head...)
	dst, err := params(dst)
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// AppendParams appends the request with the given id and params (JSON,
// rendered for this request) to dst.
func (r *Request) AppendParams(dst []byte, id int64, params []byte) []byte {
	dst = append(strconv.AppendInt(append(dst, r.prefix...), id, 10), r.head...)
	return append(append(dst, params...), '}')
}

// Append appends the request with the given id to dst.
func (r *Request) Append(dst []byte, id int64) []byte {
	return append(strconv.AppendInt(append(dst, r.prefix...), id, 10), r.suffix...)
}

// Valid reports whether b is one JSON value.
func Valid(b []byte) bool {
	_, _, end, err := jsonparser.Get(b)
	return err == nil && len(bytes.TrimSpace(b[end:])) == 0
}

// ID returns the id of an answer, and whether it has a numeric one.
func ID(reply []byte) (int64, bool) {
	id, err := jsonparser.GetInt(reply, "id")
	return id, err == nil
}

// CheckReply checks a JSON-RPC 2.0 answer to the request with the given
// id and returns its result: status protocol for an answer that is not
// JSON-RPC or answers another id, jsonrpc:CODE for an error object. The
// result aliases reply.
func CheckReply(reply []byte, id int64) ([]byte, load.Result) {
	got, ok := ID(reply)
	if !ok || got != id {
		return nil, load.Result{Status: "protocol"}
	}
	return outcome(reply)
}

// CheckReplyTo is CheckReply for an answer to request, a JSON-RPC 2.0
// request as sent (its id of any type: the answer must carry the same).
func CheckReplyTo(reply, request []byte) ([]byte, load.Result) {
	want, wt, _, werr := jsonparser.Get(request, "id")
	got, gt, _, gerr := jsonparser.Get(reply, "id")
	if (werr == nil) != (gerr == nil) || wt != gt || !sameID(want, got, wt) {
		return nil, load.Result{Status: "protocol"}
	}
	return outcome(reply)
}

// sameID compares two ids of one JSON type: numbers by value, strings by
// their text, others (null) alike.
func sameID(a, b []byte, t jsonparser.ValueType) bool {
	switch t {
	case jsonparser.Number:
		x, errA := jsonparser.ParseFloat(a)
		y, errB := jsonparser.ParseFloat(b)
		return errA == nil && errB == nil && x == y
	case jsonparser.String:
		x, errA := jsonparser.ParseString(a)
		y, errB := jsonparser.ParseString(b)
		return errA == nil && errB == nil && x == y
	}
	return true
}

// ErrorObject is a reply's error object ({"code", "message", "data"}) as
// it came, or nil when the reply has none.
func ErrorObject(reply []byte) []byte {
	obj, typ, _, err := jsonparser.Get(reply, "error")
	if err != nil || typ != jsonparser.Object {
		return nil
	}
	return obj
}

// outcome is an answer's result, or the status of its error object.
func outcome(reply []byte) ([]byte, load.Result) {
	if errObj, typ, _, err := jsonparser.Get(reply, "error"); err == nil && typ != jsonparser.Null {
		code, err := jsonparser.GetInt(errObj, "code")
		if err != nil {
			return nil, load.Result{Status: "protocol"}
		}
		return nil, load.Result{Status: Status(code)}
	}
	result, typ, _, err := jsonparser.Get(reply, "result")
	if err != nil {
		return nil, load.Result{Status: "protocol"}
	}
	if typ == jsonparser.String {
		// jsonparser returns a string's contents: widen to keep the quotes
		start := bytes.Index(reply, result)
		if start > 0 && start+len(result) < len(reply) {
			result = reply[start-1 : start+len(result)+1]
		}
	}
	return result, load.Result{Units: 1}
}

// statuses are interned so that recording a failure allocates nothing.
var statuses = map[int64]string{}

func init() {
	for _, code := range []int64{-32700, -32600, -32601, -32602, -32603, -32000, -1, -5, -8} {
		statuses[code] = "jsonrpc:" + strconv.FormatInt(code, 10)
	}
}

// Status is the status string of a JSON-RPC error code: jsonrpc:CODE.
func Status(code int64) string {
	if s, ok := statuses[code]; ok {
		return s
	}
	return "jsonrpc:" + strconv.FormatInt(code, 10)
}
