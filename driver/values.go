package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/driver/internal/vary"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/values"
)

// Values are the values (package values) of a scenario's call: the set,
// opened once by whoever builds the scenario's Callers and shared by all
// of them, and the count of request numbers rendered from it
// (Values.Requests), which the digest of the run's values covers.
type Values = vary.Values

// NewValues returns the Values of an open set.
func NewValues(set *values.Set) *Values { return vary.New(set) }

// errNoValues is New's error for a call with values but no set.
var errNoValues = errors.New("the call has values but no set of them is open: a call with values is sent by a scenario's load (or tandem load --values)")

// withValues splits a call with values (resolved: see study.Call.Compile)
// into what varies from one request to the next, compiled into the
// returned Parts, and a copy of the call whose other parts that take
// values are rendered once: text as it is, a JSON part as JSON (a
// json.RawMessage). A call without values is returned as it is, with no
// Parts.
func withValues(call *study.Call, v *Values) (*study.Call, *vary.Parts, error) {
	if !call.HasValues() {
		return call, nil, nil
	}
	if v == nil {
		return nil, nil, errNoValues
	}
	out := *call
	switch {
	case call.HTTP != nil:
		h := *call.HTTP
		if h.Path != "" {
			h.Path = "/" + strings.TrimPrefix(h.Path, "/") // as joinURL joins it
		}
		out.HTTP = &h
	case call.JSONRPC != nil:
		j := *call.JSONRPC
		out.JSONRPC = &j
	case call.GRPC != nil:
		g := *call.GRPC
		out.GRPC = &g
	case call.WS != nil:
		w := *call.WS
		out.WS = &w
	case call.TCP != nil:
		t := *call.TCP
		out.TCP = &t
	default:
		return nil, nil, fmt.Errorf("%s calls take no values", call.Protocol())
	}
	t, err := out.Compile(v.Set())
	if err != nil {
		return nil, nil, err
	}
	parts := &vary.Parts{Values: v}
	fixed := staticParts{set: v.Set()}
	switch {
	case out.HTTP != nil:
		h := out.HTTP
		parts.Path = fixed.text(t.Path, &h.Path)
		h.Headers = fixed.headers(t.Headers, &parts.Headers)
		parts.Body = fixed.value(t.Body, &h.Body, true)
	case out.JSONRPC != nil:
		j := out.JSONRPC
		j.Headers = fixed.headers(t.Headers, &parts.Headers)
		parts.Body = fixed.value(t.Body, &j.Params, false)
	case out.GRPC != nil:
		g := out.GRPC
		g.Metadata = fixed.headers(t.Headers, &parts.Headers)
		parts.Body = fixed.value(t.Body, &g.Request, false)
	case out.WS != nil:
		parts.Body = fixed.value(t.Body, &out.WS.Params, false)
	case out.TCP != nil:
		parts.Body = fixed.text(t.Body, &out.TCP.Send)
	}
	if fixed.err != nil {
		return nil, nil, fixed.err
	}
	if !parts.Varies() {
		parts = nil
	}
	return &out, parts, nil
}

// staticParts renders the templates without placeholders once, into the
// call's fields, and passes on the others.
type staticParts struct {
	set *values.Set
	err error
}

// render is a static template's text.
func (s *staticParts) render(t *values.Template) string {
	b, err := vary.Static(s.set, t)
	if err != nil && s.err == nil {
		s.err = err
	}
	return string(b)
}

// text sets *field to a static template's text and returns nil, or
// returns a template that varies.
func (s *staticParts) text(t *values.Template, field *string) *values.Template {
	switch {
	case t == nil:
		return nil
	case t.Static():
		*field = s.render(t)
		return nil
	}
	return t
}

// value sets *field to a static template's rendering (text when
// stringText and the field is a string, else JSON) and returns nil, or
// returns a template that varies.
func (s *staticParts) value(t *values.Template, field *study.Value, stringText bool) *values.Template {
	switch {
	case t == nil:
		return nil
	case !t.Static():
		return t
	}
	if _, isString := field.V.(string); isString && stringText {
		*field = study.NewValue(s.render(t))
	} else {
		*field = study.NewValue(json.RawMessage(s.render(t)))
	}
	return nil
}

// headers returns the headers whose templates are static, rendered, and
// appends the others to varying, in name order.
func (s *staticParts) headers(ts map[string]*values.Template, varying *[]vary.Header) map[string]string {
	if ts == nil {
		return nil
	}
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(ts)) {
		if t := ts[k]; t.Static() {
			out[k] = s.render(t)
		} else {
			*varying = append(*varying, vary.Header{Name: k, Value: t})
		}
	}
	return out
}
