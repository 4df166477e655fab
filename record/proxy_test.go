package record

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/tandem-bench/tandem/internal/digest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// recorder is a Proxy serving on loopback in front of an upstream.
type recorder struct {
	t     *testing.T
	addr  string
	path  string
	srv   *http.Server
	p     *Proxy
	w     *Writer
	start time.Time
}

func startRecorder(t *testing.T, upstream string, rules Rules, maxBody int) *recorder {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	now := time.Now()
	w, err := Create(path, Header{Upstream: upstream, Start: now, MaxBody: maxBody, Source: "proxy"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProxy(ProxyOptions{Upstream: u, Writer: w, Start: now, Rules: rules, Fail: func(err error) { t.Errorf("recording: %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{t: t, addr: ln.Addr().String(), path: path, srv: p.Server(), p: p, w: w, start: now}
	go r.srv.Serve(ln)
	t.Cleanup(func() { r.srv.Close(); p.Wait(); w.Close() })
	return r
}

// stop stops the proxy once its requests are answered and returns what
// it recorded.
func (r *recorder) stop() []Exchange {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil {
		r.t.Fatal(err)
	}
	r.p.Wait()
	if err := r.w.Close(); err != nil {
		r.t.Fatal(err)
	}
	rd, err := Open(r.path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rd.Close()
	var exs []Exchange
	for rd.Scan() {
		exs = append(exs, rd.Exchange())
	}
	if rd.Err() != nil {
		r.t.Fatal(rd.Err())
	}
	return exs
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestProxyHTTP(t *testing.T) {
	type seen struct {
		proto int
		auth  string
		body  []byte
	}
	seenc := make(chan seen, 10)
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":42}`)
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seenc <- seen{r.ProtoMajor, r.Header.Get("Authorization"), b}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "sid=2")
		w.Write(answer)
	}))
	up.Config.Protocols = new(http.Protocols)
	up.Config.Protocols.SetHTTP1(true)
	up.Config.Protocols.SetUnencryptedHTTP2(true)
	up.Start()
	defer up.Close()
	rec := startRecorder(t, up.URL, Rules{}, 16)

	h2 := &http.Transport{Protocols: new(http.Protocols)}
	h2.Protocols.SetUnencryptedHTTP2(true)
	clients := []struct {
		name  string
		c     *http.Client
		proto int
	}{{"http1", &http.Client{}, 1}, {"h2c", &http.Client{Transport: h2}, 2}}
	rpc := `{"jsonrpc":"2.0","id":1,"method":"getbalance","params":["tz1000042"]}`
	for _, c := range clients {
		req, _ := http.NewRequest("POST", "http://"+rec.addr+"/rpc?v=1", strings.NewReader(rpc))
		req.Header.Set("Authorization", "Bearer s3cret")
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Equal(got, answer) || resp.ProtoMajor != c.proto {
			t.Errorf("%s: answer %d %q over HTTP/%d", c.name, resp.StatusCode, got, resp.ProtoMajor)
		}
		s := <-seenc
		// the upstream gets the request whole, secrets included, in the client's protocol
		if s.proto != c.proto || s.auth != "Bearer s3cret" || string(s.body) != rpc {
			t.Errorf("%s: the upstream saw HTTP/%d, Authorization %q, body %q", c.name, s.proto, s.auth, s.body)
		}
	}
	exs := rec.stop()
	if len(exs) != 2 {
		t.Fatalf("%d exchanges recorded; want 2", len(exs))
	}
	for i, ex := range exs {
		if ex.Protocol != JSONRPC || ex.Method != "POST" || ex.Path != "/rpc?v=1" || ex.Status != 200 ||
			ex.Digest != sum(answer) || ex.AnswerSize != int64(len(answer)) || ex.Error != "" {
			t.Errorf("exchange %d: %+v", i, ex)
		}
		// the body is cut at max_body 16, its size kept
		if string(ex.Body) != rpc[:16] || ex.BodySize != int64(len(rpc)) || !ex.Truncated() {
			t.Errorf("exchange %d: body %q of %d; want the first 16 bytes of %d", i, ex.Body, ex.BodySize, len(rpc))
		}
		if ex.Headers.Get("Authorization") != Marker || ex.AnswerHeaders.Get("Content-Type") != "application/json" || ex.AnswerHeaders.Get("Set-Cookie") != "" {
			t.Errorf("exchange %d: headers %v, answer headers %v", i, ex.Headers, ex.AnswerHeaders)
		}
		if ex.Duration <= 0 || ex.Offset < 0 {
			t.Errorf("exchange %d: offset %v, duration %v", i, ex.Offset, ex.Duration)
		}
	}
	// lines come in the order the answers ended (a handler may finish its
	// line after its client has the answer and sent the next request):
	// the offsets say when each request came, and they are two
	if exs[0].Offset == exs[1].Offset || max(exs[0].Offset, exs[1].Offset) > time.Since(rec.start) {
		t.Errorf("offsets %v and %v; want two, after the recorder's start and before now", exs[0].Offset, exs[1].Offset)
	}
	data, _ := readAll(rec.path)
	if strings.Contains(data, "s3cret") {
		t.Errorf("the secret is in the recording:\n%s", data)
	}
}

func readAll(path string) (string, error) {
	b, err := io.ReadAll(must(openFile(path)))
	return string(b), err
}

func TestProxyUpstreamFailures(t *testing.T) {
	// an upstream that is not there: 502 to the client, the failure recorded
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	gone := "http://" + ln.Addr().String()
	ln.Close()
	rec := startRecorder(t, gone, Rules{}, 0)
	resp, err := http.Get("http://" + rec.addr + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d; want 502", resp.StatusCode)
	}
	// an upstream that stops mid-answer: the exchange says so, with no digest
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.Write([]byte("only part"))
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer cut.Close()
	rec2 := startRecorder(t, cut.URL, Rules{}, 0)
	if resp, err := http.Get("http://" + rec2.addr + "/y"); err == nil {
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	for _, c := range []struct {
		rec  *recorder
		path string
		want string
	}{{rec, "/x", "no answer from the upstream"}, {rec2, "/y", "the answer was cut short"}} {
		exs := c.rec.stop()
		if len(exs) != 1 || exs[0].Path != c.path || !strings.HasPrefix(exs[0].Error, c.want) || exs[0].Digest != "" {
			t.Errorf("%s: recorded %+v; want one exchange with error %q and no digest", c.path, exs, c.want)
		}
	}
}

// trailing sets a trailer on every unary answer, so the test sees
// trailers other than the status pass through.
func trailing(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	grpc.SetTrailer(ctx, metadata.Pairs("x-trail", "t1"))
	return h(ctx, req)
}

func TestProxyGRPC(t *testing.T) {
	srv := grpc.NewServer(grpc.UnaryInterceptor(trailing))
	hs := health.NewServer()
	hs.SetServingStatus("ledger", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Stop()
	rec := startRecorder(t, "http://"+ln.Addr().String(), Rules{}, 0)

	cc, err := grpc.NewClient("passthrough:///"+rec.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := healthpb.NewHealthClient(cc)
	// unary, its trailers through the proxy
	var trailer metadata.MD
	ok, err := client.Check(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer s3cret", "x-request-id", "r1"),
		&healthpb.HealthCheckRequest{Service: "ledger"}, grpc.Trailer(&trailer))
	if err != nil || ok.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check: %v, %v", ok, err)
	}
	if got := trailer.Get("x-trail"); len(got) != 1 || got[0] != "t1" {
		t.Errorf("trailer x-trail %q; want t1 through the proxy", got)
	}
	// an error status, which grpc-go sends trailers-only (in the
	// answer's headers): asked again and again, since the reverse proxy
	// may flush the headers before the stream ends, whereupon a client
	// would never see them as the status
	const errs = 50
	for range errs {
		_, err = client.Check(ctx, &healthpb.HealthCheckRequest{Service: "nope"})
		if status.Code(err) != codes.NotFound {
			t.Fatalf("Check(nope): %v; want NotFound through the proxy", err)
		}
	}
	// server streaming: the first message, then the client goes
	wctx, wcancel := context.WithCancel(ctx)
	st, err := client.Watch(wctx, &healthpb.HealthCheckRequest{Service: "ledger"})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := st.Recv(); err != nil || m.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("Watch: %v, %v", m, err)
	}
	wcancel()
	exs := rec.stop()
	if len(exs) != 2+errs {
		t.Fatalf("%d exchanges; want %d", len(exs), 2+errs)
	}
	byPath := map[string][]Exchange{}
	for _, ex := range exs {
		byPath[ex.Path] = append(byPath[ex.Path], ex)
		if ex.Protocol != GRPC || ex.Method != "POST" || ex.Status != 200 {
			t.Errorf("exchange %+v: want gRPC, POST, 200", ex)
		}
	}
	checks := byPath["/grpc.health.v1.Health/Check"]
	if len(checks) != 1+errs {
		t.Fatalf("%d Check exchanges; want %d", len(checks), 1+errs)
	}
	answer, _ := proto.MarshalOptions{Deterministic: true}.Marshal(ok)
	first, notFound := checks[0], checks[1] // in the order they ended: the first ended before the others began
	if first.GRPCStatus == nil || *first.GRPCStatus != 0 || first.Messages != 1 || first.Digest != digest.Of([][]byte{answer}) || first.Error != "" {
		t.Errorf("Check: %+v; want status 0, one message, digest.Of its encoding", first)
	}
	if first.Headers.Get("Authorization") != Marker || first.AnswerHeaders.Get("Content-Type") != "application/grpc" {
		t.Errorf("Check: headers %v, answer headers %v", first.Headers, first.AnswerHeaders)
	}
	req, _ := proto.Marshal(&healthpb.HealthCheckRequest{Service: "ledger"})
	if msgs, err := GRPCMessages(first.Body); err != nil || len(msgs) != 1 || !bytes.Equal(msgs[0], req) {
		t.Errorf("Check's body %x: %v; want the request message %x", first.Body, err, req)
	}
	if notFound.GRPCStatus == nil || *notFound.GRPCStatus != int(codes.NotFound) || notFound.Messages != 0 || notFound.GRPCMessage == "" {
		t.Errorf("Check(nope): %+v; want status 5 and its message", notFound)
	}
	watch := byPath["/grpc.health.v1.Health/Watch"]
	if len(watch) != 1 || watch[0].Messages < 1 || watch[0].Error == "" {
		t.Errorf("Watch: %+v; want its messages and the error of a stream the client left", watch)
	}
	data, _ := readAll(rec.path)
	if strings.Contains(data, "s3cret") {
		t.Errorf("the secret is in the recording")
	}
}

func openFile(path string) (io.Reader, error) {
	b, err := os.ReadFile(path)
	return bytes.NewReader(b), err
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A WebSocket upgrade passes through the proxy; the exchange records the
// upgrade, not what the connection carried after it.
func TestProxyUpgrade(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		typ, msg, err := c.Read(r.Context())
		if err == nil {
			c.Write(r.Context(), typ, msg)
		}
		c.Close(websocket.StatusNormalClosure, "")
	}))
	defer up.Close()
	rec := startRecorder(t, up.URL, Rules{}, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+rec.addr+"/ws", nil)
	if err != nil {
		t.Fatalf("dial through the proxy: %v", err)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte("echo")); err != nil {
		t.Fatal(err)
	}
	if _, got, err := c.Read(ctx); err != nil || string(got) != "echo" {
		t.Fatalf("echo through the proxy: %q, %v", got, err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	exs := rec.stop()
	if len(exs) != 1 || exs[0].Status != http.StatusSwitchingProtocols || exs[0].Path != "/ws" || exs[0].Digest != "" || !strings.Contains(exs[0].Error, "switched protocols") {
		t.Errorf("recorded %+v; want the upgrade, status 101, no digest", exs)
	}
}
