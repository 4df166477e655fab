// Package httpdrv sends HTTP requests and JSON-RPC 2.0 calls over HTTP. Each
// connection is its own HTTP client with one TCP connection; the request
// body is built once, and for JSON-RPC only the id changes per call.
package httpdrv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/tandem-bench/tandem/load"
)

// Options describes one HTTP request or JSON-RPC call.
type Options struct {
	// URL is the full request URL.
	URL string
	// Method is the HTTP method; default GET, or POST with a body.
	Method  string
	Headers map[string]string
	Body    []byte
	// RPCMethod, if set, makes this a JSON-RPC 2.0 call with RPCParams
	// (JSON) as its params.
	RPCMethod string
	RPCParams []byte
	// Timeout bounds each request; default 10 s.
	Timeout time.Duration
}

// Caller sends one request shape.
type Caller struct {
	opts           Options
	prefix, suffix []byte // a JSON-RPC body is prefix + id + suffix
}

// New checks opts and returns a Caller.
func New(opts Options) (*Caller, error) {
	req, err := http.NewRequest(http.MethodGet, opts.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", opts.URL, err)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return nil, fmt.Errorf("url %q: want http:// or https://", opts.URL)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	c := &Caller{opts: opts}
	if opts.RPCMethod != "" {
		method, _ := json.Marshal(opts.RPCMethod)
		params := opts.RPCParams
		if len(params) == 0 {
			params = []byte("[]")
		}
		if !json.Valid(params) {
			return nil, fmt.Errorf("params for %s: not valid JSON", opts.RPCMethod)
		}
		c.prefix = []byte(`{"jsonrpc":"2.0","id":`)
		c.suffix = fmt.Appendf(nil, `,"method":%s,"params":%s}`, method, params)
		c.opts.Method = http.MethodPost
		if c.opts.Headers == nil {
			c.opts.Headers = map[string]string{}
		}
		c.opts.Headers["Content-Type"] = "application/json"
	} else if c.opts.Method == "" {
		c.opts.Method = http.MethodGet
		if len(opts.Body) > 0 {
			c.opts.Method = http.MethodPost
		}
	}
	return c, nil
}

// Dial returns a connection; the TCP connection opens on the first request.
func (c *Caller) Dial(ctx context.Context) (load.Conn, error) { return c.DialConn(ctx) }

// DialConn is Dial with the concrete type, which can also Ask.
func (c *Caller) DialConn(context.Context) (*Conn, error) {
	tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true,
		ResponseHeaderTimeout: c.opts.Timeout, ForceAttemptHTTP2: false}
	return &Conn{c: c, client: &http.Client{Transport: tr, Timeout: c.opts.Timeout}}, nil
}

// Conn is one HTTP connection.
type Conn struct {
	c      *Caller
	client *http.Client
	id     int64
	body   []byte
	buf    bytes.Buffer
}

type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int `json:"code"`
	} `json:"error"`
}

// Do sends the request once.
func (cn *Conn) Do(ctx context.Context) load.Result {
	_, res := cn.ask(ctx, false)
	return res
}

// Ask sends the request once and returns the answer: a JSON-RPC call's
// result, or an HTTP response's body.
func (cn *Conn) Ask(ctx context.Context) ([][]byte, load.Result) {
	ans, res := cn.ask(ctx, true)
	if ans == nil {
		return nil, res
	}
	return [][]byte{ans}, res
}

func (cn *Conn) ask(ctx context.Context, keep bool) ([]byte, load.Result) {
	c := cn.c
	body := c.opts.Body
	if c.prefix != nil {
		cn.id++
		cn.body = append(strconv.AppendInt(append(cn.body[:0], c.prefix...), cn.id, 10), c.suffix...)
		body = cn.body
	}
	req, err := http.NewRequestWithContext(ctx, c.opts.Method, c.opts.URL, bytes.NewReader(body))
	if err != nil {
		return nil, load.Result{Status: "transport"}
	}
	for k, v := range c.opts.Headers {
		req.Header.Set(k, v)
	}
	resp, err := cn.client.Do(req)
	if err != nil {
		return nil, load.Result{Status: load.TransportStatus(err)}
	}
	cn.buf.Reset()
	_, err = cn.buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, load.Result{Status: load.TransportStatus(err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, load.Result{Status: "http:" + strconv.Itoa(resp.StatusCode)}
	}
	if c.prefix == nil {
		if keep {
			return bytes.Clone(cn.buf.Bytes()), load.Result{Units: 1}
		}
		return nil, load.Result{Units: 1}
	}
	var reply rpcReply
	if err := json.Unmarshal(cn.buf.Bytes(), &reply); err != nil {
		return nil, load.Result{Status: "protocol"}
	}
	if id, err := strconv.ParseInt(string(reply.ID), 10, 64); err != nil || id != cn.id {
		return nil, load.Result{Status: "protocol"}
	}
	if reply.Error != nil {
		return nil, load.Result{Status: "jsonrpc:" + strconv.Itoa(reply.Error.Code)}
	}
	return reply.Result, load.Result{Units: 1}
}

// Close closes the connection.
func (cn *Conn) Close() error {
	cn.client.CloseIdleConnections()
	return nil
}
