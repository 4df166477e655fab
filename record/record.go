// Package record keeps recordings of a service's traffic: the JSONL format
// (a header line, then one line per exchange: the request as sent, and the
// answer's status, digest and duration), a streaming Reader and a Writer
// that appends each line whole, the redaction of secrets, an importer of
// HAR 1.2 files, and the recording reverse proxy `tandem record` runs.
// docs/recording.md describes the format line by line.
package record

import (
	"net/http"
	"time"
)

// Format names the recording format in its header line; Version is the
// format's version this package writes and the newest it reads.
const (
	Format  = "tandem-recording"
	Version = 1
)

// Body limits: a request body is kept up to the recording's MaxBody
// (DefaultMaxBody unless chosen, at most MaxMaxBody); a line is at most
// MaxLine bytes.
const (
	DefaultMaxBody = 1 << 20
	MaxMaxBody     = 8 << 20
	MaxLine        = 16 << 20
)

// Protocol is what an exchange spoke.
type Protocol string

// The protocols of an exchange: HTTP/1.1, HTTP/2 (h2c or TLS), gRPC (over
// HTTP/2, content type application/grpc) and JSON-RPC 2.0 over HTTP (a
// request body that is one JSON-RPC request object).
const (
	HTTP1   Protocol = "http1"
	H2      Protocol = "h2"
	GRPC    Protocol = "grpc"
	JSONRPC Protocol = "jsonrpc"
)

// Known reports whether p is one of the protocols above.
func (p Protocol) Known() bool {
	switch p {
	case HTTP1, H2, GRPC, JSONRPC:
		return true
	}
	return false
}

// Header is a recording's first line.
type Header struct {
	// Format is always Format, Version the format's version.
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Upstream is the server the traffic went to (scheme://host:port).
	Upstream string `json:"upstream"`
	// Start is when the recording began; exchanges' offsets count from it.
	Start time.Time `json:"start"`
	// MaxBody is the most bytes of a request body kept.
	MaxBody int `json:"max_body"`
	// SecretsKept is set when nothing was redacted (--keep-secrets).
	SecretsKept bool `json:"secrets_kept,omitempty"`
	// Source is how the recording was made: "proxy" or "har".
	Source string `json:"source,omitempty"`
}

// Exchange is one request and what its answer was.
type Exchange struct {
	// Offset is when the request arrived, from the recording's Start.
	Offset   time.Duration
	Protocol Protocol
	// Method is the HTTP method; Path the request's path and query as sent.
	Method, Path string
	// Headers are the request's end-to-end headers (without hop-by-hop
	// headers, Host and Content-Length), secrets redacted.
	Headers http.Header
	// Body is the request body, at most the recording's MaxBody bytes;
	// BodySize is its whole size (larger when Body was cut).
	Body     []byte
	BodySize int64
	// Redacted says what was redacted: "header NAME", "query", "body".
	Redacted []string
	// Status is the answer's HTTP status; 0 when none came (see Error).
	Status int
	// AnswerHeaders are the answer's Content-Type, Content-Encoding and
	// Grpc-Encoding, when it had them.
	AnswerHeaders http.Header
	// GRPCStatus (nil: none) and GRPCMessage are a gRPC answer's status
	// from its trailers; Messages counts a gRPC answer's messages.
	GRPCStatus  *int
	GRPCMessage string
	Messages    int
	// Digest is the SHA-256 (hex) of the answer's body as received; for
	// gRPC, digest.Of its messages (the digest compat gives an answer
	// whose messages are deterministically encoded). Empty when no whole
	// answer came. AnswerSize is the body's size in bytes.
	Digest     string
	AnswerSize int64
	// Duration is from the request's arrival to the answer's last byte.
	Duration time.Duration
	// Error says why no whole answer was recorded.
	Error string
}

// Truncated reports whether the request body was cut at the recording's
// MaxBody.
func (e *Exchange) Truncated() bool { return e.BodySize > int64(len(e.Body)) }
