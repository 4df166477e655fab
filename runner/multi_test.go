package runner

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
	"github.com/tandem-bench/tandem/values"
)

// partsOf are the part scenarios of the scenario named whole, in order.
func partsOf(res *results.Results, whole string) []results.Scenario {
	var out []results.Scenario
	for _, sc := range res.Scenarios {
		if sc.Part != nil && sc.Part.Of == whole {
			out = append(out, sc)
		}
	}
	return out
}

// addsUp checks that the parts' rounds add up to the whole's, round by
// round: requests, ok, unfinished and errors by status (a mix's parts
// split its requests), or that each part has every request (a flow's
// steps are each pass's).
func addsUp(t *testing.T, whole results.Scenario, parts []results.Scenario, split bool) {
	t.Helper()
	for i, rd := range whole.Rounds {
		var req, ok, unfinished int64
		errs := map[string]int64{}
		for _, p := range parts {
			if len(p.Rounds) != len(whole.Rounds) {
				t.Fatalf("part %s has %d rounds, the whole %d", p.Name, len(p.Rounds), len(whole.Rounds))
			}
			prd := p.Rounds[i]
			if prd.Target != rd.Target || prd.Round != rd.Round {
				t.Fatalf("part %s's round %d is round %d on %s; want round %d on %s", p.Name, i, prd.Round, prd.Target, rd.Round, rd.Target)
			}
			if !split && prd.Requests != rd.Requests {
				t.Errorf("step %s: %d requests in round %d on %s; want the %d passes", p.Name, prd.Requests, rd.Round, rd.Target, rd.Requests)
			}
			req, ok, unfinished = req+prd.Requests, ok+prd.OK, unfinished+prd.Unfinished
			for k, v := range prd.Errors {
				errs[k] += v
			}
		}
		if split && (req != rd.Requests || ok != rd.OK || unfinished != rd.Unfinished || !maps.Equal(errs, rd.Errors)) {
			t.Errorf("round %d on %s: parts add up to %d requests, %d ok, %d unfinished, errors %v; the whole %d, %d, %d, %v",
				rd.Round, rd.Target, req, ok, unfinished, errs, rd.Requests, rd.OK, rd.Unfinished, rd.Errors)
		}
	}
}

// A 90/10 mix of get and put on two targets (b slower on put): every run
// of both sends one sequence of calls, request i the call the seeded
// picker draws for it and its values; results.json records the mix and,
// after it, each call as a scenario of its own, whose rounds add up to
// the mix's and which are judged in the run's family; the mix's picks'
// digest is that of the most requests a run sent.
func TestMixInRun(t *testing.T) {
	tooltest.Long(t)
	a := newConnLog(t)
	slowPut := newConnLog(t)
	inner := slowPut.srv.Config.Handler
	slowPut.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			time.Sleep(2 * time.Millisecond) // the slower put of b
		}
		inner.ServeHTTP(w, r)
	})
	src := `version: 1
name: mix
seed: 5
defaults: {rounds: 2, warmup: 50ms}
targets:
  - {name: a, endpoints: {http: "` + a.srv.URL + `/"}}
  - {name: b, endpoints: {http: "` + slowPut.srv.URL + `/"}}
calls:
  get:
    http: {path: "/r/${n}"}
    values: {n: {seq: {}}}
  put:
    http: {method: POST, path: "/w/${n}", body: x}
    values: {n: {seq: {}}}
scenarios:
  - {name: rw, calls: [{call: get, weight: 90}, {call: put, weight: 10}], load: {concurrency: 1}, requests: 400}
`
	s := runtest.Parse(t, src)
	if n := Comparisons(s, Options{}); n != 3 {
		t.Errorf("%d comparisons planned; want 3 (the mix, get and put, each b against a)", n)
	}
	progress := &runtest.Progress{}
	o := options(t, progress)
	if _, err := Run(context.Background(), s, o); err != nil {
		t.Fatalf("Run: %v\n%s", err, progress)
	}
	res := readResults(t, o.Out)
	if len(res.Scenarios) != 3 {
		t.Fatalf("%d scenarios; want the mix and its 2 calls", len(res.Scenarios))
	}
	whole, parts := res.Scenarios[0], partsOf(res, "rw")
	if whole.Kind != results.KindMix || len(parts) != 2 || parts[0].Name != "rw/get" || parts[1].Name != "rw/put" {
		t.Fatalf("scenarios %q (kind %q), parts %d; want rw (mix), rw/get, rw/put", whole.Name, whole.Kind, len(parts))
	}
	if p := parts[1].Part; p.Index != 1 || p.Weight != 10 || p.Share != 0.1 || parts[1].Call != "put" {
		t.Errorf("put's part %+v, call %s", p, parts[1].Call)
	}
	if len(whole.Rounds) != 4 {
		t.Fatalf("%d rounds; want 2 on each target", len(whole.Rounds))
	}
	for _, rd := range whole.Rounds {
		if rd.Requests != 400 || rd.OK != 400 {
			t.Errorf("round %d on %s: %d requests, %d ok; want 400", rd.Round, rd.Target, rd.Requests, rd.OK)
		}
	}
	addsUp(t, whole, parts, true)
	alpha := s.Defaults.Policy().Alpha / 3 // each comparison's share of the family's
	for _, p := range append([]results.Scenario{whole}, parts...) {
		if len(p.Comparisons) != 1 || p.Comparisons[0].Candidate != "b" || len(p.Summary) != 2 {
			t.Fatalf("%s: %d comparisons, %d summary rows; want b against a, and a row each", p.Name, len(p.Comparisons), len(p.Summary))
		}
		if e := p.Comparisons[0].Estimate; e == nil || math.Abs(e.Alpha-alpha) > 1e-12 {
			t.Errorf("%s: estimate %+v; want one at α %g, a third of the family's", p.Name, e, alpha)
		}
	}
	if f := res.Family; f == nil || f.Planned != 3 {
		t.Errorf("family %+v; want 3 planned", f)
	}
	// both targets: the same sequence in every run, each request the
	// call the picker draws
	picker, err := values.NewPicker(s.Seed, driver.MixPickerName("rw"), []float64{90, 10})
	if err != nil {
		t.Fatal(err)
	}
	runsA, runsB := a.take(), slowPut.take()
	if len(runsA) != 3 || len(runsB) != 3 {
		t.Fatalf("runs: %d on a, %d on b; want the warm-up and 2 rounds", len(runsA), len(runsB))
	}
	longest := 0
	for _, run := range append(runsA, runsB...) {
		longest = max(longest, len(run))
		for i, uri := range run {
			want := fmt.Sprintf("/r/%d", i)
			if picker.Pick(uint64(i)) == 1 {
				want = fmt.Sprintf("/w/%d", i)
			}
			if uri != want {
				t.Fatalf("request %d is %s; want %s, the call the mix draws for it", i, uri, want)
			}
		}
	}
	if !slices.EqualFunc(runsA[1:], runsB[1:], slices.Equal) {
		t.Error("a's measured runs differ from b's")
	}
	puts := 0
	for _, uri := range runsA[1] {
		if strings.HasPrefix(uri, "/w/") {
			puts++
		}
	}
	if int64(puts) != parts[1].Rounds[0].Requests && int64(puts) != parts[1].Rounds[1].Requests {
		t.Errorf("a round's run sent %d puts; the put part counts %d and %d", puts, parts[1].Rounds[0].Requests, parts[1].Rounds[1].Requests)
	}
	want := picker.Digest(uint64(longest))
	if whole.Picks == nil || *whole.Picks != (results.ValuesDigest{Requests: want.Requests, SHA256: want.SHA256}) {
		t.Errorf("picks %+v; want %+v", whole.Picks, want)
	}
	if parts[0].Values == nil || parts[1].Values == nil {
		t.Errorf("the calls' values digests: %+v, %+v", parts[0].Values, parts[1].Values)
	}
	if !strings.Contains(progress.String(), "rw: a mix of get (weight 90), put (weight 10)") {
		t.Errorf("the progress does not describe the mix:\n%s", progress)
	}
}

// kvTarget is a loopback key-value store: POST /put/N stores a key and
// answers it ({"key": "kN"}), GET /get/KEY answers 200 for a key stored,
// 404 for another. With lossy, put N answers no key when N mod 4 = 3.
type kvTarget struct {
	srv   *httptest.Server
	mu    sync.Mutex
	keys  map[string]bool
	puts  int
	gets  map[int]int // by status
	lossy bool
}

func newKVTarget(t *testing.T, lossy bool) *kvTarget {
	kv := &kvTarget{keys: map[string]bool{}, gets: map[int]int{}, lossy: lossy}
	kv.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		kv.mu.Lock()
		defer kv.mu.Unlock()
		route, arg, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		switch route {
		case "put":
			n, _ := strconv.Atoi(arg)
			kv.puts++
			if kv.lossy && n%4 == 3 {
				fmt.Fprintf(w, `{"n":%d}`, n)
				return
			}
			key := fmt.Sprintf("k%d-%d", n, kv.puts)
			kv.keys[key] = true
			fmt.Fprintf(w, `{"n":%d,"key":%q}`, n, key)
		case "get":
			status := http.StatusOK
			if !kv.keys[arg] {
				status = http.StatusNotFound
			}
			kv.gets[status]++
			w.WriteHeader(status)
		}
	}))
	t.Cleanup(kv.srv.Close)
	return kv
}

// A flow put → get on two targets: the get reads back the key its put
// wrote (captured from the answer); on b, whose every fourth put answers
// no key, those passes fail with status capture, counted for the flow and
// for both steps, and their gets are never sent. results.json records the
// flow and each step as a scenario of its own, each step with every pass.
func TestFlowInRun(t *testing.T) {
	tooltest.Long(t)
	a, b := newKVTarget(t, false), newKVTarget(t, true)
	src := `version: 1
name: flow
seed: 5
defaults: {rounds: 2, warmup: 50ms}
targets:
  - {name: a, endpoints: {http: "` + a.srv.URL + `/"}}
  - {name: b, endpoints: {http: "` + b.srv.URL + `/"}}
calls:
  put:
    http: {method: POST, path: "/put/${n}", body: x}
    values: {n: {seq: {}}}
  get: {http: {path: "/get/${key}"}}
scenarios:
  - name: wr
    flow: [{call: put, capture: {key: key}}, {call: get}]
    load: {concurrency: 2}
    requests: 200
`
	s := runtest.Parse(t, src)
	progress := &runtest.Progress{}
	o := options(t, progress)
	if _, err := Run(context.Background(), s, o); err != nil {
		t.Fatalf("Run: %v\n%s", err, progress)
	}
	res := readResults(t, o.Out)
	whole, parts := res.Scenarios[0], partsOf(res, "wr")
	if whole.Kind != results.KindFlow || len(parts) != 2 || parts[0].Name != "wr/1.put" || parts[1].Name != "wr/2.get" {
		t.Fatalf("scenario %s (kind %q), %d parts; want wr (flow), wr/1.put, wr/2.get", whole.Name, whole.Kind, len(parts))
	}
	addsUp(t, whole, parts, false)
	for i, rd := range whole.Rounds {
		put, get := parts[0].Rounds[i], parts[1].Rounds[i]
		wantErr := map[string]int64{}
		if rd.Target == "b" {
			wantErr[driver.StatusCapture] = 50
		}
		if rd.Requests != 200 || rd.OK != 200-wantErr[driver.StatusCapture] || !maps.Equal(rd.Errors, wantErr) ||
			!maps.Equal(put.Errors, wantErr) || !maps.Equal(get.Errors, wantErr) || get.OK != rd.OK {
			t.Errorf("round %d on %s: %d passes, %d ok, errors %v; put errors %v, get %d ok, errors %v; want 200 passes, capture failures %v",
				rd.Round, rd.Target, rd.Requests, rd.OK, rd.Errors, put.Errors, get.OK, get.Errors, wantErr)
		}
	}
	for _, kv := range []*kvTarget{a, b} {
		var measured int64 // the measured rounds' gets; the warm-ups' too came to the server
		for _, rd := range parts[1].Rounds {
			if (rd.Target == "b") == kv.lossy {
				measured += rd.OK
			}
		}
		kv.mu.Lock()
		if int64(kv.gets[http.StatusOK]) < measured || len(kv.gets) != 1 || kv.gets[http.StatusOK] > kv.puts {
			t.Errorf("%d puts, gets by status %v; want each get of a key a put wrote, at least the %d measured", kv.puts, kv.gets, measured)
		}
		kv.mu.Unlock()
	}
	if parts[0].Values == nil || parts[1].Values != nil {
		t.Errorf("values digests: put %+v, get %+v; want put's alone", parts[0].Values, parts[1].Values)
	}
}

// The server-bound mark of a mix is judged on its calls' transport (one
// for all of them); a flow's is not judged, a pass being several round
// trips.
func TestServerBoundOfMixAndFlow(t *testing.T) {
	s := runtest.Parse(t, `version: 1
name: sb
targets:
  - {name: a, endpoints: {http: "http://127.0.0.1:1/"}}
  - {name: b, endpoints: {http: "http://127.0.0.1:1/"}}
calls:
  ping: {http: {path: /ping}}
  get: {http: {path: /get/1}}
  put: {http: {method: POST, path: /put/1, body: x}}
  read: {http: {path: "/read/${k}"}}
scenarios:
  - {name: rw, calls: [{call: get}, {call: put}], load: {concurrency: 2}, requests: 10}
  - {name: wr, flow: [{call: put, capture: {k: key}}, {call: read}], load: {concurrency: 2}, requests: 10}
`)
	base := &live{spec: s.Target("a"), res: &results.Target{Name: "a", RTTNs: int64(time.Millisecond), RTTCall: "ping"}}
	r := &runner{s: s, live: []*live{base}}
	round := results.Round{Target: "a", Concurrency: 2, Sample: results.Sample{Requests: 10, OK: 10, DurationNs: int64(10 * time.Millisecond)}}
	out := &results.Scenario{Load: results.Load{Model: "closed"}, Rounds: []results.Round{round}}
	// 1 ms a round trip, 2 in flight, 1 ms a request: bound
	if bound, why := r.serverBound(&s.Scenarios[0], out, 2); !bound || why != "" {
		t.Errorf("mix: bound %v (%q); want bound, judged on its calls' transport", bound, why)
	}
	if bound, why := r.serverBound(&s.Scenarios[1], out, 2); bound || !strings.Contains(why, "a flow's request is a pass of several round trips") {
		t.Errorf("flow: bound %v (%q); want not judged", bound, why)
	}
}
