package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// kvLog is what two key-value servers saw, in the order they saw it, and
// how many requests were ever in flight at once across both.
type kvLog struct {
	mu       sync.Mutex
	events   []string
	inFlight int
	most     int
}

func (l *kvLog) enter(event string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, event)
	l.inFlight++
	l.most = max(l.most, l.inFlight)
}

func (l *kvLog) leave() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
}

func (l *kvLog) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// kvServer is a real key-value HTTP server on 127.0.0.1:
//
//	POST /kv/{key} {"value": V}  stores a new version of key: {"id": N, "key": key}
//	GET  /kv/{key}               {"key": key, "value": the latest value}
//	GET  /items/{id}             {"id": N, "key": key, "value": that version's value}
//
// Ids count up from firstID, so two servers give different ids for the
// same puts. With buggy set, reads answer the value stored before the one
// asked for (null if none), and a put to the key "boom" fails with 500.
// Every request is logged as "NAME METHOD PATH [VALUE]".
func kvServer(t *testing.T, name string, firstID int, buggy bool, log *kvLog) string {
	t.Helper()
	type version struct {
		key   string
		value json.RawMessage
	}
	var mu sync.Mutex
	items := map[int]version{}    // id → version
	history := map[string][]int{} // key → ids, oldest first
	next := firstID
	// previous is the value stored under key before id, or null.
	previous := func(key string, id int) json.RawMessage {
		ids := history[key]
		for i, x := range ids {
			if x == id && i > 0 {
				return items[ids[i-1]].value
			}
		}
		return json.RawMessage("null")
	}
	read := func(id int) (json.RawMessage, bool) {
		v, ok := items[id]
		if !ok {
			return nil, false
		}
		if buggy {
			return previous(v.key, id), true
		}
		return v.value, true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /kv/{key}", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Value json.RawMessage `json:"value"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Value) == 0 {
			http.Error(w, "want {\"value\": V}", http.StatusBadRequest)
			return
		}
		key := r.PathValue("key")
		log.enter(fmt.Sprintf("%s POST /kv/%s %s", name, key, body.Value))
		defer log.leave()
		if buggy && key == "boom" {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		mu.Lock()
		id := next
		next++
		items[id] = version{key, body.Value}
		history[key] = append(history[key], id)
		mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"id": id, "key": key})
	})
	mux.HandleFunc("GET /kv/{key}", func(w http.ResponseWriter, r *http.Request) {
		key := r.PathValue("key")
		log.enter(fmt.Sprintf("%s GET /kv/%s", name, key))
		defer log.leave()
		mu.Lock()
		defer mu.Unlock()
		ids := history[key]
		if len(ids) == 0 {
			http.NotFound(w, r)
			return
		}
		v, _ := read(ids[len(ids)-1])
		json.NewEncoder(w).Encode(map[string]any{"key": key, "value": v})
	})
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		log.enter(fmt.Sprintf("%s GET /items/%s", name, r.PathValue("id")))
		defer log.leave()
		id, err := strconv.Atoi(r.PathValue("id"))
		mu.Lock()
		defer mu.Unlock()
		v, ok := read(id)
		if err != nil || !ok {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"id": id, "key": items[id].key, "value": v})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// runKV runs the compat section of a study whose calls and compat section
// are given, against a correct key-value build a and a buggy build b.
func runKV(t *testing.T, body string) (*results.Compat, *kvLog) {
	t.Helper()
	log := &kvLog{}
	a := kvServer(t, "a", 100, false, log)
	b := kvServer(t, "b", 500, true, log)
	s := parseStudy(t, fmt.Sprintf(`
version: 1
name: key-value
targets:
  - {name: a, endpoints: {http: %q}}
  - {name: b, endpoints: {http: %q}}
%s`, a, b, body))
	eps := map[string]map[string]string{"a": {"http": a}, "b": {"http": b}}
	q := driver.NewQuerier(driver.Options{})
	t.Cleanup(func() { q.Close() })
	got, err := Run(context.Background(), s, Options{Endpoints: eps, Query: q})
	if err != nil {
		t.Fatal(err)
	}
	data, err := results.Marshal(withCompat(got))
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Validate(data); err != nil {
		t.Fatalf("results do not validate: %v", err)
	}
	return got, log
}

// kvSummary is one line per case: call, order, agreement, and each
// difference (target, path, both values) or why it was not sent.
func kvSummary(c *results.Compat) string {
	var lines []string
	for _, cs := range c.Cases {
		line := fmt.Sprintf("%s %v %s: %s", cs.Call, cs.Vars, cs.Order, cs.Agreement)
		for _, d := range cs.Differences {
			line += fmt.Sprintf(" [%s %s %s %s→%s]", d.Target, d.Kind, d.Path, d.Reference, d.Value)
		}
		if cs.Error != "" {
			line += " (" + cs.Error + ")"
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// Eight puts to one key, then a read of it. Sent 8 at a time (the
// default) the puts race, and which value each build keeps depends on
// timing; with order: listed (on the case, or for the whole section)
// they go one at a time, each to a then b, so every run finds the same
// thing: b answers the value before the last.
func TestListedOrderIsDeterministic(t *testing.T) {
	const calls = `
calls:
  put: {http: {method: POST, path: /kv/k, body: {value: "${v}"}}}
  get: {http: {path: /kv/k}}
`
	var puts []string
	for v := 1; v <= 8; v++ {
		puts = append(puts, fmt.Sprintf("put map[v:%d] listed: identical", v))
	}
	want := strings.Join(puts, "\n") + "\nget map[] parallel: content differs [b value value 8→7]"
	var order []string
	for v := 1; v <= 8; v++ {
		order = append(order, fmt.Sprintf("a POST /kv/k %d", v), fmt.Sprintf("b POST /kv/k %d", v))
	}
	order = append(order, "a GET /kv/k", "b GET /kv/k")
	for _, tc := range []struct{ name, compat string }{
		{"case order", `
compat:
  cases:
    - {call: put, vary: {v: [1, 2, 3, 4, 5, 6, 7, 8]}, order: listed, ignore: [id]}
    - {call: get, order: parallel}
`},
		{"compat order", `
compat:
  order: listed
  cases:
    - {call: put, vary: {v: [1, 2, 3, 4, 5, 6, 7, 8]}, ignore: [id]}
    - {call: get, order: parallel}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for run := range 5 {
				got, log := runKV(t, calls+tc.compat)
				if s := kvSummary(got); s != want {
					t.Fatalf("run %d:\n%s\nwant:\n%s", run+1, s, want)
				}
				if seen := log.seen(); strings.Join(seen, "\n") != strings.Join(order, "\n") {
					t.Fatalf("run %d: the servers saw\n%s\nwant\n%s", run+1, strings.Join(seen, "\n"), strings.Join(order, "\n"))
				}
				if log.most != 1 {
					t.Fatalf("run %d: %d requests in flight at once; want one at a time", run+1, log.most)
				}
			}
		})
	}
	// The default sends the puts 8 at a time: every put still reaches
	// both builds, once, and the cases say they went in parallel.
	got, log := runKV(t, calls+`
compat:
  cases:
    - {call: put, vary: {v: [1, 2, 3, 4, 5, 6, 7, 8]}, ignore: [id]}
`)
	if len(got.Cases) != 8 || len(log.seen()) != 16 {
		t.Fatalf("%d cases, %d requests; want 8 and 16", len(got.Cases), len(log.seen()))
	}
	for _, cs := range got.Cases {
		if cs.Order != string(study.OrderParallel) || cs.Agreement != Identical {
			t.Errorf("put %v: order %q, %s; want parallel, identical", cs.Vars, cs.Order, cs.Agreement)
		}
	}
}

// A put returns an id per target and the read that follows uses each
// target's own: a read of the id a put just made finds b's planted bug
// (it answers the value stored before) instead of failing on the
// reference's id, which b never issued.
func TestCapturePerTarget(t *testing.T) {
	got, log := runKV(t, `
calls:
  put: {http: {method: POST, path: "/kv/${key}", body: {value: "${v}"}}}
  item: {http: {path: "/items/${id}"}}
compat:
  cases:
    - {call: put, vary: {key: [k], v: [first]}, capture: {id: id}, ignore: [id]}
    - {call: item, ignore: [id]}
    - {call: put, vary: {key: [k], v: [second]}, capture: {id: id}, ignore: [id]}
    - {call: item, ignore: [id]}
`)
	want := `put map[key:k v:first] listed: identical
item map[] listed: content differs [b type value "first"→null]
put map[key:k v:second] listed: identical
item map[] listed: content differs [b value value "second"→"first"]`
	if s := kvSummary(got); s != want {
		t.Errorf("cases:\n%s\nwant:\n%s", s, want)
	}
	wantLog := `a POST /kv/k "first"
b POST /kv/k "first"
a GET /items/100
b GET /items/500
a POST /kv/k "second"
b POST /kv/k "second"
a GET /items/101
b GET /items/501`
	if seen := strings.Join(log.seen(), "\n"); seen != wantLog {
		t.Errorf("the servers saw\n%s\nwant\n%s", seen, wantLog)
	}
	wantCaptures := []results.Capture{{Name: "id", Target: "a", Path: "id", OK: true}, {Name: "id", Target: "b", Path: "id", OK: true}}
	for _, i := range []int{0, 2} {
		if fmt.Sprint(got.Cases[i].Captures) != fmt.Sprint(wantCaptures) {
			t.Errorf("case %d captures %+v; want %+v", i, got.Cases[i].Captures, wantCaptures)
		}
	}
	if got.Failed != 2 {
		t.Errorf("failed %d; want the two reads", got.Failed)
	}
}

// A capture that finds nothing, in every target's answer or in one's, is
// the making case's recorded error, and the cases that use it are not
// sent, with the reason; a case not sent for that captures nothing in
// turn. Nothing is sent to any target for such a case.
func TestCaptureNotFound(t *testing.T) {
	const calls = `
calls:
  put: {http: {method: POST, path: "/kv/${key}", body: {value: "${v}"}}}
  item: {http: {path: "/items/${id}"}}
  get: {http: {path: "/kv/${key2}"}}
`
	cases := []struct {
		name, compat string
		captures     []results.Capture
		summary, log string
	}{
		{
			name: "nothing at the path",
			compat: `
compat:
  cases:
    - {call: put, vary: {key: [k], v: [1]}, capture: {id: result.id}, ignore: [id]}
    - {call: item, capture: {key2: key}}
    - {call: get}
`,
			captures: []results.Capture{
				{Name: "id", Target: "a", Path: "result.id", Error: "found nothing at result.id in a's answer"},
				{Name: "id", Target: "b", Path: "result.id", Error: "found nothing at result.id in b's answer"},
			},
			summary: `put map[key:k v:1] listed: identical
item map[] listed: not sent (capture ${id} has no value for a: compat.cases[0] (put): found nothing at result.id in a's answer)
get map[] listed: not sent (capture ${key2} has no value for a: compat.cases[1] (item) was not sent: capture ${id} has no value for a: compat.cases[0] (put): found nothing at result.id in a's answer)`,
			log: "a POST /kv/k 1\nb POST /kv/k 1",
		},
		{
			name: "one target's put fails",
			compat: `
compat:
  cases:
    - {call: put, vary: {key: [boom], v: [1]}, capture: {id: id}, ignore: [id]}
    - {call: item}
`,
			captures: []results.Capture{
				{Name: "id", Target: "a", Path: "id", OK: true},
				{Name: "id", Target: "b", Path: "id", Error: "b answered http:500"},
			},
			summary: `put map[key:boom v:1] listed: status differs [b status  ok→http:500]
item map[] listed: not sent (capture ${id} has no value for b: compat.cases[0] (put): b answered http:500)`,
			log: "a POST /kv/boom 1\nb POST /kv/boom 1",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, log := runKV(t, calls+tc.compat)
			if s := kvSummary(got); s != tc.summary {
				t.Errorf("cases:\n%s\nwant:\n%s", s, tc.summary)
			}
			if fmt.Sprint(got.Cases[0].Captures) != fmt.Sprint(tc.captures) {
				t.Errorf("captures %+v; want %+v", got.Cases[0].Captures, tc.captures)
			}
			if seen := strings.Join(log.seen(), "\n"); seen != tc.log {
				t.Errorf("the servers saw\n%s\nwant\n%s", seen, tc.log)
			}
			for _, cs := range got.Cases[1:] {
				if len(cs.Answers) != 0 {
					t.Errorf("%s: not sent, yet %d answers", cs.Call, len(cs.Answers))
				}
			}
		})
	}
}

// The noise instance is bound with its own captures too, and an oracle's
// call with the reference's.
func TestCaptureNoiseAndOracle(t *testing.T) {
	log := &kvLog{}
	eps := map[string]map[string]string{
		"a":  {"http": kvServer(t, "a", 100, false, log)},
		"b":  {"http": kvServer(t, "b", 500, true, log)},
		"a2": {"http": kvServer(t, "a2", 900, false, log)},
		"o":  {"http": kvServer(t, "o", 300, false, log)},
	}
	s := parseStudy(t, fmt.Sprintf(`
version: 1
name: key-value
targets:
  - {name: a, endpoints: {http: %q}}
  - {name: b, endpoints: {http: %q}}
  - {name: a2, endpoints: {http: %q}}
  - {name: o, endpoints: {http: %q}}
calls:
  put: {http: {method: POST, path: "/kv/${key}", body: {value: "${v}"}}}
  item: {http: {path: "/items/${id}"}}
compat:
  noise: a2
  oracles: {o: {target: o}}
  cases:
    - {call: put, vary: {key: [k], v: [x]}, capture: {id: id}, ignore: [id]}
    - {call: item, ignore: [id], oracle: {name: o, call: item, checks: [{path: value, oracle: value}]}}
`, eps["a"]["http"], eps["b"]["http"], eps["a2"]["http"], eps["o"]["http"]))
	q := driver.NewQuerier(driver.Options{})
	defer q.Close()
	got, err := Run(context.Background(), s, Options{Endpoints: eps, Query: q})
	if err != nil {
		t.Fatal(err)
	}
	wantLog := `a POST /kv/k "x"
b POST /kv/k "x"
a2 POST /kv/k "x"
a GET /items/100
b GET /items/500
a2 GET /items/900
o GET /items/100`
	if seen := strings.Join(log.seen(), "\n"); seen != wantLog {
		t.Errorf("the servers saw\n%s\nwant\n%s", seen, wantLog)
	}
	var names []string
	for _, c := range got.Cases[0].Captures {
		names = append(names, c.Target)
	}
	if strings.Join(names, ",") != "a,b,a2" {
		t.Errorf("captured from %v; want a, b and the noise instance a2", names)
	}
	if item := got.Cases[1]; item.Agreement != ContentDiffers || len(item.Noise) != 0 || item.Oracle == nil || item.Oracle.Status != "http:404" {
		t.Errorf("item: %s, noise %+v, oracle %+v; want b's bug, no noise, the oracle asked for a's id (it has none)", item.Agreement, item.Noise, item.Oracle)
	}
}
