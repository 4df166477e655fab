package study

import (
	"reflect"
	"strings"

	"github.com/tandem-bench/tandem/internal/amqpconf"
)

// A request is one protocol's request shape in a call (the value under a
// call's http, grpc, … key). Each protocol's type says what the study
// format needs to know of it; Call finds its protocols by their YAML keys,
// so adding a protocol is adding a field to Call and a type with these
// methods.
type request interface {
	// fields are the parts of the request that may hold case variables
	// and placeholders.
	fields() []requestField
	// settings are the call's other strings in which tandem resolves
	// ${env.NAME} (headers, metadata, a method or path outside the
	// request); no case variable is bound in them.
	settings() []requestField
	// check validates the request beyond its types; path names it.
	check(v *validator, path string)
	// endpoints are the names of the target endpoints the call goes to by
	// default, in order of preference.
	endpoints() []string
}

// requestField is one part of a request: a YAML value, a string or a
// mapping of strings, by its key, and what it is to tandem.
type requestField struct {
	key     string
	value   *Value
	text    *string
	mapping *map[string]string
	part    part
	// stringText: a value that is a string is the part's text as it is
	// (an HTTP body), not a JSON document.
	stringText bool
}

// part is what a string of a call is to tandem, which decides the
// placeholders it may hold.
type part uint8

const (
	// partSetting is a setting outside the request's values: a method, a
	// JSON-RPC or WebSocket path. ${env.NAME} only.
	partSetting part = iota
	// partHeader is an HTTP header or gRPC metadata value: ${env.NAME},
	// and the call's values.
	partHeader
	// partPath is an HTTP path and query: ${env.NAME}, case variables and
	// the call's values (percent-encoded).
	partPath
	// partBody is the request itself: an HTTP body, JSON-RPC or WebSocket
	// params, a gRPC request, a TCP send. ${env.NAME}, case variables and
	// the call's values.
	partBody
)

// request reports whether case variables are bound in the part (Bind).
func (p part) request() bool { return p == partPath || p == partBody }

// takesValues reports whether the part may name the call's values.
func (p part) takesValues() bool { return p != partSetting }

// protocolKeys are the YAML keys of Call's protocol fields, in order,
// with their field indexes.
func protocolKeys() []protocolKey {
	var keys []protocolKey
	t := reflect.TypeFor[Call]()
	req := reflect.TypeFor[request]()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Pointer && f.Type.Implements(req) {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			keys = append(keys, protocolKey{name, i})
		}
	}
	return keys
}

type protocolKey struct {
	name  string
	index int
}

// protocolNames lists every protocol key, for error messages.
func protocolNames() string {
	var names []string
	for _, k := range protocolKeys() {
		names = append(names, k.name)
	}
	return strings.Join(names, ", ")
}

// requests returns the call's protocol keys that are set, with their
// requests.
func (c *Call) requests() (names []string, reqs []request) {
	v := reflect.ValueOf(c).Elem()
	for _, k := range protocolKeys() {
		f := v.Field(k.index)
		if !f.IsNil() {
			names = append(names, k.name)
			reqs = append(reqs, f.Interface().(request))
		}
	}
	return names, reqs
}

// request returns the call's one request, or nil when it has none or
// several.
func (c *Call) request() request {
	if _, reqs := c.requests(); len(reqs) == 1 {
		return reqs[0]
	}
	return nil
}

// withRequestCopy returns a copy of the call whose request is a copy too,
// so that its fields can be changed.
func (c *Call) withRequestCopy() (*Call, request) {
	out := *c
	v := reflect.ValueOf(&out).Elem()
	for _, k := range protocolKeys() {
		f := v.Field(k.index)
		if f.IsNil() {
			continue
		}
		cp := reflect.New(f.Type().Elem())
		cp.Elem().Set(f.Elem())
		f.Set(cp)
		return &out, cp.Interface().(request)
	}
	return &out, nil
}

func (h *HTTPCall) fields() []requestField {
	return []requestField{{key: "path", text: &h.Path, part: partPath}, {key: "body", value: &h.Body, part: partBody, stringText: true}}
}
func (h *HTTPCall) settings() []requestField {
	return []requestField{{key: "headers", mapping: &h.Headers, part: partHeader}}
}
func (h *HTTPCall) check(*validator, string) {}
func (h *HTTPCall) endpoints() []string      { return []string{ProtoHTTP} }

func (j *JSONRPCCall) fields() []requestField {
	return []requestField{{key: "params", value: &j.Params, part: partBody}}
}
func (j *JSONRPCCall) settings() []requestField {
	return []requestField{{key: "method", text: &j.Method}, {key: "path", text: &j.Path}, {key: "headers", mapping: &j.Headers, part: partHeader}}
}
func (j *JSONRPCCall) check(*validator, string) {}
func (j *JSONRPCCall) endpoints() []string      { return []string{ProtoJSONRPC, ProtoHTTP} }

func (g *GRPCCall) fields() []requestField {
	return []requestField{{key: "request", value: &g.Request, part: partBody}}
}
func (g *GRPCCall) settings() []requestField {
	return []requestField{{key: "metadata", mapping: &g.Metadata, part: partHeader}}
}
func (g *GRPCCall) check(v *validator, path string) {
	if svc, m, ok := strings.Cut(strings.TrimPrefix(g.Method, "/"), "/"); g.Method != "" && (!ok || svc == "" || m == "" || strings.Contains(m, "/")) {
		v.errorf(path+".method", "package.Service/Method", "bad method %q", g.Method)
	}
}
func (g *GRPCCall) endpoints() []string { return []string{ProtoGRPC} }

func (w *WSCall) fields() []requestField {
	return []requestField{{key: "params", value: &w.Params, part: partBody}}
}
func (w *WSCall) settings() []requestField {
	return []requestField{{key: "method", text: &w.Method}, {key: "path", text: &w.Path}}
}
func (w *WSCall) check(*validator, string) {}
func (w *WSCall) endpoints() []string      { return []string{ProtoWS} }

func (a *AMQPCall) fields() []requestField   { return nil }
func (a *AMQPCall) settings() []requestField { return nil }
func (a *AMQPCall) check(v *validator, path string) {
	if _, err := amqpconf.QueueType(a.QueueType); err != nil {
		v.errorf(path+".queue_type", amqpconf.QueueTypes, "unknown queue type %q", a.QueueType)
	}
	if _, err := amqpconf.Ack(a.Ack); err != nil {
		v.errorf(path+".ack", amqpconf.AckModes, "unknown ack mode %q", a.Ack)
	}
}
func (a *AMQPCall) endpoints() []string { return []string{ProtoAMQP} }

func (c *CometBFTCall) fields() []requestField          { return nil }
func (c *CometBFTCall) settings() []requestField        { return nil }
func (c *CometBFTCall) check(v *validator, path string) { v.cometbftCall(path, c) }
func (c *CometBFTCall) endpoints() []string             { return []string{ProtoCometBFT, ProtoWS} }
