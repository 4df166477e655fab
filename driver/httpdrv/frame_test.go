package httpdrv

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestFrame(t *testing.T) {
	for _, c := range []struct {
		name, in string
		n        int // -1: the whole input
		status   int
		body     string
		close    bool
		err      bool
	}{
		{name: "length", in: "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong", n: -1, status: 200, body: "pong"},
		{name: "two", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n", n: 40, status: 200, body: "ok"},
		{name: "partial head", in: "HTTP/1.1 200 OK\r\nContent-Le", n: 0},
		{name: "partial body", in: "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\npong", n: 0},
		{name: "chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\npong\r\n3;x=y\r\n!!!\r\n0\r\nX-T: 1\r\n\r\n", n: -1, status: 200, body: "pong!!!"},
		{name: "chunked partial", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\npo", n: 0},
		{name: "no content", in: "HTTP/1.1 204 No Content\r\n\r\n", n: -1, status: 204},
		{name: "continue", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Busy\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", n: -1, status: 503, close: true},
		{name: "1.0", in: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", n: -1, status: 200, close: true},
		{name: "1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n", n: -1, status: 200},
		{name: "garbage", in: "SSH-2.0-OpenSSH_9.6\r\n", err: true},
		{name: "bad status", in: "HTTP/1.1 2x0 OK\r\n\r\n", err: true},
		{name: "bad length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: true},
		{name: "two lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", err: true},
		{name: "until close", in: "HTTP/1.1 200 OK\r\n\r\nbody", err: true},
		{name: "bad chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", err: true},
	} {
		r, err := frame([]byte(c.in), nil)
		if (err != nil) != c.err {
			t.Errorf("%s: error %v", c.name, err)
			continue
		}
		want := c.n
		if want < 0 {
			want = len(c.in)
		}
		if c.err {
			continue
		}
		if r.n != want || (r.n > 0 && (r.status != c.status || string(r.body) != c.body || r.close != c.close)) {
			t.Errorf("%s: %+v; want n %d, status %d, body %q, close %v", c.name, r, want, c.status, c.body, c.close)
		}
	}
}

// The framer agrees with net/http on what net/http accepts.
func FuzzFrame(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\npong\r\n0\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.0 204 No Content\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := frame(b, nil)
		if err != nil || r.n == 0 {
			return
		}
		if r.n > len(b) {
			t.Fatalf("length %d beyond the input's %d", r.n, len(b))
		}
		br := bufio.NewReader(bytes.NewReader(b[:r.n]))
		resp, err := http.ReadResponse(br, nil)
		for err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200 {
			resp, err = http.ReadResponse(br, nil) // interim responses
		}
		if err != nil {
			return // stricter than net/http is fine; looser is checked below
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return
		}
		if resp.StatusCode != r.status || !bytes.Equal(body, r.body) && !(len(body) == 0 && len(r.body) == 0) {
			if strings.Contains(string(b[:r.n]), "\n\n") {
				return // net/http also accepts bare LF line ends
			}
			t.Fatalf("framer: status %d body %q; net/http: status %d body %q", r.status, r.body, resp.StatusCode, body)
		}
	})
}
