package httpdrv

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/pong"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Handler answers by path: /ok 200 "ok"; /missing 404; /big 200 with
// 200 kB (many DATA frames, past the default windows); /echo the request
// body back with its length in a header; /rpc a JSON-RPC reply to the
// call's id; /slow after 2 s (past a short timeout); /status/N status N.
// It counts the requests it served by path.
type h2Handler struct {
	mu   sync.Mutex
	seen map[string]int
}

func (h *h2Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen[r.URL.Path]++
	h.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.ProtoMajor != 2:
		w.WriteHeader(http.StatusHTTPVersionNotSupported)
	case r.URL.Path == "/ok":
		io.WriteString(w, "ok")
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
	if _, ok := caller.Wire(); !ok {
		t.Fatalf("%+v: no wire for the event loop", o)
	}
	for _, e := range []string{load.EngineLoop, load.EngineWorkers} {
		c.Engine = e
		s, err := c.Run(context.Background(), caller)
		if err != nil {
			t.Fatalf("engine %s: %v", e, err)
		}
		if s.Engine != e {
			t.Fatalf("engine %s ran on %q", e, s.Engine)
		}
		if e == load.EngineLoop {
			loop = s
		} else {
			workers = s
		}
	}
	return loop, workers
}

// The event loop's HTTP/2 counts what the worker engine (Go's HTTP/2
// client) counts, request for request, on Go's h2c server: answers of
// every size and status, request bodies past the server's windows,
// JSON-RPC calls matched by id, timeouts, clients on
// a connection each or sharing two.
func TestH2LoopAgreesWithWorkers(t *testing.T) {
	h := &h2Handler{seen: map[string]int{}}
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
				loop, workers := runBoth(t, o, cl)
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

// h2Answer is a server's frames answering stream id: its headers (status)
// and a body in one DATA frame, ending the stream.
func h2Answer(id uint32, status string, body string) []byte {
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: status})
	enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "text/plain"})
	var a appender
	fr := http2.NewFramer(&a, nil)
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true, EndStream: body == ""})
	if body != "" {
		fr.WriteData(id, true, []byte(body))
	}
	return a.b
}

// FuzzH2Next frames what a server might send with the event loop's HTTP/2
// and with x/net/http2's Framer, frame by frame: the loop takes exactly
// the frames the library reads (same lengths), fails where the library
// fails, asks for more where a frame is incomplete, and frames each
// request's answer at most once, in its own slot.
func FuzzH2Next(f *testing.F) {
	var settings appender
	sf := http2.NewFramer(&settings, nil)
	sf.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100}, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
	sf.WriteWindowUpdate(0, 1<<20)
	sf.WritePing(false, [8]byte{1, 2, 3})
	f.Add(append(append(settings.b, h2Answer(1, "200", "ok")...), h2Answer(3, "404", "")...))
	f.Add(h2Answer(3, "200", ""))
	f.Add(append(h2Answer(1, "100", ""), h2Answer(1, "200", "x")...))
	f.Add([]byte{0, 0, 4, 3, 0, 0, 0, 0, 1, 0, 0, 0, 8}) // RST_STREAM 1 CANCEL
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := New(Options{URL: "http://127.0.0.1:1/x", HTTP2: true})
		if err != nil {
			t.Fatal(err)
		}
		w, ok := newH2Wire(c, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1})
		if !ok {
			t.Fatal("no wire")
		}
		wc := w.NewConn().(*h2Conn)
		wc.Greeting(nil)
		inFlight := map[int]bool{}
		for s := range 3 { // streams 1, 3, 5 in slots 0, 1, 2
			if _, err := wc.AppendRequest(nil, uint64(s), s); err != nil {
				t.Fatal(err)
			}
			inFlight[s] = true
		}
		lib := http2.NewFramer(io.Discard, bytes.NewReader(b))
		lib.SetMaxReadFrameSize(h2MaxFrame)
		for len(b) > 0 {
			fr, _, err := wc.Next(b, nil)
			lf, lerr := lib.ReadFrame()
			switch {
			case fr.N > len(b):
				t.Fatalf("framed %d bytes of %d", fr.N, len(b))
			case err == nil && fr.N == 0:
				if lerr == nil {
					t.Fatalf("asked for more where the library read a frame: %v", lf)
				}
				return
			case err != nil:
				return // stricter than the library (hpack, a push) is fine
			case lerr != nil:
				t.Fatalf("took %d bytes where the library failed: %v", fr.N, lerr)
			case fr.N != 9+int(lf.Header().Length):
				t.Fatalf("took %d bytes of a %d-byte frame", fr.N, 9+lf.Header().Length)
			}
			if fr.Slot >= 0 {
				if !inFlight[fr.Slot] {
					t.Fatalf("an answer in slot %d, not in flight", fr.Slot)
				}
				delete(inFlight, fr.Slot)
			}
			b = b[fr.N:]
		}
	})
}
