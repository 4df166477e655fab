// Package driver builds a protocol caller for a study call and a target
// endpoint. Each protocol lives in its own subpackage so its dependencies
// stay there; this package wires a study.Call to the right one (New), and
// for compat's differential tests keeps whole answers to calls whose
// requests change from case to case (Querier), pooling gRPC connections
// and resolved methods per endpoint and method (query.go).
package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/comet"
	"github.com/tandem-bench/tandem/driver/amqpdrv"
	"github.com/tandem-bench/tandem/driver/grpcdrv"
	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/driver/wsdrv"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// Caller sends one call to one target: Dial opens connections for load,
// Ask sends the request once and returns its answers as JSON.
type Caller interface {
	load.Dialer
	Ask(ctx context.Context) ([][]byte, load.Result, error)
}

// Options tunes a Caller.
type Options struct {
	// Timeout bounds each request.
	Timeout time.Duration
	// QuickACK makes the client acknowledge every segment at once, to
	// confirm a delayed-ACK stall (HTTP, JSON-RPC and gRPC calls).
	QuickACK bool
	// MaxAnswer bounds an HTTP or JSON-RPC answer's body; zero: no bound.
	MaxAnswer int
	// Run is what a cometbft call's transactions carry (connections, rate
	// and the run id of a sweep cell).
	Run comet.Run
}

// New returns a Caller for call at endpoint (host:port for gRPC, a URL
// otherwise).
func New(ctx context.Context, call *study.Call, endpoint string, o Options) (Caller, error) {
	timeout := o.Timeout
	switch call.Protocol() {
	case study.ProtoGRPC:
		g := call.GRPC
		req, err := toJSON(g.Request)
		if err != nil {
			return nil, err
		}
		addr := strings.TrimPrefix(strings.TrimPrefix(endpoint, "grpc://"), "dns:///")
		c, err := grpcdrv.New(ctx, grpcdrv.Options{Addr: addr, Method: g.Method, Request: req, Proto: g.Proto,
			ImportPaths: g.ImportPaths, Metadata: g.Metadata, QuickACK: o.QuickACK})
		if err != nil {
			return nil, err
		}
		return asker[*grpcdrv.Conn]{c, c.DialConn}, nil
	case study.ProtoJSONRPC:
		j := call.JSONRPC
		params, err := toJSON(j.Params)
		if err != nil {
			return nil, err
		}
		headers, err := expandEnv(j.Headers)
		if err != nil {
			return nil, err
		}
		c, err := httpdrv.New(httpdrv.Options{URL: joinURL(endpoint, j.Path), RPCMethod: j.Method, RPCParams: params, Headers: headers, Timeout: timeout,
			HTTP2: j.HTTP2, Insecure: j.Insecure, QuickACK: o.QuickACK, MaxBody: o.MaxAnswer})
		if err != nil {
			return nil, err
		}
		return asker[*httpdrv.Conn]{c, c.DialConn}, nil
	case study.ProtoHTTP:
		h := call.HTTP
		var body []byte
		if s, ok := h.Body.V.(string); ok {
			body = []byte(s)
		} else if h.Body.IsSet() {
			var err error
			if body, err = toJSON(h.Body); err != nil {
				return nil, err
			}
		}
		headers, err := expandEnv(h.Headers)
		if err != nil {
			return nil, err
		}
		c, err := httpdrv.New(httpdrv.Options{URL: joinURL(endpoint, h.Path), Method: h.Method, Headers: headers, Body: body, Timeout: timeout,
			HTTP2: h.HTTP2, Insecure: h.Insecure, QuickACK: o.QuickACK, MaxBody: o.MaxAnswer})
		if err != nil {
			return nil, err
		}
		return asker[*httpdrv.Conn]{c, c.DialConn}, nil
	case study.ProtoWS:
		w := call.WS
		params, err := toJSON(w.Params)
		if err != nil {
			return nil, err
		}
		c, err := wsdrv.New(wsdrv.Options{URL: joinURL(endpoint, w.Path), Method: w.Method, Params: params, Timeout: timeout})
		if err != nil {
			return nil, err
		}
		return asker[*wsdrv.Conn]{c, c.DialConn}, nil
	case study.ProtoCometBFT:
		cb := call.CometBFT
		run := o.Run
		if run.Size = cb.Size; run.Size == 0 {
			run.Size = study.DefaultTxSize
		}
		method := cb.Method
		if method == "" {
			method = study.DefaultBroadcast
		}
		c, err := wsdrv.New(wsdrv.Options{URL: endpoint, Method: method, Timeout: timeout, NewParams: run.Params(), Check: comet.CheckResult})
		if err != nil {
			return nil, err
		}
		return asker[*wsdrv.Conn]{c, c.DialConn}, nil
	case study.ProtoAMQP:
		a := call.AMQP
		return AMQP{opts: amqpdrv.Options{URL: endpoint, Queue: a.Queue, QueueType: a.QueueType, Prefetch: a.Prefetch,
			Size: a.Size, Confirm: a.Confirm, Ack: a.Ack, Timeout: timeout}}, nil
	}
	return nil, fmt.Errorf("%s calls are not supported by this tandem yet", call.Protocol())
}

// expandEnv resolves ${env.NAME} in header values, so that secrets stay
// out of study files.
func expandEnv(h map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(h))
	for k, v := range h {
		e, err := study.ExpandEnv(v)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", k, err)
		}
		out[k] = e
	}
	return out, nil
}

// AMQP is the Caller of an amqp call. A broker is not asked request by
// request: Run publishes and consumes a whole run through one queue, and
// the runner calls it instead of a load loop.
type AMQP struct{ opts amqpdrv.Options }

// Dial is not how an AMQP call is measured: see Run.
func (AMQP) Dial(context.Context) (load.Conn, error) {
	return nil, errors.New("amqp calls run whole (AMQP.Run), not request by request")
}

// Ask publishes and consumes one message.
func (a AMQP) Ask(ctx context.Context) ([][]byte, load.Result, error) {
	s, err := a.Run(ctx, 1, 0)
	if err != nil {
		return nil, load.Result{}, err
	}
	if s.OK != 1 {
		return nil, load.Result{Status: "amqp"}, nil
	}
	return [][]byte{[]byte("{}")}, load.Result{Units: 1}, nil
}

// Run publishes and consumes messages (or for d when messages is 0).
func (a AMQP) Run(ctx context.Context, messages int64, d time.Duration) (results.Sample, error) {
	o := a.opts
	o.Messages, o.Duration = messages, d
	if messages > 0 {
		o.Duration = 0 // the count bounds the run; the timeout bounds the wait
	}
	return amqpdrv.Run(ctx, o)
}

func joinURL(base, path string) string {
	if path == "" {
		return base
	}
	return strings.TrimSuffix(base, "/") + "/" + strings.TrimPrefix(path, "/")
}

func toJSON(v study.Value) ([]byte, error) {
	if !v.IsSet() || v.V == nil {
		return nil, nil
	}
	b, err := json.Marshal(v.V)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return b, nil
}

// asker makes a driver's caller a Caller: Ask dials a connection of its
// own, sends the request once and closes it.
type asker[C interface {
	Ask(context.Context) ([][]byte, load.Result)
	Close() error
}] struct {
	load.Dialer
	dial func(context.Context) (C, error)
}

func (a asker[C]) Ask(ctx context.Context) ([][]byte, load.Result, error) {
	cn, err := a.dial(ctx)
	if err != nil {
		return nil, load.Result{}, err
	}
	defer cn.Close()
	ans, res := cn.Ask(ctx)
	return ans, res, nil
}

// Wire passes on the dialer's Wire, if it has one, so load's event loop
// can send the requests itself.
func (a asker[C]) Wire() (load.Wire, bool) {
	if w, ok := a.Dialer.(load.Wired); ok {
		return w.Wire()
	}
	return nil, false
}
