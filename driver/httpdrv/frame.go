package httpdrv

import (
	"bytes"
	"errors"
	"fmt"
)

// A response is the framing of one HTTP/1.1 response at the start of a
// buffer.
type response struct {
	// n is its length in bytes; 0 when the buffer holds only part of it.
	n int
	// status is its status code.
	status int
	// body is its body: a slice of the buffer, or of scratch when the body
	// came in chunks.
	body []byte
	// close says the server closes the connection after it.
	close bool
	// chunked says body is in scratch.
	chunked bool
}

// maxHead bounds a response's status line and headers.
const maxHead = 64 << 10

var errFrame = errors.New("not an HTTP/1.1 response")

// frame finds the first complete response in b. Interim (1xx) responses
// before it are skipped and counted in n. A body needs a Content-Length or
// chunked encoding (a response delimited by the connection's close is an
// error here). A chunked body is joined into scratch (reused). An error
// says b does not start with a response this framer reads.
func frame(b, scratch []byte) (response, error) {
	off := 0
	for {
		r, err := frameOne(b[off:], scratch)
		if err != nil || r.n == 0 {
			return response{}, err
		}
		if r.status >= 200 {
			r.n += off
			return r, nil
		}
		off += r.n // 1xx: another response follows
	}
}

func frameOne(b, scratch []byte) (response, error) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		if len(b) > maxHead {
			return response{}, fmt.Errorf("%w: no end of headers in %d bytes", errFrame, len(b))
		}
		if len(b) >= 5 && !bytes.HasPrefix(b, []byte("HTTP/")) {
			return response{}, errFrame
		}
		return response{}, nil
	}
	head := b[:end]
	if bytes.Count(head, []byte("\n")) != bytes.Count(head, []byte("\r\n")) {
		return response{}, fmt.Errorf("%w: a bare LF in the headers", errFrame)
	}
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	// HTTP/1.x NNN reason
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || (line[7] != '0' && line[7] != '1') || line[8] != ' ' ||
		len(line) > 12 && line[12] != ' ' {
		return response{}, errFrame
	}
	var r response
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return response{}, fmt.Errorf("%w: status %q", errFrame, line[9:12])
		}
		r.status = r.status*10 + int(c-'0')
	}
	if r.status < 100 {
		return response{}, fmt.Errorf("%w: status %d", errFrame, r.status)
	}
	r.close = line[7] == '0' // HTTP/1.0 closes unless told otherwise
	length, chunked := -1, false
	for len(rest) > 0 {
		var h []byte
		h, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return response{}, fmt.Errorf("%w: header line %q", errFrame, h)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, ok := parseLength(value)
			if !ok || (length >= 0 && n != length) {
				return response{}, fmt.Errorf("%w: Content-Length %q", errFrame, value)
			}
			length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
			if !chunked {
				return response{}, fmt.Errorf("%w: Transfer-Encoding %q", errFrame, value)
			}
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				r.close = true
			} else if bytes.EqualFold(value, []byte("keep-alive")) {
				r.close = false
			}
		}
	}
	if chunked && line[7] == '0' {
		// RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding is
		// faulty framing (net/http ignores the header and reads to the close)
		return response{}, fmt.Errorf("%w: Transfer-Encoding on an HTTP/1.0 response", errFrame)
	}
	bodyStart := end + 4
	switch {
	case r.status < 200 || r.status == 204 || r.status == 304:
		r.n = bodyStart // no body
	case chunked:
		n, body, err := dechunk(b[bodyStart:], scratch[:0])
		if err != nil || n == 0 {
			return response{}, err
		}
		r.n, r.body, r.chunked = bodyStart+n, body, true
	case length >= 0:
		if len(b) < bodyStart+length {
			return response{}, nil
		}
		r.n, r.body = bodyStart+length, b[bodyStart:bodyStart+length]
	default:
		return response{}, fmt.Errorf("%w: a body delimited by the connection's close", errFrame)
	}
	return r, nil
}

// parseLength parses a non-negative decimal length.
func parseLength(v []byte) (int, bool) {
	if len(v) == 0 || len(v) > 15 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// dechunk reads a chunked body from b: its length in b (0 if incomplete)
// and the joined body, appended to out.
func dechunk(b, out []byte) (int, []byte, error) {
	off := 0
	for {
		i := bytes.Index(b[off:], []byte("\r\n"))
		if i < 0 {
			if len(b)-off > 1024 {
				return 0, nil, fmt.Errorf("%w: chunk size line too long", errFrame)
			}
			return 0, nil, nil
		}
		sizeLine, _, _ := bytes.Cut(b[off:off+i], []byte(";")) // chunk extensions
		size, ok := parseHex(bytes.TrimSpace(sizeLine))
		if !ok {
			return 0, nil, fmt.Errorf("%w: chunk size %q", errFrame, sizeLine)
		}
		off += i + 2
		if size == 0 {
			// trailers, then an empty line
			for {
				j := bytes.Index(b[off:], []byte("\r\n"))
				if j < 0 {
					return 0, nil, nil
				}
				off += j + 2
				if j == 0 {
					return off, out, nil
				}
			}
		}
		if len(b)-off < size+2 {
			return 0, nil, nil
		}
		if b[off+size] != '\r' || b[off+size+1] != '\n' {
			return 0, nil, fmt.Errorf("%w: chunk not followed by CRLF", errFrame)
		}
		out = append(out, b[off:off+size]...)
		off += size + 2
	}
}

func parseHex(v []byte) (int, bool) {
	if len(v) == 0 || len(v) > 12 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}
