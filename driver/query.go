package driver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/tandem-bench/tandem/driver/grpcdrv"
	"github.com/tandem-bench/tandem/study"
	"google.golang.org/protobuf/proto"
)

// StatusOK is a Reply's status when the call succeeded.
const StatusOK = "ok"

// MaxMessages bounds the messages of one streamed Reply.
const MaxMessages = 100_000

// Reply is one complete answer, kept for differential testing.
type Reply struct {
	// Status is StatusOK or tandem's status for the failure
	// (grpc:NOT_FOUND, jsonrpc:-8, http:500, refused, timeout,
	// unreachable, too-large, …).
	Status string
	// Detail says more about a failure that has no protocol status,
	// such as a target that cannot be reached.
	Detail string
	// Messages holds a gRPC call's answer messages; Stream tells a
	// server-streaming method's (possibly empty) answer from a unary one.
	Messages []proto.Message
	Stream   bool
	// JSON holds a JSON-RPC call's result or an HTTP response's body.
	JSON [][]byte
	// Raw holds a replayed gRPC call's answer messages as they came, when
	// the method's types are unknown (no reflection, no .proto).
	Raw [][]byte
	// Error is a failed answer's content, where its protocol has one: an
	// HTTP error response's body (at most httpdrv.MaxErrorBody bytes), a
	// JSON-RPC error object, a gRPC status as JSON (grpcdrv.StatusJSON).
	// The call's secrets are hidden in it, and the target's own address
	// reads TargetAddr, so that two targets failing alike compare equal.
	Error []byte
}

// TargetAddr stands for the target's host:port in a Reply's Error.
const TargetAddr = "{target}"

// Querier sends calls whose requests change from one call to the next (the
// cases of a compat study) and keeps whole answers. gRPC connections and
// method descriptors are kept per endpoint and method; HTTP and WebSocket
// calls open a connection each. It is safe for concurrent use.
type Querier struct {
	o    Options
	mu   sync.Mutex
	grpc map[string]*grpcEntry
	// raw and web are replay's: gRPC connections by address (for methods
	// without a descriptor), HTTP/1.1 and HTTP/2 clients (replay.go).
	raw map[string]*grpcdrv.RawConn
	web map[bool]*http.Client
}

// grpcEntry is one gRPC method on one endpoint: its caller (the method
// resolved once) and its idle connections. A connection serves one call at
// a time; concurrent queries each take one, dialling more when none is idle.
type grpcEntry struct {
	caller *grpcdrv.Caller
	err    error
	idle   []*grpcdrv.Conn
	all    []*grpcdrv.Conn
}

// NewQuerier returns a Querier; Close releases its connections.
func NewQuerier(o Options) *Querier {
	return &Querier{o: o, grpc: map[string]*grpcEntry{}, raw: map[string]*grpcdrv.RawConn{}, web: map[bool]*http.Client{}}
}

// ErrRequest marks a request that could not be built from a case's values;
// it is the case's fault, not the target's.
var ErrRequest = errors.New("request")

// Query sends call to endpoint once. A target that cannot be reached or
// that fails is a Reply status, not an error; the error is for a request
// that cannot be built (wrapping ErrRequest). The call's ${env.NAME} are
// resolved first (see New), and kept out of the Reply and the error.
func (q *Querier) Query(ctx context.Context, call *study.Call, endpoint string) (Reply, error) {
	call, secrets, err := call.ResolveEnv(os.LookupEnv)
	if err != nil {
		return Reply{}, fmt.Errorf("%w: %v", ErrRequest, err)
	}
	r, err := q.query(ctx, call, endpoint)
	r.Detail = hideText(r.Detail, secrets)
	r.Error = failure(r.Error, endpoint, secrets)
	if err != nil {
		return r, hide(err, secrets)
	}
	return r, nil
}

// query is Query of a call resolved.
func (q *Querier) query(ctx context.Context, call *study.Call, endpoint string) (Reply, error) {
	if call.Protocol() == study.ProtoGRPC {
		return q.grpcAsk(ctx, call, endpoint)
	}
	var c Asker
	var err error
	if call.AMQP != nil {
		c, err = NewBroker(call, endpoint, q.o)
	} else {
		c, err = build(ctx, call, endpoint, q.o)
	}
	if err != nil {
		return Reply{}, fmt.Errorf("%w: %v", ErrRequest, err)
	}
	ans, res, err := c.Ask(ctx)
	if err != nil {
		return Reply{Status: "unreachable", Detail: err.Error()}, nil
	}
	if res.Status != "" {
		r := Reply{Status: res.Status}
		if len(ans) > 0 {
			r.Error = ans[0]
		}
		return r, nil
	}
	return Reply{Status: StatusOK, JSON: ans}, nil
}

// failure is a failed answer's content as a Reply keeps it: the secrets
// hidden, and the endpoint's host:port written TargetAddr.
func failure(content []byte, endpoint string, secrets []string) []byte {
	if len(content) == 0 {
		return nil
	}
	s := hideText(string(content), secrets)
	if addr := hostPort(endpoint); addr != "" {
		s = strings.ReplaceAll(s, addr, TargetAddr)
	}
	return []byte(s)
}

// hostPort is an endpoint's host:port: a URL's host, or the endpoint as
// given (grpc://, dns:/// and amqp:// forms included).
func hostPort(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		return u.Host
	}
	return strings.TrimPrefix(endpoint, "dns:///")
}

// grpcAsk is grpcQuery of a call resolved.
func (q *Querier) grpcAsk(ctx context.Context, call *study.Call, endpoint string) (Reply, error) {
	g := call.GRPC
	addr := strings.TrimPrefix(strings.TrimPrefix(endpoint, "grpc://"), "dns:///")
	e, cn, err := q.grpcConn(ctx, addr+"\x00"+g.Method, addr, g)
	if err != nil {
		return Reply{Status: "unreachable", Detail: err.Error()}, nil
	}
	defer q.release(e, cn)
	js, err := toJSON(g.Request)
	if err != nil {
		return Reply{}, fmt.Errorf("%w: %v", ErrRequest, err)
	}
	frame, err := e.caller.EncodeRequest(js)
	if err != nil {
		return Reply{}, fmt.Errorf("%w: %v", ErrRequest, err)
	}
	if q.o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.o.Timeout)
		defer cancel()
	}
	msgs, res, failed := cn.Messages(ctx, frame, MaxMessages)
	r := Reply{Status: StatusOK, Stream: e.caller.Streaming()}
	if res.Status != "" {
		r.Status, r.Error = res.Status, failed
		return r, nil
	}
	for _, m := range msgs {
		r.Messages = append(r.Messages, m)
	}
	return r, nil
}

// grpcConn takes an idle connection for addr and the call's method (kept
// under key), or dials one (resolving the method on first use); a failure
// to resolve is remembered.
func (q *Querier) grpcConn(ctx context.Context, key, addr string, g *study.GRPCCall) (*grpcEntry, *grpcdrv.Conn, error) {
	q.mu.Lock()
	e, ok := q.grpc[key]
	if !ok {
		e = &grpcEntry{}
		q.grpc[key] = e
		e.caller, e.err = grpcdrv.New(ctx, grpcdrv.Options{Addr: addr, Method: g.Method, Proto: g.Proto,
			ImportPaths: g.ImportPaths, Metadata: g.Metadata})
	}
	if e.err != nil {
		q.mu.Unlock()
		return nil, nil, e.err
	}
	if n := len(e.idle); n > 0 {
		cn := e.idle[n-1]
		e.idle = e.idle[:n-1]
		q.mu.Unlock()
		return e, cn, nil
	}
	first := len(e.all) == 0
	q.mu.Unlock()
	cn, err := e.caller.DialConn(ctx)
	q.mu.Lock()
	defer q.mu.Unlock()
	if err != nil {
		if first && len(e.all) == 0 {
			e.err = err
		}
		return nil, nil, err
	}
	e.all = append(e.all, cn)
	return e, cn, nil
}

func (q *Querier) release(e *grpcEntry, cn *grpcdrv.Conn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e.idle = append(e.idle, cn)
}

// Close closes every connection the Querier opened.
func (q *Querier) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range q.grpc {
		for _, cn := range e.all {
			cn.Close()
		}
	}
	q.grpc = map[string]*grpcEntry{}
	for _, rc := range q.raw {
		rc.Close()
	}
	q.raw = map[string]*grpcdrv.RawConn{}
	for _, c := range q.web {
		c.CloseIdleConnections()
	}
}
