package study

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// ResolveEnv resolves ${env.NAME} in every string of a call where a study
// may use it, and nowhere else; $${ stays a literal ${; the values it
// resolved are returned; the study's own call is not changed.
func TestResolveEnv(t *testing.T) {
	s, err := Parse("env.yaml", []byte(`
version: 1
name: env
targets: [{name: a, endpoints: {http: "http://127.0.0.1:1/", grpc: "127.0.0.1:1", ws: "ws://127.0.0.1:1/", tcp: "127.0.0.1:1"}}]
calls:
  h: {http: {method: POST, path: "/p/${env.K}", headers: {Authorization: "Bearer ${env.K}"}, body: "b=${env.K} $${env.K}"}}
  j: {jsonrpc: {method: "m_${env.K}", params: ["${env.K}", {n: "${env.K}"}, 7], path: "/r/${env.K}", headers: {X: "${env.K}"}}}
  g: {grpc: {method: a.B/C, metadata: {authorization: "Bearer ${env.K}"}, request: {x: "${env.K}"}}}
  w: {ws: {method: "${env.K}", params: ["${env.K}"], path: "/${env.K}"}}
  t: {tcp: {send: "AUTH ${env.K}\r\n", until: "$${env.K}"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(name string) (string, bool) { return map[string]string{"K": "s3cret"}[name], name == "K" }
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	want := map[string]string{
		"h": `{"method":"POST","path":"/p/s3cret","headers":{"Authorization":"Bearer s3cret"},"body":"b=s3cret ${env.K}"}`,
		"j": `{"method":"m_s3cret","params":["s3cret",{"n":"s3cret"},7],"path":"/r/s3cret","headers":{"X":"s3cret"}}`,
		"g": `{"method":"a.B/C","metadata":{"authorization":"Bearer s3cret"},"request":{"x":"s3cret"}}`,
		"w": `{"method":"s3cret","params":["s3cret"],"path":"/s3cret"}`,
		// until is how an answer ends, not sent: as written (a ${env.K}
		// there is an error: testdata/errors/env.yaml)
		"t": `{"send":"AUTH s3cret\r\n","until":"$${env.K}"}`,
	}
	for name, w := range want {
		before := js(s.Calls[name])
		c, secrets, err := s.Calls[name].ResolveEnv(lookup)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got string
		switch {
		case c.HTTP != nil:
			got = js(map[string]any{"method": c.HTTP.Method, "path": c.HTTP.Path, "headers": c.HTTP.Headers, "body": c.HTTP.Body.V})
		case c.JSONRPC != nil:
			got = js(map[string]any{"method": c.JSONRPC.Method, "params": c.JSONRPC.Params.V, "path": c.JSONRPC.Path, "headers": c.JSONRPC.Headers})
		case c.GRPC != nil:
			got = js(map[string]any{"method": c.GRPC.Method, "metadata": c.GRPC.Metadata, "request": c.GRPC.Request.V})
		case c.WS != nil:
			got = js(map[string]any{"method": c.WS.Method, "params": c.WS.Params.V, "path": c.WS.Path})
		case c.TCP != nil:
			got = js(map[string]any{"send": c.TCP.Send, "until": c.TCP.Until})
		}
		var a, b any
		json.Unmarshal([]byte(got), &a)
		json.Unmarshal([]byte(w), &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s resolved to %s; want %s", name, got, w)
		}
		if !reflect.DeepEqual(secrets, []string{"s3cret"}) {
			t.Errorf("%s: resolved %q; want [s3cret]", name, secrets)
		}
		if js(s.Calls[name]) != before {
			t.Errorf("%s: ResolveEnv changed the study's call", name)
		}
	}
	_, _, err = s.Calls["j"].ResolveEnv(func(string) (string, bool) { return "", false })
	if err == nil || err.Error() != "jsonrpc.params[0]: environment variable K is not set" {
		t.Errorf("an unset variable: %v", err)
	}
}

// A call made from tandem load's flags is sent as written: Literal then
// ResolveEnv gives back every string as it was.
func TestLiteralCall(t *testing.T) {
	odd := "a ${env.HOME} $${b} ${ ${}"
	c := &Call{HTTP: &HTTPCall{Path: odd, Headers: map[string]string{"X": odd}, Body: NewValue(map[string]any{"k": []any{odd, int64(1)}})}}
	lit := c.Literal()
	sent, secrets, err := lit.ResolveEnv(func(string) (string, bool) { return "RESOLVED", true })
	if err != nil || len(secrets) != 0 {
		t.Fatalf("ResolveEnv of a literal call: %v, resolved %q", err, secrets)
	}
	if sent.HTTP.Path != odd || sent.HTTP.Headers["X"] != odd || !reflect.DeepEqual(sent.HTTP.Body.V, c.HTTP.Body.V) {
		t.Errorf("sent %q, %q, %v; want each as written, %q", sent.HTTP.Path, sent.HTTP.Headers["X"], sent.HTTP.Body.V, odd)
	}
}

// One validate run lists the unset variables among the study's other
// errors, in file order; ReadEnv with every variable set is Read.
func TestReadEnvListsAll(t *testing.T) {
	f := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(f, []byte(`version: 1
name: env
targets:
  - name: a
    endpoints: {http: "http://127.0.0.1:1/"}
calls:
  ping: {http: {headers: {Authorization: "Bearer ${env.REL_UNSET_TOKEN}"}}}
scenarios:
  - {name: s, call: nope, load: {concurrency: 1}}
metrics:
  prometheus: "${env.REL_UNSET_PROM}"
`), 0o644)
	_, err := ReadEnv(f, func(string) (string, bool) { return "", false })
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 3 {
		t.Fatalf("ReadEnv = %v; want 3 errors", err)
	}
	for i, want := range []string{
		`:7:42: calls.ping.http.headers.Authorization: environment variable REL_UNSET_TOKEN is not set`,
		`:9:21: scenarios[0].call: undefined call "nope"`,
		`:11:15: metrics.prometheus: environment variable REL_UNSET_PROM is not set`,
	} {
		if !strings.Contains(list[i].Error(), want) {
			t.Errorf("error %d: %s; want %s", i, list[i], want)
		}
	}
	if _, err := Read(f); err == nil || strings.Contains(err.Error(), "REL_UNSET") {
		t.Errorf("Read = %v; want the study's error alone", err)
	}
	os.WriteFile(f, []byte(`version: 1
name: env
targets: [{name: a, endpoints: {http: "http://127.0.0.1:1/"}}]
calls:
  ping: {http: {headers: {Authorization: "Bearer ${env.REL_UNSET_TOKEN}"}}}
`), 0o644)
	if _, err := ReadEnv(f, func(string) (string, bool) { return "x", true }); err != nil {
		t.Errorf("ReadEnv with every variable set = %v", err)
	}
}
