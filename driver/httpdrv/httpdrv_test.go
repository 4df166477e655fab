package httpdrv

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/pong"
	"github.com/tandem-bench/tandem/load"

	"github.com/buger/jsonparser"
)

func do(t *testing.T, o Options) ([][]byte, string) {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	cn, err := c.DialConn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	ans, res := cn.Ask(context.Background())
	return ans, res.Status
}

func TestHTTPRequestShape(t *testing.T) {
	var gotMethod, gotHeader, gotBody string
	var gotProto int
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotMethod, gotHeader, gotBody, gotProto = r.Method, r.Header.Get("X-Test"), string(b), r.ProtoMajor
		io.WriteString(w, "answer")
	})
	plain := httptest.NewServer(h)
	defer plain.Close()
	ans, st := do(t, Options{URL: plain.URL + "/x", Headers: map[string]string{"X-Test": "yes"}, Body: []byte("payload")})
	if st != "" || string(ans[0]) != "answer" || gotMethod != "POST" || gotHeader != "yes" || gotBody != "payload" || gotProto != 1 {
		t.Errorf("HTTP/1.1: %q %q; server saw %s %q %q HTTP/%d", ans, st, gotMethod, gotHeader, gotBody, gotProto)
	}

	tlsSrv := httptest.NewUnstartedServer(h)
	tlsSrv.EnableHTTP2 = true
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	if _, st := do(t, Options{URL: tlsSrv.URL, HTTP2: true, Insecure: true}); st != "" || gotProto != 2 {
		t.Errorf("HTTP/2 over TLS: status %q, server saw HTTP/%d", st, gotProto)
	}
	if _, st := do(t, Options{URL: tlsSrv.URL, Insecure: true}); st != "" || gotProto != 1 {
		t.Errorf("HTTP/1.1 over TLS: status %q, server saw HTTP/%d", st, gotProto)
	}
	if _, st := do(t, Options{URL: tlsSrv.URL}); st != "tls" {
		t.Errorf("untrusted certificate: status %q; want tls", st)
	}
	if _, st := do(t, Options{URL: strings.Replace(plain.URL, "http:", "https:", 1)}); st != "tls" {
		t.Errorf("https to a plain server: status %q; want tls", st)
	}

	h2c := h2cServer(t, h)
	if _, st := do(t, Options{URL: h2c.URL, HTTP2: true}); st != "" || gotProto != 2 {
		t.Errorf("h2c: status %q, server saw HTTP/%d", st, gotProto)
	}
}

// h2cServer serves h over HTTP/1.1 and cleartext HTTP/2 until the test
// ends, on ln if one is given, else on 127.0.0.1.
func h2cServer(t *testing.T, h http.Handler, ln ...net.Listener) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	if len(ln) > 0 {
		srv.Listener.Close()
		srv.Listener = ln[0]
	}
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// Requests carry no User-Agent (as wrk's) unless the headers give one, on
// every path: HTTP/1.1, h2c, and the event loop's wire.
func TestUserAgent(t *testing.T) {
	seen := make(chan []string, 1) // the User-Agent values of each request
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Values("User-Agent")
		io.WriteString(w, "ok")
	})
	srv := h2cServer(t, h)
	viaLoop := func(o Options) string {
		c, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		s, err := load.Closed{Concurrency: 1, Requests: 1, Engine: "loop"}.Run(context.Background(), c)
		if err != nil {
			t.Fatalf("loop: %v", err)
		}
		for st := range s.Errors {
			return st
		}
		return ""
	}
	viaConn := func(o Options) string { _, st := do(t, o); return st }
	for _, c := range []struct {
		name string
		send func(Options) string
		o    Options
	}{
		{"http/1.1", viaConn, Options{URL: srv.URL}},
		{"h2c", viaConn, Options{URL: srv.URL, HTTP2: true}},
		{"loop", viaLoop, Options{URL: srv.URL}},
		{"h2c loop", viaLoop, Options{URL: srv.URL, HTTP2: true}},
	} {
		for _, ua := range []string{"", "probe/1"} {
			o := c.o
			if ua != "" {
				o.Headers = map[string]string{"User-Agent": ua}
			}
			if st := c.send(o); st != "" {
				t.Fatalf("%s: status %q", c.name, st)
			}
			var got []string
			select {
			case got = <-seen:
			default:
				t.Fatalf("%s: the server saw no request", c.name)
			}
			want := []string(nil)
			if ua != "" {
				want = []string{ua}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s with User-Agent %q: server saw %q; want %q", c.name, ua, got, want)
			}
		}
	}
}

func TestJSONRPC(t *testing.T) {
	reply := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id, _ := jsonparser.GetInt(body, "id")
		method, _ := jsonparser.GetString(body, "method")
		if method != "m" || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(400)
			return
		}
		io.WriteString(w, strings.ReplaceAll(reply, "ID", itoa(id)))
	}))
	defer srv.Close()
	cases := []struct {
		reply, want, status string
	}{
		{`{"jsonrpc":"2.0","id":ID,"result":{"a":[1,2]}}`, `{"a":[1,2]}`, ""},
		{`{"jsonrpc":"2.0","id":ID,"result":"abc"}`, `"abc"`, ""},
		// a failure's answer is its error object, compared by compat
		{`{"jsonrpc":"2.0","id":ID,"result":null,"error":{"code":-5,"message":"no"}}`, `{"code":-5,"message":"no"}`, "jsonrpc:-5"},
		{`{"jsonrpc":"2.0","id":999,"result":1}`, "", "protocol"},
		{`not json`, "", "protocol"},
		{`{"jsonrpc":"2.0","id":ID}`, "", "protocol"},
	}
	for _, c := range cases {
		reply = c.reply
		ans, st := do(t, Options{URL: srv.URL, RPCMethod: "m", RPCParams: []byte(`[1,"x"]`)})
		got := ""
		if len(ans) > 0 {
			got = string(ans[0])
		}
		if got != c.want || st != c.status {
			t.Errorf("reply %s: answer %q, status %q; want %q, %q", c.reply, got, st, c.want, c.status)
		}
	}
	if _, err := New(Options{URL: srv.URL, RPCMethod: "m", RPCParams: []byte(`[1,`)}); err == nil {
		t.Error("invalid params accepted")
	}
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// badServer accepts connections and answers each with f.
func badServer(t *testing.T, f func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 4096)
				c.Read(buf)
				f(c)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

func TestBadServers(t *testing.T) {
	garbage := badServer(t, func(c net.Conn) { io.WriteString(c, "HELLO THERE\r\n\r\n") })
	if _, st := do(t, Options{URL: garbage, Timeout: 2 * time.Second}); st != "protocol" {
		t.Errorf("garbage answer: status %q; want protocol", st)
	}
	reset := badServer(t, func(c net.Conn) { c.(*net.TCPConn).SetLinger(0) })
	if _, st := do(t, Options{URL: reset, Timeout: 2 * time.Second}); st != "reset" && st != "eof" {
		t.Errorf("reset connection: status %q; want reset or eof", st)
	}
	silent := badServer(t, func(c net.Conn) { time.Sleep(2 * time.Second) })
	if _, st := do(t, Options{URL: silent, Timeout: 200 * time.Millisecond}); st != "timeout" {
		t.Errorf("silent server: status %q; want timeout", st)
	}
	if _, st := do(t, Options{URL: "http://127.0.0.1:1/", Timeout: time.Second}); st != "refused" {
		t.Errorf("closed port: status %q; want refused", st)
	}
	for _, bad := range []string{"ftp://x/", "http://", "::"} {
		if _, err := New(Options{URL: bad}); err == nil {
			t.Errorf("New(%q) = nil error", bad)
		}
	}
}

// BenchmarkDo is one request through the hot path the load loops call,
// against a loopback server. Its allocations per request are gated by the
// test command (bench/allocs-baseline.json): they may not rise.
func BenchmarkDo(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go pong.Serve(ln) // allocates nothing per request: what is counted is the client's
	c, err := New(Options{URL: "http://" + ln.Addr().String() + "/ping"})
	if err != nil {
		b.Fatal(err)
	}
	cn, err := c.DialConn(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer cn.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := cn.Do(ctx, 0, time.Now().Add(10*time.Second)); res.Status != "" {
			b.Fatal(res.Status)
		}
	}
}

// ipv6Server serves h on [::1] until the test ends; it skips the test on a
// machine without an IPv6 loopback.
func ipv6Server(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	return h2cServer(t, h, ln)
}

// An IPv6 literal ([::1]) is dialed, and named in the Host header, as curl
// does: every request over HTTP/1.1 used to fail as "protocol" (fasthttp
// kept only IPv4 addresses), whatever the server said.
func TestIPv6(t *testing.T) {
	hosts := make(chan string, 16)
	srv := ipv6Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hosts <- r.Host:
		default: // the run's requests: not checked
		}
		io.WriteString(w, "six")
	}))
	if !strings.HasPrefix(srv.URL, "http://[::1]:") {
		t.Fatalf("server URL %s; want http://[::1]:PORT", srv.URL)
	}
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"http/1.1", Options{URL: srv.URL + "/x", Timeout: 2 * time.Second}},
		{"h2c", Options{URL: srv.URL + "/x", HTTP2: true, Timeout: 2 * time.Second}},
	} {
		ans, st := do(t, c.o)
		if st != "" || len(ans) != 1 || string(ans[0]) != "six" {
			t.Errorf("%s to %s: answer %q, status %q; want \"six\"", c.name, srv.URL, ans, st)
			continue
		}
		if host := <-hosts; host != strings.TrimPrefix(srv.URL, "http://") {
			t.Errorf("%s: server saw Host %q; want %q", c.name, host, strings.TrimPrefix(srv.URL, "http://"))
		}
	}
	c, err := New(Options{URL: srv.URL + "/x", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, err := load.Closed{Concurrency: 2, Requests: 20, Duration: 10 * time.Second}.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if s.OK != 20 || len(s.Errors) != 0 {
		t.Errorf("closed loop over [::1]: %d ok, errors %v; want 20 ok", s.OK, s.Errors)
	}
}
