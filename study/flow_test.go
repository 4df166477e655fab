package study

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/values"
)

const flowStudy = `version: 1
name: mixes and flows
targets:
  - name: a
    endpoints: {http: "http://127.0.0.1:2/"}
calls:
  get:
    jsonrpc: {method: get, params: ["${k}"]}
    values: {k: {zipf: {n: 100, s: 1.1}}}
  put: {jsonrpc: {method: put, params: [k, v]}}
  login: {http: {method: POST, path: /login, body: {user: u}}}
  item:
    http:
      path: "/items/${id}?n=${n}"
      headers: {Authorization: "Bearer ${token}", X-Trace: "${env.HOME}"}
    values: {n: {seq: {}}}
scenarios:
  - name: rw
    calls: [{call: get, weight: 90}, {call: put}]
    load: {concurrency: 4}
  - name: journey
    flow:
      - {call: login, capture: {token: "header:X-Token", id: "items[0].id"}}
      - {call: item}
      - {call: item, capture: {id: next}}
    load: {concurrency: 2}
`

// A mix's weights default to 1; a flow's step call gets a slot for each
// name an earlier step captures that it uses (request and headers), its
// values kept, and nothing for a step before the capture.
func TestMixAndFlow(t *testing.T) {
	s, err := parse("flow.yaml", []byte(flowStudy), goldenLimits)
	if err != nil {
		t.Fatal(err)
	}
	rw, journey := &s.Scenarios[0], &s.Scenarios[1]
	if !rw.IsMix() || rw.IsFlow() || rw.Calls[0].Weight != 90 || rw.Calls[1].Weight != 1 {
		t.Errorf("mix %+v", rw.Calls)
	}
	if got := strings.Join(journey.CallNames(), ","); got != "login,item" || !journey.IsFlow() {
		t.Errorf("flow calls %s", got)
	}
	if s.Kind(journey) != KindClosed {
		t.Errorf("kind %s", s.Kind(journey))
	}
	first, err := s.StepCall(journey, 0)
	if err != nil || first != s.Calls["login"] {
		t.Errorf("step 1 is its call as it is: %v", err)
	}
	item, err := s.StepCall(journey, 1)
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(maps.Keys(item.ValueSpecs))
	if strings.Join(names, ",") != "id,n,token" || item.ValueSpecs["id"] != (values.Slot{}) || item.ValueSpecs["token"] != (values.Slot{}) {
		t.Errorf("step 2's values %v", item.ValueSpecs)
	}
	if len(s.Calls["item"].ValueSpecs) != 1 {
		t.Errorf("the study's call changed: %v", s.Calls["item"].ValueSpecs)
	}
	caps, err := journey.Flow[0].Captures()
	if err != nil || len(caps) != 2 || caps[0].Name != "id" || strings.Join(caps[0].Path, " ") != "items [0] id" || caps[1].Header != "X-Token" {
		t.Errorf("captures %+v, %v", caps, err)
	}
	// templates compile with the slots: what the driver renders
	set, err := values.Open(t.Context(), 1, item.ValueSpecs)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	resolved, _, err := item.ResolveEnv(func(string) (string, bool) { return "/home", true })
	if err != nil {
		t.Fatal(err)
	}
	tm, err := resolved.Compile(set)
	if err != nil || tm.Path == nil || tm.Headers["Authorization"] == nil {
		t.Fatalf("compile: %+v, %v", tm, err)
	}
	r := set.NewRenderer()
	r.SetSlotText("token", []byte("t0k"))
	r.SetSlotJSON("id", []byte(`"a/b"`))
	path, err := tm.Path.Append(nil, r, 7, time.Time{})
	if err != nil || string(path) != "/items/a%2Fb?n=7" {
		t.Errorf("path %q, %v", path, err)
	}
	hdr, err := tm.Headers["Authorization"].Append(nil, r, 7, time.Time{})
	if err != nil || string(hdr) != "Bearer t0k" {
		t.Errorf("header %q, %v", hdr, err)
	}
}
