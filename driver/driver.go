// Package driver builds a protocol caller for a study call and a target
// endpoint. Each protocol lives in its own subpackage so its dependencies
// stay there; this package wires a study.Call to the right one (New), and
// for compat's differential tests keeps whole answers to calls whose
// requests change from case to case (Querier), pooling gRPC connections
// and resolved methods per endpoint and method (query.go).
package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/comet"
	"github.com/tandem-bench/tandem/driver/grpcdrv"
	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/driver/internal/vary"
	"github.com/tandem-bench/tandem/driver/wsdrv"
	"github.com/tandem-bench/tandem/internal/redact"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/values"
)

// Asker sends a call once and returns its answers as JSON. When the call
// failed (the result's Status is set) the answer, if any, is the failure's
// content instead: an HTTP error response's body, a JSON-RPC error object,
// a gRPC status (grpcdrv.StatusJSON).
type Asker interface {
	Ask(ctx context.Context) ([][]byte, load.Result, error)
}

// Caller sends one call to one target: Dial opens connections for load,
// Ask sends the request once.
type Caller interface {
	load.Dialer
	Asker
}

// Options tunes a Caller.
type Options struct {
	// Timeout bounds each request.
	Timeout time.Duration
	// QuickACK makes the client acknowledge every segment at once, to
	// confirm a delayed-ACK stall (HTTP, JSON-RPC, gRPC and TCP calls).
	QuickACK bool
	// MaxAnswer bounds an HTTP or JSON-RPC answer's body (zero: no bound)
	// and a TCP answer (zero: tcpdrv.DefaultMaxAnswer).
	MaxAnswer int
	// Connections, for gRPC and HTTP/2, is how many connections all of a
	// load's clients share, their calls as streams (zero: one each).
	Connections int
	// Run is what a cometbft call's transactions carry (connections, rate
	// and the run id of a sweep cell).
	Run comet.Run
	// Values is the set of a call with values, open (see Values): each
	// request number gets its own. Nil for a call without values; a call
	// with values has no Caller without it.
	Values *Values

	// vary is the call's parts that vary, compiled from Values (build).
	vary *vary.Parts
}

// A protocol is what the driver package knows of one protocol: how to build
// the Caller of its calls and, for `tandem load`, which URLs name it.
type protocol struct {
	// key is the call's protocol key in a study (study.ProtoHTTP, …).
	key string
	// new builds the Caller of a call at an endpoint; nil for a protocol
	// that is not asked request by request.
	new func(ctx context.Context, call *study.Call, endpoint string, o Options) (Caller, error)
	// schemes are the URL schemes of `tandem load` targets for it, form
	// is its line in the command's help, and fromURL makes the call that a
	// target URL and the command's options describe (with the endpoint it
	// goes to).
	schemes []string
	form    string
	fromURL func(u *url.URL, o URLOptions) (*study.Call, string, error)
	// broker, for a protocol whose calls run whole through a broker, is
	// how they are run (see Broker).
	broker *brokerProtocol
}

// protocols lists every protocol, in the order `tandem load` tries a
// URL's scheme against them.
func protocols() []protocol {
	return []protocol{
		{key: study.ProtoJSONRPC, new: newJSONRPC},
		{key: study.ProtoHTTP, new: newHTTP, schemes: []string{"http", "https"}, fromURL: httpFromURL,
			form: "http(s)://HOST/PATH (with --jsonrpc METHOD and --params for JSON-RPC 2.0 over HTTP)"},
		{key: study.ProtoGRPC, new: newGRPC, schemes: []string{"grpc"}, fromURL: grpcFromURL,
			form: "grpc://HOST:PORT/package.Service/Method (types from server reflection, or --proto files)"},
		{key: study.ProtoWS, new: newWS, schemes: []string{"ws", "wss"}, fromURL: wsFromURL,
			form: "ws(s)://HOST/PATH with --jsonrpc METHOD (JSON-RPC 2.0 over WebSocket, answers matched by id)"},
		{key: study.ProtoCometBFT, new: newCometBFT},
		{key: study.ProtoAMQP, broker: amqpBrokers()}, // run whole: NewBroker
		tcp(),
	}
}

// New returns a Caller for call at endpoint (host:port for gRPC and TCP, a
// URL otherwise). An amqp call has none: see NewBroker. Every ${env.NAME}
// of the call is resolved from the environment first (see
// study.Call.ResolveEnv), and kept out of the error if there is one.
func New(ctx context.Context, call *study.Call, endpoint string, o Options) (Caller, error) {
	resolved, secrets, err := call.ResolveEnv(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	c, err := build(ctx, resolved, endpoint, o)
	if err != nil {
		return nil, hide(err, secrets)
	}
	return c, nil
}

// build is New of a call resolved.
func build(ctx context.Context, call *study.Call, endpoint string, o Options) (Caller, error) {
	key := call.Protocol()
	call, parts, err := withValues(call, o.Values)
	if err != nil {
		return nil, err
	}
	o.vary = parts
	for _, p := range protocols() {
		if p.key != key {
			continue
		}
		if p.new == nil {
			return nil, fmt.Errorf("%s calls are run whole through a broker (NewBroker), not request by request", key)
		}
		return p.new(ctx, call, endpoint, o)
	}
	return nil, fmt.Errorf("%q calls are not supported by this tandem", key)
}

// hide is err with every secret in its text replaced by redact.Hidden
// (err still unwraps to what it wrapped).
func hide(err error, secrets []string) error {
	if msg := hideText(err.Error(), secrets); msg != err.Error() {
		return hidden{msg, err}
	}
	return err
}

// hidden is an error whose text hides secrets.
type hidden struct {
	msg string
	err error
}

func (h hidden) Error() string { return h.msg }
func (h hidden) Unwrap() error { return h.err }

// minHidden is the shortest value hidden: a shorter one (a port, a flag
// such as 1) would mangle every message it occurs in.
const minHidden = 4

// hideText is s with every secret in it replaced by redact.Hidden.
func hideText(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= minHidden {
			s = strings.ReplaceAll(s, v, redact.Hidden)
		}
	}
	return s
}

// URLOptions are what `tandem load` says of a call besides its target URL.
type URLOptions struct {
	// Body is the HTTP request body, or the gRPC request message as JSON.
	Body []byte
	// RPCMethod and Params make a JSON-RPC 2.0 call (Params as JSON).
	RPCMethod, Params string
	// Headers are HTTP headers or gRPC metadata.
	Headers map[string]string
	// Protos and ImportPaths define a gRPC service without reflection.
	Protos, ImportPaths []string
	// HTTP2 and Insecure are HTTP's.
	HTTP2, Insecure bool
	// Values, if set, are the call's values (tandem load --values): the
	// body, params, headers and an HTTP URL's path and query are then
	// templates that name them (${NAME}, $${ for a literal ${), no longer
	// sent as written.
	Values map[string]values.Spec
}

// CallFromURL makes the call that a `tandem load` target URL and its
// options describe, and returns the endpoint it goes to.
func CallFromURL(target string, o URLOptions) (*study.Call, string, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, "", fmt.Errorf("target %q: %w", target, err)
	}
	var schemes []string
	for _, p := range protocols() {
		for _, sc := range p.schemes {
			if u.Scheme == sc {
				call, endpoint, err := p.fromURL(u, o)
				if err != nil {
					return nil, "", err
				}
				if len(o.Values) == 0 {
					return call.Literal(), endpoint, nil // flags are sent as written
				}
				call.ValueSpecs = o.Values
				if call.HTTP != nil { // the URL's path and query as written: a template
					endpoint, call.HTTP.Path = splitTarget(target)
				}
				return call, endpoint, nil
			}
			schemes = append(schemes, sc+"://")
		}
	}
	return nil, "", fmt.Errorf("target %q: want %s (or amqp://)", target, strings.Join(schemes, ", "))
}

// splitTarget splits a URL as written into its scheme and host, and its
// path and query (url.URL would escape a placeholder's braces).
func splitTarget(target string) (base, rest string) {
	_, after, _ := strings.Cut(target, "://")
	i := strings.IndexAny(after, "/?")
	if i < 0 {
		return target, ""
	}
	i += len(target) - len(after)
	return target[:i], target[i:]
}

// URLForms are the target URLs `tandem load` takes, one line each.
func URLForms() []string {
	var forms []string
	for _, p := range protocols() {
		if p.form != "" {
			forms = append(forms, p.form)
		}
	}
	return forms
}

// jsonValue parses JSON into a request value, numbers kept exact.
func jsonValue(what string, b []byte) (study.Value, error) {
	if len(b) == 0 {
		return study.Value{}, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return study.Value{}, fmt.Errorf("%s: not valid JSON", what)
	}
	return study.NewValue(v), nil
}

func newGRPC(ctx context.Context, call *study.Call, endpoint string, o Options) (Caller, error) {
	g := call.GRPC
	req, err := toJSON(g.Request)
	if err != nil {
		return nil, err
	}
	addr := strings.TrimPrefix(strings.TrimPrefix(endpoint, "grpc://"), "dns:///")
	c, err := grpcdrv.New(ctx, grpcdrv.Options{Addr: addr, Method: g.Method, Request: req, Proto: g.Proto,
		ImportPaths: g.ImportPaths, Metadata: g.Metadata, QuickACK: o.QuickACK, Connections: o.Connections, Vary: o.vary})
	if err != nil {
		return nil, err
	}
	return asker[*grpcdrv.Conn]{c, c.DialConn}, nil
}

func grpcFromURL(u *url.URL, o URLOptions) (*study.Call, string, error) {
	req, err := jsonValue("--data", o.Body)
	if err != nil {
		return nil, "", err
	}
	return &study.Call{GRPC: &study.GRPCCall{Method: strings.TrimPrefix(u.Path, "/"), Request: req, Proto: o.Protos,
		ImportPaths: o.ImportPaths, Metadata: o.Headers}}, u.Host, nil
}

func newJSONRPC(_ context.Context, call *study.Call, endpoint string, o Options) (Caller, error) {
	j := call.JSONRPC
	params, err := toJSON(j.Params)
	if err != nil {
		return nil, err
	}
	c, err := httpdrv.New(httpdrv.Options{URL: joinURL(endpoint, j.Path), RPCMethod: j.Method, RPCParams: params, Headers: j.Headers, Timeout: o.Timeout,
		HTTP2: j.HTTP2, Insecure: j.Insecure, QuickACK: o.QuickACK, MaxBody: o.MaxAnswer, Vary: o.vary, Connections: o.Connections})
	if err != nil {
		return nil, err
	}
	return asker[*httpdrv.Conn]{c, c.DialConn}, nil
}

func newHTTP(_ context.Context, call *study.Call, endpoint string, o Options) (Caller, error) {
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
	target := joinURL(endpoint, h.Path)
	if o.vary != nil && o.vary.Path != nil {
		target = strings.TrimSuffix(endpoint, "/") // the path follows, rendered per request
	}
	c, err := httpdrv.New(httpdrv.Options{URL: target, Method: h.Method, Headers: h.Headers, Body: body, Timeout: o.Timeout,
		HTTP2: h.HTTP2, Insecure: h.Insecure, QuickACK: o.QuickACK, MaxBody: o.MaxAnswer, Vary: o.vary, Connections: o.Connections})
	if err != nil {
		return nil, err
	}
	return asker[*httpdrv.Conn]{c, c.DialConn}, nil
}

// httpFromURL makes an HTTP call, or with an RPC method a JSON-RPC call.
func httpFromURL(u *url.URL, o URLOptions) (*study.Call, string, error) {
	if o.RPCMethod != "" {
		params, err := jsonValue("--params", []byte(o.Params))
		if err != nil {
			return nil, "", err
		}
		return &study.Call{JSONRPC: &study.JSONRPCCall{Method: o.RPCMethod, Params: params, Headers: o.Headers,
			HTTP2: o.HTTP2, Insecure: o.Insecure}}, u.String(), nil
	}
	var body study.Value
	if len(o.Body) > 0 {
		body = study.NewValue(string(o.Body))
	}
	return &study.Call{HTTP: &study.HTTPCall{Body: body, Headers: o.Headers, HTTP2: o.HTTP2, Insecure: o.Insecure}}, u.String(), nil
}

func newWS(_ context.Context, call *study.Call, endpoint string, o Options) (Caller, error) {
	w := call.WS
	params, err := toJSON(w.Params)
	if err != nil {
		return nil, err
	}
	c, err := wsdrv.New(wsdrv.Options{URL: joinURL(endpoint, w.Path), Method: w.Method, Params: params, Timeout: o.Timeout, Vary: o.vary})
	if err != nil {
		return nil, err
	}
	return asker[*wsdrv.Conn]{c, c.DialConn}, nil
}

func wsFromURL(u *url.URL, o URLOptions) (*study.Call, string, error) {
	if o.RPCMethod == "" {
		return nil, "", errors.New("a ws:// target needs --jsonrpc METHOD (and --params)")
	}
	params, err := jsonValue("--params", []byte(o.Params))
	if err != nil {
		return nil, "", err
	}
	return &study.Call{WS: &study.WSCall{Method: o.RPCMethod, Params: params}}, u.String(), nil
}

func newCometBFT(_ context.Context, call *study.Call, endpoint string, o Options) (Caller, error) {
	cb := call.CometBFT
	run := o.Run
	if run.Size = cb.Size; run.Size == 0 {
		run.Size = study.DefaultTxSize
	}
	method := cb.Method
	if method == "" {
		method = study.DefaultBroadcast
	}
	c, err := wsdrv.New(wsdrv.Options{URL: endpoint, Method: method, Timeout: o.Timeout, NewParams: run.Params(), Check: comet.CheckResult})
	if err != nil {
		return nil, err
	}
	return asker[*wsdrv.Conn]{c, c.DialConn}, nil
}

// NewAsker returns what sends call to endpoint once: its Caller, or for a
// broker's call its Broker.
func NewAsker(ctx context.Context, call *study.Call, endpoint string, o Options) (Asker, error) {
	if IsBroker(call) {
		return NewBroker(call, endpoint, o)
	}
	return New(ctx, call, endpoint, o)
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

// Streaming passes on whether the dialer's calls are server streams, whose
// unit of work is a message.
func (a asker[C]) Streaming() bool {
	s, ok := a.Dialer.(interface{ Streaming() bool })
	return ok && s.Streaming()
}

// Wire passes on the dialer's Wire, if it has one, so load's event loop
// can send the requests itself.
func (a asker[C]) Wire() (load.Wire, bool) {
	if w, ok := a.Dialer.(load.Wired); ok {
		return w.Wire()
	}
	return nil, false
}
