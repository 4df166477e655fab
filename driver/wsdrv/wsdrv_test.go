package wsdrv

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/buger/jsonparser"
	"github.com/coder/websocket"
	"github.com/tandem-bench/tandem/load"
)

// server is a real WebSocket JSON-RPC server: before each answer it sends an
// event and a stale answer, which the driver must skip. Method "fail" gets an
// error object, "hang" never answers, "close" closes the socket.
func server(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serverOn(t, ln)
}

// serverOn is server on the listener ln.
func serverOn(t *testing.T, ln net.Listener) string {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		for {
			_, msg, err := c.Read(ctx)
			if err != nil {
				return
			}
			id, _ := jsonparser.GetInt(msg, "id")
			method, _ := jsonparser.GetString(msg, "method")
			ids := strconv.FormatInt(id, 10)
			c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"event","params":{"height":1}}`))
			c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+strconv.FormatInt(id-1, 10)+`,"result":"stale"}`))
			switch method {
			case "fail":
				c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+ids+`,"error":{"code":-32000,"message":"tx already exists"}}`))
			case "hang":
			case "close":
				c.Close(websocket.StatusPolicyViolation, "bye")
				return
			default:
				c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+ids+`,"result":{"hash":"AB"}}`))
			}
		}
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/websocket"
}

// An IPv6 literal URL (ws://[::1]:PORT/…) is dialed as it is.
func TestIPv6(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	url := serverOn(t, ln)
	if !strings.HasPrefix(url, "ws://[::1]:") {
		t.Fatalf("server URL %s; want ws://[::1]:PORT/…", url)
	}
	caller, err := New(Options{URL: url, Method: "broadcast_tx_sync", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cn, err := caller.DialConn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	if ans, res := cn.Ask(context.Background()); res.Status != "" || len(ans) != 1 || string(ans[0]) != `{"hash":"AB"}` {
		t.Errorf("Ask over [::1] = %q, %q", ans, res.Status)
	}
}

func TestCalls(t *testing.T) {
	url := server(t)
	cases := []struct {
		method, status string
	}{
		{"broadcast_tx_async", ""},
		{"fail", "jsonrpc:-32000"},
		{"hang", "timeout"},
		{"close", "ws:1008"},
	}
	for _, c := range cases {
		// only the call that never gets its answer waits out its timeout;
		// the others have seconds for a busy machine
		timeout := 10 * time.Second
		if c.status == "timeout" {
			timeout = 300 * time.Millisecond
		}
		caller, err := New(Options{URL: url, Method: c.method, Params: []byte(`{"tx":"AQID"}`), Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		cn, err := caller.DialConn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ { // after a failure the next call dials again
			res := cn.Do(context.Background(), 0, time.Now().Add(timeout))
			if res.Status != c.status {
				t.Errorf("%s call %d: status %q; want %q", c.method, i+1, res.Status, c.status)
			}
		}
		cn.Close()
	}
	caller, _ := New(Options{URL: url, Method: "broadcast_tx_sync"})
	cn, _ := caller.DialConn(context.Background())
	defer cn.Close()
	ans, res := cn.Ask(context.Background())
	if res.Status != "" || len(ans) != 1 || string(ans[0]) != `{"hash":"AB"}` {
		t.Errorf("Ask = %q, %q", ans, res.Status)
	}
}

func TestUnderLoad(t *testing.T) {
	caller, err := New(Options{URL: server(t), Method: "broadcast_tx_async", Params: []byte(`{"tx":"AQID"}`)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := load.Open{Schedule: load.Constant{Rate: 500}, Connections: 4, Duration: time.Second}.Run(context.Background(), caller)
	if err != nil {
		t.Fatal(err)
	}
	// every arrival answered ok, cut off by the run's end or dropped (a
	// busy machine may not answer them all by the end of the drain)
	if s.Requests+s.Unfinished+s.Dropped != 500 || s.Requests == 0 || s.OK != s.Requests || len(s.Errors) != 0 {
		t.Errorf("500/s for 1 s over 4 WebSockets: %d requests, %d ok, %d cut off, %d dropped, errors %v", s.Requests, s.OK, s.Unfinished, s.Dropped, s.Errors)
	}
}

func TestBadInput(t *testing.T) {
	for _, o := range []Options{{URL: "http://x/", Method: "m"}, {URL: "ws://x/"}, {URL: "ws://x/", Method: "m", Params: []byte("[")}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) = nil error", o)
		}
	}
	c, _ := New(Options{URL: "ws://127.0.0.1:1/", Method: "m", Timeout: time.Second})
	if _, err := c.Dial(context.Background()); err == nil {
		t.Error("Dial of a closed port = nil error")
	}
}
