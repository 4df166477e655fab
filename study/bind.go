package study

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Bind returns a copy of the call with every case variable ${NAME} in its
// request (gRPC request, JSON-RPC and WebSocket params, HTTP path and body)
// replaced by vars[NAME]. A string that is exactly one placeholder takes
// the value with its type (a number stays a number, a list a list); a
// placeholder inside a longer string takes the value's text. Target
// placeholders (${port.NAME}, ${env.NAME}, …) are left as they are; a case
// variable missing from vars is an error. The call that Bind returns is
// still a template for ResolveEnv: "$${" stays as it is, and a "${" in a
// value bound is escaped, so that a case's value is sent as it is.
func (c *Call) Bind(vars map[string]any) (*Call, error) {
	out, req := c.withRequestCopy()
	if req == nil {
		return out, nil
	}
	for _, f := range req.fields() {
		switch {
		case f.value != nil && f.value.IsSet():
			b, err := bindValue(f.value.V, vars)
			if err != nil {
				return nil, err
			}
			f.value.V = b
		case f.text != nil:
			p, err := bindValue(*f.text, vars)
			if err != nil {
				return nil, err
			}
			if s, ok := p.(string); ok {
				*f.text = s
			} else {
				*f.text = valueText(p)
			}
		}
	}
	return out, nil
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
			return escapeValue(val), nil
		}
		var missing string
		s, err := expand(x, func(name string) (string, bool) {
			if targetName(name) {
				return "${" + name + "}", false
			}
			val, ok := vars[name]
			if !ok {
				missing = name
			}
			return escape(valueText(val)), false
		}, true)
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

// escapeValue is v with every string in it escaped (see escape).
func escapeValue(v any) any {
	switch x := v.(type) {
	case string:
		return escape(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = escapeValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = escapeValue(e)
		}
		return out
	}
	return v
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
// first use (its values are none).
func (c *Call) CaseVars() []string {
	var names []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			for _, n := range Placeholders(x) {
				if !targetName(n) && !c.isValue(n) && !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k])
			}
		}
	}
	if req := c.request(); req != nil {
		for _, f := range req.fields() {
			if f.value != nil {
				walk(f.value.V)
			} else if f.text != nil {
				walk(*f.text)
			}
		}
	}
	return names
}
