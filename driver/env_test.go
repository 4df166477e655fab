package driver

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"github.com/tandem-bench/tandem/study"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
)

// seen is what a server received, by what it names.
type seen struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *seen) set(k, v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
}

func (s *seen) get(k string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[k]
}

// recordingHTTP is an HTTP server on 127.0.0.1 that notes each request's
// path, Authorization header and body.
func recordingHTTP(t *testing.T, s *seen) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.set("path", r.URL.Path)
		s.set("auth", r.Header.Get("Authorization"))
		s.set("body", string(b))
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":1}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// ledger answers GetBalance, noting the request's metadata and address.
type ledger struct {
	ledgerpb.UnimplementedLedgerServer
	s *seen
}

func (l *ledger) GetBalance(ctx context.Context, in *ledgerpb.BalanceRequest) (*ledgerpb.Balance, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	l.s.set("metadata", strings.Join(md.Get("authorization"), ","))
	l.s.set("address", in.Address)
	return &ledgerpb.Balance{Address: in.Address}, nil
}

// recordingGRPC is a gRPC server on 127.0.0.1, with reflection.
func recordingGRPC(t *testing.T, s *seen) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	ledgerpb.RegisterLedgerServer(g, &ledger{s: s})
	reflection.Register(g)
	go g.Serve(ln)
	t.Cleanup(g.Stop)
	return ln.Addr().String()
}

// A study's ${env.NAME} reaches the server resolved, in every place of a
// call where the study format documents it: an HTTP path, header and
// body, a JSON-RPC method, params, path and header, gRPC metadata and
// request. ("Bearer ${env.REL_UNSET_TOKEN}" used to reach the server as
// written.) A variable that is not set fails the call's driver, naming it.
func TestCallEnvReachesServer(t *testing.T) {
	const secret = "s3cret-token"
	t.Setenv("TANDEM_TEST_CALL_SECRET", secret)
	s := &seen{m: map[string]string{}}
	httpURL, grpcAddr := recordingHTTP(t, s), recordingGRPC(t, s)
	parsed, err := study.Parse("env.yaml", []byte(`
version: 1
name: env
targets: [{name: a, endpoints: {http: "http://127.0.0.1:1/", grpc: "127.0.0.1:1"}}]
calls:
  h: {http: {method: POST, path: "/p/${env.TANDEM_TEST_CALL_SECRET}", headers: {Authorization: "Bearer ${env.TANDEM_TEST_CALL_SECRET}"},
      body: "b=${env.TANDEM_TEST_CALL_SECRET} $${env.X}"}}
  j: {jsonrpc: {method: "m_${env.TANDEM_TEST_CALL_SECRET}", params: ["${env.TANDEM_TEST_CALL_SECRET}"], path: "/r/${env.TANDEM_TEST_CALL_SECRET}",
      headers: {Authorization: "${env.TANDEM_TEST_CALL_SECRET}"}}}
  g: {grpc: {method: tandem.sample.v1.Ledger/GetBalance, metadata: {authorization: "Bearer ${env.TANDEM_TEST_CALL_SECRET}"},
      request: {address: "${env.TANDEM_TEST_CALL_SECRET}"}}}
  unset: {http: {headers: {Authorization: "Bearer ${env.REL_UNSET_TOKEN}"}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	ask := func(name, endpoint string) {
		t.Helper()
		c, err := New(context.Background(), parsed.Calls[name], endpoint, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, res, err := c.Ask(context.Background()); err != nil || res.Status != "" {
			t.Fatalf("%s: %v, status %q", name, err, res.Status)
		}
	}
	ask("h", httpURL)
	if s.get("path") != "/p/"+secret || s.get("auth") != "Bearer "+secret || s.get("body") != "b="+secret+" ${env.X}" {
		t.Errorf("http: the server saw path %q, Authorization %q, body %q", s.get("path"), s.get("auth"), s.get("body"))
	}
	ask("j", httpURL)
	var rpc struct {
		Method string   `json:"method"`
		Params []string `json:"params"`
	}
	json.Unmarshal([]byte(s.get("body")), &rpc)
	if s.get("path") != "/r/"+secret || s.get("auth") != secret || rpc.Method != "m_"+secret || len(rpc.Params) != 1 || rpc.Params[0] != secret {
		t.Errorf("jsonrpc: the server saw path %q, Authorization %q, body %s", s.get("path"), s.get("auth"), s.get("body"))
	}
	ask("g", grpcAddr)
	if s.get("metadata") != "Bearer "+secret || s.get("address") != secret {
		t.Errorf("grpc: the server saw metadata %q, address %q", s.get("metadata"), s.get("address"))
	}
	before := s.get("auth")
	if _, err := New(context.Background(), parsed.Calls["unset"], httpURL, Options{}); err == nil ||
		!strings.Contains(err.Error(), "http.headers.Authorization: environment variable REL_UNSET_TOKEN is not set") {
		t.Errorf("an unset variable: %v", err)
	}
	if s.get("auth") != before {
		t.Error("a call with an unset variable reached the server")
	}
}

// A driver that cannot be built from a call says why without the values
// it resolved from the environment.
func TestCallEnvKeptOutOfErrors(t *testing.T) {
	t.Setenv("TANDEM_TEST_CALL_SECRET", "s3cret-token")
	call := &study.Call{HTTP: &study.HTTPCall{Path: "/${env.TANDEM_TEST_CALL_SECRET}"}}
	_, err := New(context.Background(), call, "ftp://127.0.0.1:1", Options{})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "xxx") {
		t.Errorf("error %v; want one that hides the resolved value", err)
	}
}
