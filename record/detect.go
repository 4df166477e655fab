package record

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/tandem-bench/tandem/internal/digest"
)

// Detect says which protocol a request spoke, from its HTTP major version,
// its content type and its body: gRPC by its content type
// (application/grpc, application/grpc+proto, …; not gRPC-Web), JSON-RPC
// by a body that is one JSON-RPC 2.0 request object, else HTTP/2 or
// HTTP/1.1.
func Detect(protoMajor int, contentType string, body []byte) Protocol {
	if IsGRPC(contentType) {
		return GRPC
	}
	if IsJSONRPC(body) {
		return JSONRPC
	}
	if protoMajor == 2 {
		return H2
	}
	return HTTP1
}

// IsGRPC reports whether a content type is gRPC's.
func IsGRPC(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/grpc" || strings.HasPrefix(mt, "application/grpc+")
}

// IsJSONRPC reports whether body is one JSON-RPC 2.0 request object (a
// batch is not: its answer is compared as a whole, as HTTP).
func IsJSONRPC(body []byte) bool {
	var req struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  json.RawMessage `json:"method"`
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return false
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return false
	}
	var method string
	return req.JSONRPC == "2.0" && json.Unmarshal(req.Method, &method) == nil && method != ""
}

// GRPCMessages splits a gRPC body (each message behind a 1-byte
// compressed flag and a 4-byte big-endian length) into its messages. A
// compressed message, or a body that ends inside a frame, is an error.
func GRPCMessages(body []byte) ([][]byte, error) {
	var msgs [][]byte
	for len(body) > 0 {
		if len(body) < 5 {
			return nil, errors.New("gRPC body ends inside a frame header")
		}
		if body[0] != 0 {
			return nil, errors.New("gRPC message is compressed: cannot be sent to another server as it is")
		}
		n := binary.BigEndian.Uint32(body[1:5])
		if uint64(len(body)-5) < uint64(n) {
			return nil, fmt.Errorf("gRPC message of %d bytes, but only %d follow", n, len(body)-5)
		}
		msgs = append(msgs, body[5:5+n])
		body = body[5+n:]
	}
	return msgs, nil
}

// frameDigest digests a gRPC body as it streams past (an io.Writer): the
// digest.Of its messages. A compressed message is digested as it came.
type frameDigest struct {
	d    *digest.Messages
	head [5]byte
	have int    // bytes of head read
	left uint32 // bytes of the current message still to come
	in   bool   // inside a message
}

func newFrameDigest() *frameDigest { return &frameDigest{d: digest.NewMessages()} }

func (f *frameDigest) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if f.in {
			k := min(uint32(len(p)), f.left)
			f.d.Write(p[:k])
			p, f.left = p[k:], f.left-k
			f.in = f.left > 0
			continue
		}
		k := copy(f.head[f.have:], p)
		f.have += k
		p = p[k:]
		if f.have == 5 {
			f.left = binary.BigEndian.Uint32(f.head[1:])
			f.d.Begin(uint64(f.left))
			f.have, f.in = 0, f.left > 0
		}
	}
	return n, nil
}

// complete reports whether the body ended between frames.
func (f *frameDigest) complete() bool { return !f.in && f.have == 0 }
