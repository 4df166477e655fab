// Package wsdrv sends JSON-RPC 2.0 calls over WebSocket, the way CometBFT
// takes broadcast_tx_* over /websocket. Each connection is one WebSocket;
// answers are matched to requests by id, and messages without the id
// (subscription events, late answers) are skipped.
package wsdrv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/coder/websocket"
	"github.com/tandem-bench/tandem/driver/internal/vary"
	"github.com/tandem-bench/tandem/driver/jsonrpc"
	"github.com/tandem-bench/tandem/load"
)

// Options describes one call.
type Options struct {
	// URL is ws:// or wss://.
	URL    string
	Method string
	// Params is the params value as JSON; empty means [].
	Params []byte
	// Timeout bounds each call; default 10 s.
	Timeout time.Duration
	// ReadLimit bounds one message; default 16 MiB.
	ReadLimit int64
	// NewParams, if set, makes each request's params (appended to dst as
	// JSON) instead of Params: a fresh transaction per request, say.
	NewParams func(dst []byte) ([]byte, error)
	// Check, if set, judges a successful answer's result: "" when it is a
	// success, else the failure's status.
	Check func(result []byte) string
	// Vary, if its Body is set, renders each request number's params in
	// place of Params.
	Vary *vary.Parts
}

// Caller sends one call shape.
type Caller struct {
	opts Options
	req  *jsonrpc.Request
}

// New checks opts and returns a Caller.
func New(opts Options) (*Caller, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return nil, fmt.Errorf("url %q: want ws://HOST/PATH or wss://HOST/PATH", opts.URL)
	}
	if opts.Method == "" {
		return nil, errors.New("no JSON-RPC method")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.ReadLimit <= 0 {
		opts.ReadLimit = 16 << 20
	}
	if opts.Vary == nil || opts.Vary.Body == nil {
		opts.Vary = nil
	}
	req, err := jsonrpc.NewRequest(opts.Method, opts.Params)
	if err != nil {
		return nil, err
	}
	return &Caller{opts: opts, req: req}, nil
}

// Dial opens a WebSocket.
func (c *Caller) Dial(ctx context.Context) (load.Conn, error) { return c.DialConn(ctx) }

// DialConn is Dial with the concrete type, which can also Ask.
func (c *Caller) DialConn(ctx context.Context) (*Conn, error) {
	cn := &Conn{c: c}
	if v := c.opts.Vary; v != nil {
		cn.vary = v.NewRequest()
	}
	if err := cn.dial(ctx); err != nil {
		return nil, err
	}
	return cn, nil
}

// Conn is one WebSocket connection. After a timeout or a transport error
// the socket is closed (the library closes it when a read is cancelled);
// the next call dials again.
type Conn struct {
	c   *Caller
	ws  *websocket.Conn
	id  int64
	out []byte
	in  bytes.Buffer
	// vary renders each request's params (Options.Vary).
	vary *vary.Request
}

func (cn *Conn) dial(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, cn.c.opts.Timeout)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, cn.c.opts.URL, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return fmt.Errorf("websocket %s: %w", cn.c.opts.URL, err)
	}
	ws.SetReadLimit(cn.c.opts.ReadLimit)
	cn.ws = ws
	return nil
}

// Do sends request number i once and waits for its answer.
func (cn *Conn) Do(ctx context.Context, i uint64, deadline time.Time) load.Result {
	_, res := cn.ask(ctx, i, deadline)
	return res
}

// Ask sends the call once (request number 0, when its params vary) and
// returns its result; a call answered with a JSON-RPC error returns the
// error object instead.
func (cn *Conn) Ask(ctx context.Context) ([][]byte, load.Result) {
	ans, res := cn.ask(ctx, 0, time.Now().Add(cn.c.opts.Timeout))
	if ans == nil {
		return nil, res
	}
	return [][]byte{bytes.Clone(ans)}, res
}

func (cn *Conn) ask(ctx context.Context, i uint64, deadline time.Time) ([]byte, load.Result) {
	if cn.vary != nil {
		if err := cn.vary.Render(i); err != nil {
			return nil, load.Result{Status: load.StatusRequest}
		}
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if cn.ws == nil {
		if err := cn.dial(ctx); err != nil {
			return nil, load.Result{Status: load.TransportStatus(err)}
		}
	}
	cn.id++
	if np := cn.c.opts.NewParams; np != nil {
		var err error
		if cn.out, err = cn.c.req.AppendWith(cn.out[:0], cn.id, np); err != nil {
			return nil, load.Result{Status: load.StatusRequest}
		}
	} else if cn.vary != nil {
		cn.out = cn.c.req.AppendParams(cn.out[:0], cn.id, cn.vary.Body)
	} else {
		cn.out = cn.c.req.Append(cn.out[:0], cn.id)
	}
	if err := cn.ws.Write(ctx, websocket.MessageText, cn.out); err != nil {
		return nil, cn.broken(err)
	}
	for {
		_, r, err := cn.ws.Reader(ctx)
		if err != nil {
			return nil, cn.broken(err)
		}
		cn.in.Reset()
		if _, err := cn.in.ReadFrom(r); err != nil {
			return nil, cn.broken(err)
		}
		msg := cn.in.Bytes()
		if id, ok := jsonrpc.ID(msg); !ok || id != cn.id {
			continue // an event or an answer to an earlier call
		}
		result, res := jsonrpc.CheckReply(msg, cn.id)
		if res.Status != "" {
			return jsonrpc.ErrorObject(msg), res // the error's content, for Ask
		}
		if cn.c.opts.Check != nil {
			if st := cn.c.opts.Check(result); st != "" {
				return nil, load.Result{Status: st}
			}
		}
		return result, res
	}
}

// broken closes the socket after a failure and classifies it.
func (cn *Conn) broken(err error) load.Result {
	cn.ws.CloseNow()
	cn.ws = nil
	var ce websocket.CloseError
	switch {
	case errors.As(err, &ce):
		return load.Result{Status: fmt.Sprintf("ws:%d", ce.Code)}
	case errors.Is(err, io.EOF):
		return load.Result{Status: "eof"}
	}
	return load.Result{Status: load.TransportStatus(err)}
}

// Close closes the WebSocket.
func (cn *Conn) Close() error {
	if cn.ws == nil {
		return nil
	}
	return cn.ws.Close(websocket.StatusNormalClosure, "")
}
