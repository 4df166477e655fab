package driver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/driver/grpcdrv"
	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/driver/jsonrpc"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/record"
	"github.com/tandem-bench/tandem/study"
	"google.golang.org/grpc/metadata"
)

// Replay sends a recorded exchange's request to endpoint once and keeps
// the whole answer, as Query does for a call: HTTP and JSON-RPC requests
// as they were recorded (method, path and query, headers, body), gRPC
// requests as their recorded messages. Headers the recording redacted,
// hop-by-hop headers and Accept-Encoding (so that answers are compared
// uncompressed) are not sent. A request that cannot be sent as it was (a
// body the recording cut, a compressed gRPC message) is an error wrapping
// ErrRequest; a target's failure is a Reply status.
func (q *Querier) Replay(ctx context.Context, ex *record.Exchange, endpoint string) (Reply, error) {
	if err := replayable(ex); err != nil {
		return Reply{}, err
	}
	if q.o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.o.Timeout)
		defer cancel()
	}
	if ex.Protocol == record.GRPC {
		return q.replayGRPC(ctx, ex, endpoint)
	}
	return q.replayHTTP(ctx, ex, endpoint)
}

// replayable says why an exchange's request cannot be sent as it was
// recorded (an error wrapping ErrRequest), or nil.
func replayable(ex *record.Exchange) error {
	if ex.Truncated() {
		return fmt.Errorf("%w: the recording kept %d of the body's %d bytes", ErrRequest, len(ex.Body), ex.BodySize)
	}
	return nil
}

// redacted reports whether the recording redacted a header's value.
func redacted(ex *record.Exchange, name string) bool {
	return slices.ContainsFunc(ex.Redacted, func(r string) bool { return strings.EqualFold(r, "header "+name) })
}

// webClient is the client of HTTP/1.1 (h2 false) or HTTP/2 requests
// (h2c for http:// endpoints): no compression of its own, no redirects
// followed, no proxy from the environment.
func (q *Querier) webClient(h2 bool) *http.Client {
	q.mu.Lock()
	defer q.mu.Unlock()
	if c := q.web[h2]; c != nil {
		return c
	}
	tr := replayTransport(h2)
	tr.MaxIdleConnsPerHost = replayIdle
	c := replayClient(tr)
	q.web[h2] = c
	return c
}

// replayTransport speaks HTTP/1.1 (h2 false) or HTTP/2 (h2c for http://
// endpoints), with no compression of its own and no proxy from the
// environment.
func replayTransport(h2 bool) *http.Transport {
	tr := &http.Transport{DisableCompression: true, Protocols: new(http.Protocols)}
	if h2 {
		tr.Protocols.SetUnencryptedHTTP2(true)
		tr.Protocols.SetHTTP2(true)
	} else {
		tr.Protocols.SetHTTP1(true)
	}
	return tr
}

// replayClient is a client over tr that follows no redirects.
func replayClient(tr *http.Transport) *http.Client {
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// replayIdle bounds the idle connections replay keeps per host.
const replayIdle = 8

// replayRequest is the HTTP request that replays ex at endpoint: its
// method, path and query, headers and body as recorded, less the headers
// the recording redacted and Accept-Encoding. An error wraps ErrRequest.
func replayRequest(ctx context.Context, ex *record.Exchange, endpoint string) (*http.Request, error) {
	base := endpoint
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	req, err := http.NewRequestWithContext(ctx, ex.Method, strings.TrimSuffix(base, "/")+ex.Path, bytes.NewReader(ex.Body))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRequest, err)
	}
	req.ContentLength = int64(len(ex.Body))
	if len(ex.Body) == 0 {
		req.Body = http.NoBody
	}
	for k, vs := range ex.Headers {
		if !redacted(ex, k) && !strings.EqualFold(k, "Accept-Encoding") {
			req.Header[k] = slices.Clone(vs)
		}
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "") // none, as recorded: not Go's
	}
	return req, nil
}

func (q *Querier) replayHTTP(ctx context.Context, ex *record.Exchange, endpoint string) (Reply, error) {
	req, err := replayRequest(ctx, ex, endpoint)
	if err != nil {
		return Reply{}, err
	}
	resp, err := q.webClient(ex.Protocol == record.H2).Do(req)
	if err != nil {
		return Reply{Status: load.TransportStatus(err), Detail: err.Error()}, nil
	}
	defer resp.Body.Close()
	var body io.Reader = resp.Body
	if q.o.MaxAnswer > 0 {
		body = io.LimitReader(resp.Body, int64(q.o.MaxAnswer)+1)
	}
	payload, err := io.ReadAll(body)
	switch {
	case err != nil:
		return Reply{Status: load.TransportStatus(err), Detail: err.Error()}, nil
	case q.o.MaxAnswer > 0 && len(payload) > q.o.MaxAnswer:
		return Reply{Status: "too-large"}, nil
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return Reply{Status: fmt.Sprintf("http:%d", resp.StatusCode),
			Error: failure(httpdrv.ErrorBody(payload), endpoint, nil)}, nil
	case ex.Protocol != record.JSONRPC || len(bytes.TrimSpace(payload)) == 0: // a notification's empty answer too
		return Reply{Status: StatusOK, JSON: [][]byte{payload}}, nil
	}
	result, res := jsonrpc.CheckReplyTo(payload, ex.Body)
	if res.Status != "" {
		return Reply{Status: res.Status, Error: failure(jsonrpc.ErrorObject(payload), endpoint, nil)}, nil
	}
	return Reply{Status: StatusOK, JSON: [][]byte{bytes.Clone(result)}}, nil
}

// notMetadata are request headers the gRPC client sets itself.
var notMetadata = []string{"Content-Type", "Te", "User-Agent", "Grpc-Timeout", "Grpc-Encoding", "Grpc-Accept-Encoding", "Accept-Encoding"}

// grpcReplay is a recorded gRPC request: its method
// (package.Service/Method), its messages as recorded, and its metadata.
type grpcReplay struct {
	method string
	msgs   [][]byte
	md     metadata.MD
}

// replayCall is the gRPC request that replays ex: the recorded messages
// and metadata, less what was redacted and what the client sets itself.
// An error wraps ErrRequest.
func replayCall(ex *record.Exchange) (grpcReplay, error) {
	msgs, err := record.GRPCMessages(ex.Body)
	if err != nil {
		return grpcReplay{}, fmt.Errorf("%w: %v", ErrRequest, err)
	}
	method := strings.TrimPrefix(ex.Path, "/")
	if svc, m, ok := strings.Cut(method, "/"); !ok || svc == "" || m == "" || strings.ContainsAny(m, "/?") {
		return grpcReplay{}, fmt.Errorf("%w: path %q is not a gRPC method (/package.Service/Method)", ErrRequest, ex.Path)
	}
	md := metadata.MD{}
	for k, vs := range ex.Headers {
		if !redacted(ex, k) && !slices.ContainsFunc(notMetadata, func(n string) bool { return strings.EqualFold(n, k) }) {
			md[strings.ToLower(k)] = slices.Clone(vs)
		}
	}
	return grpcReplay{method: method, msgs: msgs, md: md}, nil
}

// grpcAddr is a gRPC endpoint's host:port.
func grpcAddr(endpoint string) string {
	addr := endpoint
	for _, p := range []string{"grpc://", "http://", "dns:///"} {
		addr = strings.TrimPrefix(addr, p)
	}
	return strings.TrimSuffix(addr, "/")
}

func (q *Querier) replayGRPC(ctx context.Context, ex *record.Exchange, endpoint string) (Reply, error) {
	call, err := replayCall(ex)
	if err != nil {
		return Reply{}, err
	}
	method, msgs := call.method, call.msgs
	ctx = metadata.NewOutgoingContext(ctx, call.md)
	addr := grpcAddr(endpoint)
	if len(msgs) == 1 {
		// The method's types, by reflection: answers decoded, compared by
		// field name like a listed case's. Kept apart from the listed
		// calls' connections, whose metadata would replace the recorded.
		if e, cn, err := q.grpcConn(ctx, "replay\x00"+addr+"\x00"+method, addr, &study.GRPCCall{Method: method}); err == nil {
			defer q.release(e, cn)
			ms, res, failed := cn.Messages(ctx, msgs[0], MaxMessages)
			r := Reply{Status: StatusOK, Stream: e.caller.Streaming()}
			if res.Status != "" {
				r.Status, r.Error = res.Status, failure(failed, endpoint, nil)
				return r, nil
			}
			for _, m := range ms {
				r.Messages = append(r.Messages, m)
			}
			return r, nil
		}
	}
	rc, err := q.rawConn(ctx, addr)
	if err != nil {
		return Reply{Status: "unreachable", Detail: err.Error()}, nil
	}
	raw, res := rc.Call(ctx, method, msgs, MaxMessages)
	if res.Status != "" {
		return Reply{Status: res.Status}, nil
	}
	if raw == nil {
		raw = [][]byte{} // an empty answer, still not decoded
	}
	return Reply{Status: StatusOK, Raw: raw, Stream: ex.Messages != 1}, nil
}

// rawConn is the connection to addr for methods whose types are unknown.
func (q *Querier) rawConn(ctx context.Context, addr string) (*grpcdrv.RawConn, error) {
	q.mu.Lock()
	rc := q.raw[addr]
	q.mu.Unlock()
	if rc != nil {
		return rc, nil
	}
	rc, err := grpcdrv.DialRaw(ctx, addr)
	if err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if prev := q.raw[addr]; prev != nil { // dialled meanwhile
		rc.Close()
		return prev, nil
	}
	q.raw[addr] = rc
	return rc, nil
}
