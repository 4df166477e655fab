package driver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/tandem-bench/tandem/driver/grpcdrv"
	"github.com/tandem-bench/tandem/driver/jsonrpc"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/record"
	"google.golang.org/grpc/metadata"
)

// ReplayLoad sends a recording's requests as load: request i of a run is
// exchange i mod the recording's length, in the order the requests
// arrived (record.Index), each sent as compat replays it (Querier.Replay):
// HTTP and JSON-RPC requests as recorded, over HTTP/1.1 or HTTP/2 as
// recorded, less the headers the recording redacted and Accept-Encoding;
// gRPC requests as their recorded messages and metadata, through a codec
// that passes bytes. Each connection of the load is a connection of its
// own for each of those. A request that cannot be sent as it was (a body
// the recording cut, a compressed gRPC message) is not sent: its status is
// load.StatusRequest. An answer outside 2xx is http:CODE, a JSON-RPC error
// jsonrpc:CODE, a gRPC status grpc:CODE; the unit of work is a request.
type ReplayLoad struct {
	idx       *record.Index
	endpoints map[record.Protocol]string
	o         Options
}

// NewReplayLoad returns the load of idx's exchanges to one target, whose
// endpoint (an address or URL) for each protocol of the recording is in
// endpoints. Of o it takes MaxAnswer, the bound of an answer's body.
func NewReplayLoad(idx *record.Index, endpoints map[record.Protocol]string, o Options) (*ReplayLoad, error) {
	for _, p := range idx.Protocols() {
		if endpoints[p] == "" {
			return nil, fmt.Errorf("no endpoint for the recording's %s exchanges", p)
		}
	}
	return &ReplayLoad{idx: idx, endpoints: endpoints, o: o}, nil
}

// Dial returns a connection: a gRPC one is dialled now, when the
// recording has gRPC exchanges; HTTP ones open on their first request.
func (r *ReplayLoad) Dial(ctx context.Context) (load.Conn, error) {
	c := &replayConn{r: r}
	if ep, ok := r.endpoints[record.GRPC]; ok {
		rc, err := grpcdrv.DialRaw(ctx, grpcAddr(ep))
		if err != nil {
			return nil, fmt.Errorf("grpc endpoint %s: %w", grpcAddr(ep), err)
		}
		c.raw = rc
	}
	return c, nil
}

// replayConn is one connection of a replay: an HTTP/1.1 client, an HTTP/2
// one and a gRPC connection, each with at most one connection open.
type replayConn struct {
	r   *ReplayLoad
	web [2]*http.Client
	raw *grpcdrv.RawConn
	// line holds the exchange's line as read; answer a JSON-RPC answer.
	line   []byte
	answer bytes.Buffer
}

// Do sends exchange i mod the recording's length.
func (c *replayConn) Do(ctx context.Context, i uint64, deadline time.Time) load.Result {
	ex, line, err := c.r.idx.Exchange(int(i%uint64(c.r.idx.Len())), c.line)
	c.line = line
	if err != nil || replayable(&ex) != nil {
		return load.Result{Status: load.StatusRequest}
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if ex.Protocol == record.GRPC {
		return c.grpc(ctx, &ex)
	}
	return c.http(ctx, &ex)
}

// client is the connection's HTTP/1.1 or HTTP/2 client.
func (c *replayConn) client(h2 bool) *http.Client {
	i := 0
	if h2 {
		i = 1
	}
	if c.web[i] == nil {
		tr := replayTransport(h2)
		tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost = 1, 1
		c.web[i] = replayClient(tr)
	}
	return c.web[i]
}

func (c *replayConn) http(ctx context.Context, ex *record.Exchange) load.Result {
	req, err := replayRequest(ctx, ex, c.r.endpoints[ex.Protocol])
	if err != nil {
		return load.Result{Status: load.StatusRequest}
	}
	resp, err := c.client(ex.Protocol == record.H2).Do(req)
	if err != nil {
		return load.Result{Status: load.TransportStatus(err)}
	}
	defer resp.Body.Close()
	var body io.Reader = resp.Body
	if c.r.o.MaxAnswer > 0 {
		body = io.LimitReader(resp.Body, int64(c.r.o.MaxAnswer)+1)
	}
	c.answer.Reset()
	var n int64
	if ex.Protocol == record.JSONRPC {
		n, err = c.answer.ReadFrom(body)
	} else {
		n, err = io.Copy(io.Discard, body)
	}
	switch {
	case err != nil:
		return load.Result{Status: load.TransportStatus(err)}
	case c.r.o.MaxAnswer > 0 && n > int64(c.r.o.MaxAnswer):
		return load.Result{Status: "too-large"}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return load.Result{Status: "http:" + strconv.Itoa(resp.StatusCode)}
	case ex.Protocol != record.JSONRPC || len(bytes.TrimSpace(c.answer.Bytes())) == 0: // a notification's empty answer too
		return load.Result{Units: 1}
	}
	_, res := jsonrpc.CheckReplyTo(c.answer.Bytes(), ex.Body)
	if res.Status != "" {
		return load.Result{Status: res.Status}
	}
	return load.Result{Units: 1}
}

func (c *replayConn) grpc(ctx context.Context, ex *record.Exchange) load.Result {
	call, err := replayCall(ex)
	if err != nil {
		return load.Result{Status: load.StatusRequest}
	}
	_, res := c.raw.Call(metadata.NewOutgoingContext(ctx, call.md), call.method, call.msgs, MaxMessages)
	if res.Status != "" {
		return load.Result{Status: res.Status}
	}
	return load.Result{Units: 1}
}

// Close closes the connection's connections.
func (c *replayConn) Close() error {
	for _, w := range c.web {
		if w != nil {
			w.CloseIdleConnections()
		}
	}
	if c.raw != nil {
		return c.raw.Close()
	}
	return nil
}
