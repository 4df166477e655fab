package study

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Bind returns a copy of the call with every case variable ${NAME} in its
// request (gRPC request, JSON-RPC and WebSocket params, HTTP path and body)
// replaced by vars[NAME]. A string that is exactly one placeholder takes
// the value with its type (a number stays a number, a list a list); a
// placeholder inside a longer string takes the value's text. Target
// placeholders (${port.NAME}, ${env.NAME}, …) are left as they are; a case
// variable missing from vars is an error.
func (c *Call) Bind(vars map[string]any) (*Call, error) {
	out := *c
	var err error
	bind := func(v Value) Value {
		if err != nil || !v.IsSet() {
			return v
		}
		var b any
		b, err = bindValue(v.V, vars)
		v.V = b
		return v
	}
	if c.GRPC != nil {
		g := *c.GRPC
		g.Request = bind(g.Request)
		out.GRPC = &g
	}
	if c.JSONRPC != nil {
		j := *c.JSONRPC
		j.Params = bind(j.Params)
		out.JSONRPC = &j
	}
	if c.WS != nil {
		w := *c.WS
		w.Params = bind(w.Params)
		out.WS = &w
	}
	if c.HTTP != nil {
		h := *c.HTTP
		h.Body = bind(h.Body)
		if err == nil {
			var p any
			p, err = bindValue(h.Path, vars)
			if s, ok := p.(string); ok {
				h.Path = s
			} else if err == nil {
				h.Path = valueText(p)
			}
		}
		out.HTTP = &h
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func bindValue(v any, vars map[string]any) (any, error) {
	switch x := v.(type) {
	case string:
		names := Placeholders(x)
		if len(names) == 1 && x == "${"+names[0]+"}" && !targetName(names[0]) {
			val, ok := vars[names[0]]
			if !ok {
				return nil, fmt.Errorf("case variable ${%s} has no value", names[0])
			}
			return val, nil
		}
		var missing string
		s, err := Expand(x, func(name string) (string, bool) {
			if targetName(name) {
				return "${" + name + "}", false
			}
			val, ok := vars[name]
			if !ok {
				missing = name
			}
			return valueText(val), false
		})
		if missing != "" {
			return nil, fmt.Errorf("case variable ${%s} has no value", missing)
		}
		return s, err
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			b, err := bindValue(e, vars)
			if err != nil {
				return nil, err
			}
			out[i] = b
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			b, err := bindValue(e, vars)
			if err != nil {
				return nil, err
			}
			out[k] = b
		}
		return out, nil
	}
	return v, nil
}

// valueText is a value as it reads inside a string: strings as they are,
// integers in decimal, anything else as JSON.
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// CaseVars lists the case variables the call's request uses, in order of
// first use.
func (c *Call) CaseVars() []string {
	var names []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			for _, n := range Placeholders(x) {
				if !targetName(n) && !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, k := range sortedKeys(x) {
				walk(x[k])
			}
		}
	}
	if c.GRPC != nil {
		walk(c.GRPC.Request.V)
	}
	if c.JSONRPC != nil {
		walk(c.JSONRPC.Params.V)
	}
	if c.WS != nil {
		walk(c.WS.Params.V)
	}
	if c.HTTP != nil {
		walk(c.HTTP.Path)
		walk(c.HTTP.Body.V)
	}
	return names
}
