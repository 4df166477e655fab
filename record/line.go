package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"
)

// line is an exchange as one JSON line.
type line struct {
	Offset        int64       `json:"offset_ns"`
	Protocol      Protocol    `json:"protocol"`
	Method        string      `json:"method"`
	Path          string      `json:"path"`
	Headers       http.Header `json:"headers,omitempty"`
	Body          *string     `json:"body,omitempty"`
	BodyBase64    []byte      `json:"body_base64,omitempty"`
	BodySize      int64       `json:"body_size"`
	Redacted      []string    `json:"redacted,omitempty"`
	Status        int         `json:"status"`
	AnswerHeaders http.Header `json:"answer_headers,omitempty"`
	GRPCStatus    *int        `json:"grpc_status,omitempty"`
	GRPCMessage   string      `json:"grpc_message,omitempty"`
	Messages      int         `json:"answer_messages,omitempty"`
	Digest        string      `json:"digest,omitempty"`
	AnswerSize    int64       `json:"answer_size"`
	Duration      int64       `json:"duration_ns"`
	Error         string      `json:"error,omitempty"`
}

func toLine(e *Exchange) line {
	l := line{Offset: int64(e.Offset), Protocol: e.Protocol, Method: e.Method, Path: e.Path, Headers: e.Headers,
		BodySize: e.BodySize, Redacted: e.Redacted, Status: e.Status, AnswerHeaders: e.AnswerHeaders,
		GRPCStatus: e.GRPCStatus, GRPCMessage: e.GRPCMessage, Messages: e.Messages, Digest: e.Digest,
		AnswerSize: e.AnswerSize, Duration: int64(e.Duration), Error: e.Error}
	switch {
	case len(e.Body) == 0:
	case utf8.Valid(e.Body):
		s := string(e.Body)
		l.Body = &s
	default:
		l.BodyBase64 = e.Body
	}
	return l
}

func (l *line) exchange() Exchange {
	e := Exchange{Offset: time.Duration(l.Offset), Protocol: l.Protocol, Method: l.Method, Path: l.Path, Headers: l.Headers,
		BodySize: l.BodySize, Redacted: l.Redacted, Status: l.Status, AnswerHeaders: l.AnswerHeaders,
		GRPCStatus: l.GRPCStatus, GRPCMessage: l.GRPCMessage, Messages: l.Messages, Digest: l.Digest,
		AnswerSize: l.AnswerSize, Duration: time.Duration(l.Duration), Error: l.Error}
	switch {
	case l.Body != nil:
		e.Body = []byte(*l.Body)
	case l.BodyBase64 != nil:
		e.Body = l.BodyBase64
	}
	return e
}

// marshal encodes an exchange as one line, its newline included.
func marshal(e *Exchange, maxBody int) ([]byte, error) {
	if err := e.check(maxBody); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(toLine(e)); err != nil {
		return nil, fmt.Errorf("encode exchange: %w", err)
	}
	if b.Len() > MaxLine {
		return nil, fmt.Errorf("exchange of %d bytes: longer than a line may be (%d)", b.Len(), MaxLine)
	}
	return b.Bytes(), nil
}

// decodeStrict decodes one JSON value of data into v: unknown fields and
// anything after the value are errors. A syntax error keeps its offset.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return &trailingError{off: dec.InputOffset()}
	}
	return nil
}

// trailingError is data after a line's JSON object.
type trailingError struct{ off int64 }

func (e *trailingError) Error() string { return "data after the JSON object" }

// unmarshal decodes and checks one exchange line (without its newline).
func unmarshal(data []byte, maxBody int) (Exchange, error) {
	var l line
	if err := decodeStrict(data, &l); err != nil {
		return Exchange{}, err
	}
	if l.Body != nil && l.BodyBase64 != nil {
		return Exchange{}, errors.New("body and body_base64 both set: one of them")
	}
	e := l.exchange()
	return e, e.check(maxBody)
}

// check reports what makes an exchange one that cannot be written or
// replayed as it stands.
func (e *Exchange) check(maxBody int) error {
	switch {
	case !e.Protocol.Known():
		return fmt.Errorf("protocol %q: want http1, h2, grpc or jsonrpc", e.Protocol)
	case e.Method == "" || !httpguts.ValidHeaderFieldName(e.Method): // a token, as a header name is
		return fmt.Errorf("method %q: want an HTTP method such as GET or POST", e.Method)
	case !validPath(e.Path):
		return fmt.Errorf("path %q: want a path and query starting with / (or *), without spaces or control characters", e.Path)
	case e.Offset < 0 || e.Duration < 0 || e.BodySize < 0 || e.AnswerSize < 0 || e.Messages < 0:
		return errors.New("offset_ns, duration_ns, body_size, answer_size and answer_messages must not be negative")
	case int64(len(e.Body)) > e.BodySize:
		return fmt.Errorf("body of %d bytes but body_size %d", len(e.Body), e.BodySize)
	case maxBody > 0 && len(e.Body) > maxBody:
		return fmt.Errorf("body of %d bytes: more than the recording's max_body %d", len(e.Body), maxBody)
	case e.Status != 0 && (e.Status < 100 || e.Status > 999):
		return fmt.Errorf("status %d: want an HTTP status (100–999), or 0 when no answer came", e.Status)
	case e.GRPCStatus != nil && *e.GRPCStatus < 0:
		return fmt.Errorf("grpc_status %d: want a gRPC status code", *e.GRPCStatus)
	case e.Digest != "" && !validDigest(e.Digest):
		return fmt.Errorf("digest %q: want 64 lower-case hex digits", e.Digest)
	}
	for name, h := range map[string]http.Header{"headers": e.Headers, "answer_headers": e.AnswerHeaders} {
		for k, vs := range h {
			if !httpguts.ValidHeaderFieldName(k) {
				return fmt.Errorf("%s: bad header name %q", name, k)
			}
			for _, v := range vs {
				if !httpguts.ValidHeaderFieldValue(v) {
					return fmt.Errorf("%s: header %s: bad value %q", name, k, v)
				}
			}
		}
	}
	return nil
}

func validPath(p string) bool {
	if p == "*" {
		return true
	}
	if !strings.HasPrefix(p, "/") || !utf8.ValidString(p) {
		return false
	}
	for _, r := range p {
		if r <= ' ' || r == 0x7f {
			return false
		}
	}
	return true
}

func validDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	for _, c := range d {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkHeader reports what is wrong with a recording's header line.
func (h *Header) check() error {
	switch {
	case h.Format != Format:
		return fmt.Errorf("format %q: not a tandem recording (want the first line to say \"format\": %q)", h.Format, Format)
	case h.Version < 1:
		return fmt.Errorf("version %d: want 1", h.Version)
	case h.Version > Version:
		return fmt.Errorf("version %d: this tandem reads recordings up to version %d (a newer tandem wrote it)", h.Version, Version)
	case h.MaxBody < 0 || h.MaxBody > MaxMaxBody:
		return fmt.Errorf("max_body %d: want 0 to %d", h.MaxBody, MaxMaxBody)
	case h.Start.IsZero():
		return errors.New("start: want the time the recording began (RFC 3339)")
	}
	return nil
}
