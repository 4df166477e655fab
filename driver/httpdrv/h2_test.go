package httpdrv

import (
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/driver/internal/enginetest"
	"github.com/tandem-bench/tandem/internal/pong"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
)

// h2Handler answers by path: /ok 200 "ok"; /missing 404; /big 200 with
// 200 kB (many DATA frames, past the default windows); /echo the request
// body back with its length in a header; /rpc a JSON-RPC reply to the
// call's id; /close "bye" and closes the connection; /slow after 2 s (past a short timeout); /status/N status N.
// It counts the requests it served by HTTP version.
type h2Handler struct {
	mu    sync.Mutex
	major map[int]int
}

// served is how many requests the handler served over HTTP/major.
func (h *h2Handler) served(major int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.major[major]
}

func (h *h2Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.major[r.ProtoMajor]++
	h.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.URL.Path == "/ok":
		io.WriteString(w, "ok")
	case r.URL.Path == "/close":
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	case r.URL.Path == "/big":
		w.Write(make([]byte, 200<<10))
	case r.URL.Path == "/echo":
		w.Header().Set("X-Length", strconv.Itoa(len(body)))
		w.Write(body)
	case r.URL.Path == "/rpc":
		id := strings.TrimSuffix(strings.SplitN(string(body), `"id":`, 2)[1], "}")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, id)
	case r.URL.Path == "/slow":
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	case strings.HasPrefix(r.URL.Path, "/status/"):
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		w.WriteHeader(code)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// runBoth runs the same closed loop on both engines and returns their
// samples, the event loop's first.
func runBoth(t *testing.T, o Options, c load.Closed) (loop, workers results.Sample) {
	t.Helper()
	caller, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return enginetest.RunBoth(t, caller, c)
}

// The event loop's HTTP/2 counts what the worker engine (Go's HTTP/2
// client) counts, request for request, on Go's h2c server: answers of
// every size and status, request bodies past the server's windows,
// JSON-RPC calls matched by id, timeouts, clients on
// a connection each or sharing two.
func TestH2LoopAgreesWithWorkers(t *testing.T) {
	h := &h2Handler{major: map[int]int{}}
	srv := h2cServer(t, h)
	for _, c := range []struct {
		name     string
		o        Options
		timeout  time.Duration
		requests int64
		ok       int64 // per engine
		errors   map[string]int64
	}{
		{name: "ok", o: Options{URL: srv.URL + "/ok"}, requests: 300, ok: 300},
		{name: "missing", o: Options{URL: srv.URL + "/missing"}, requests: 50, errors: map[string]int64{"http:404": 50}},
		{name: "big answers", o: Options{URL: srv.URL + "/big"}, requests: 40, ok: 40},
		{name: "too large", o: Options{URL: srv.URL + "/big", MaxBody: 1000}, requests: 20, errors: map[string]int64{"too-large": 20}},
		{name: "bodies past the windows", o: Options{URL: srv.URL + "/echo", Body: make([]byte, 150<<10)}, requests: 30, ok: 30},
		{name: "json-rpc", o: Options{URL: srv.URL + "/rpc", RPCMethod: "eth_blockNumber", RPCParams: []byte("[]")}, requests: 200, ok: 200},
		{name: "timeouts", o: Options{URL: srv.URL + "/slow"}, timeout: 200 * time.Millisecond, requests: 8, errors: map[string]int64{"timeout": 8}},
	} {
		for _, conns := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/%d connections", c.name, conns), func(t *testing.T) {
				o := c.o
				o.HTTP2, o.Connections = true, conns
				cl := load.Closed{Concurrency: 8, Requests: c.requests, Timeout: c.timeout}
				if cl.Timeout == 0 {
					cl.Timeout = 10 * time.Second
				}
				h1 := h.served(1)
				loop, workers := runBoth(t, o, cl)
				if n := h.served(1) - h1; n > 0 {
					t.Errorf("%d requests over HTTP/1.1", n)
				}
				for _, s := range []results.Sample{loop, workers} {
					if s.Requests != c.requests || s.OK != c.ok || !maps.Equal(s.Errors, c.errors) && len(s.Errors)+len(c.errors) > 0 {
						t.Errorf("%s: %d requests, %d ok, errors %v; want %d, %d, %v", s.Engine, s.Requests, s.OK, s.Errors, c.requests, c.ok, c.errors)
					}
				}
			})
		}
	}
}

// The event loop's HTTP/2 on the minimal server (pong's, fixed frames
// without decoding), plain and gRPC-shaped answers: every request one
// answer, as on the worker engine.
func TestH2LoopPong(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go pong.ServeH2(ln, pong.H2Options{})
	loop, workers := runBoth(t, Options{URL: "http://" + ln.Addr().String() + "/ping", HTTP2: true, Connections: 4},
		load.Closed{Concurrency: 40, Requests: 2000, Timeout: 10 * time.Second})
	for _, s := range []results.Sample{loop, workers} {
		if s.Requests != 2000 || s.OK != 2000 {
			t.Errorf("%s: %d requests, %d ok, errors %v; want 2000 ok", s.Engine, s.Requests, s.OK, s.Errors)
		}
	}
}

// Over TLS the event loop runs crypto/tls on its sockets: HTTP/1.1 and
// HTTP/2 (ALPN h2) count what the workers count on Go's TLS server; a
// certificate not trusted fails every request as tls on both engines.
func TestLoopTLS(t *testing.T) {
	h := &h2Handler{major: map[int]int{}}
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted case's handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		name   string
		o      Options
		ok     int64
		errors map[string]int64
	}{
		{"h2", Options{URL: srv.URL + "/ok", HTTP2: true, Insecure: true, Connections: 2}, 200, nil},
		{"h2, big answers", Options{URL: srv.URL + "/big", HTTP2: true, Insecure: true}, 200, nil},
		{"h2, bodies", Options{URL: srv.URL + "/echo", Body: make([]byte, 100<<10), HTTP2: true, Insecure: true}, 200, nil},
		{"http/1.1", Options{URL: srv.URL + "/ok", Insecure: true}, 200, nil},
		{"http/1.1, missing", Options{URL: srv.URL + "/missing", Insecure: true}, 0, map[string]int64{"http:404": 200}},
		{"http/1.1, big answers", Options{URL: srv.URL + "/big", Insecure: true}, 200, nil},
		// the answer and the server's close_notify come together
		{"http/1.1, connection: close", Options{URL: srv.URL + "/close", Insecure: true}, 200, nil},
		{"untrusted", Options{URL: srv.URL + "/ok", HTTP2: true}, 0, map[string]int64{"tls": 200}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h1, h2 := h.served(1), h.served(2)
			loop, workers := runBoth(t, c.o, load.Closed{Concurrency: 8, Requests: 200, Timeout: 10 * time.Second})
			if want := 2 * c.ok; c.ok > 0 && c.o.HTTP2 && h.served(2)-h2 != int(want) || c.ok > 0 && !c.o.HTTP2 && h.served(1)-h1 != int(want) {
				t.Errorf("the server saw %d requests over HTTP/1.1, %d over HTTP/2", h.served(1)-h1, h.served(2)-h2)
			}
			for _, s := range []results.Sample{loop, workers} {
				if s.Requests != 200 || s.OK != c.ok || !maps.Equal(s.Errors, c.errors) && len(s.Errors)+len(c.errors) > 0 {
					t.Errorf("%s: %d requests, %d ok, errors %v; want 200, %d, %v", s.Engine, s.Requests, s.OK, s.Errors, c.ok, c.errors)
				}
			}
		})
	}
}

// A server that takes fewer streams at once than the clients a connection
// carries (Go's server limited to 2): the event loop holds the rest back,
// and sends again what the server refused before its settings came, as Go's
// client queues them: every request answered.
func TestH2LoopStreamLimit(t *testing.T) {
	h := &h2Handler{major: map[int]int{}}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 2}
	srv.Start()
	t.Cleanup(srv.Close)
	loop, workers := runBoth(t, Options{URL: srv.URL + "/ok", HTTP2: true, Connections: 1},
		load.Closed{Concurrency: 8, Requests: 400, Timeout: 10 * time.Second})
	for _, s := range []results.Sample{loop, workers} {
		if s.Requests != 400 || s.OK != 400 {
			t.Errorf("%s: %d requests, %d ok, errors %v; want 400 ok", s.Engine, s.Requests, s.OK, s.Errors)
		}
	}
}
