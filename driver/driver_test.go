package driver

import (
	"testing"
)

// tandem load's URLs become calls; header values stay literal.
func TestCallFromURL(t *testing.T) {
	cases := []struct {
		target   string
		o        URLOptions
		protocol string
		endpoint string
		err      bool
	}{
		{"http://127.0.0.1:8080/ping", URLOptions{Headers: map[string]string{"X": "a ${b} $${c} $d"}}, "http", "http://127.0.0.1:8080/ping", false},
		{"https://127.0.0.1:8443/", URLOptions{RPCMethod: "status", Params: "[1]"}, "jsonrpc", "https://127.0.0.1:8443/", false},
		{"http://127.0.0.1:8080/", URLOptions{RPCMethod: "status", Params: "[1"}, "", "", true},
		{"grpc://127.0.0.1:9090/pkg.Svc/Get", URLOptions{Body: []byte(`{"height": 12345678901234567890}`)}, "grpc", "127.0.0.1:9090", false},
		{"grpc://127.0.0.1:9090/pkg.Svc/Get", URLOptions{Body: []byte(`{`)}, "", "", true},
		{"ws://127.0.0.1:26657/websocket", URLOptions{RPCMethod: "status"}, "ws", "ws://127.0.0.1:26657/websocket", false},
		{"ws://127.0.0.1:26657/websocket", URLOptions{}, "", "", true},
		{"tcp://127.0.0.1:6379", URLOptions{Body: []byte("PING\r\n")}, "tcp", "127.0.0.1:6379", false},
		{"tcp://127.0.0.1:6379", URLOptions{}, "", "", true},
		{"ftp://127.0.0.1/", URLOptions{}, "", "", true},
	}
	for _, c := range cases {
		call, ep, err := CallFromURL(c.target, c.o)
		if (err != nil) != c.err {
			t.Errorf("%s: error %v, want error %v", c.target, err, c.err)
			continue
		}
		if err != nil {
			continue
		}
		if call.Protocol() != c.protocol || ep != c.endpoint {
			t.Errorf("%s: %s call to %q, want %s to %q", c.target, call.Protocol(), ep, c.protocol, c.endpoint)
		}
		if h := call.HTTP; h != nil && h.Headers["X"] != "a $${b} $$${c} $d" {
			t.Errorf("header kept as %q", h.Headers["X"])
		}
		if g := call.GRPC; g != nil {
			b, err := toJSON(g.Request)
			if err != nil || string(b) != `{"height":12345678901234567890}` {
				t.Errorf("gRPC request %s, %v: the number must stay exact", b, err)
			}
		}
	}
	// a header is sent as written: ${b} is not a placeholder here
	call, _, err := CallFromURL("http://127.0.0.1:1/", URLOptions{Headers: map[string]string{"X": "a ${b} $${c}"}})
	if err != nil {
		t.Fatal(err)
	}
	sent, _, err := call.ResolveEnv(func(string) (string, bool) { return "", false })
	if err != nil || sent.HTTP.Headers["X"] != "a ${b} $${c}" {
		t.Errorf("header sent as %q (%v), want it as written", sent.HTTP.Headers["X"], err)
	}
}
