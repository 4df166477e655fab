package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tandem load --mix: each request is one of the file's calls, drawn by
// weight from --seed; each call renders its own values; the run's parts
// (one per call) add up to it; the text report names each call. The same
// seed sends the same sequence again, another seed another one.
func TestLoadMix(t *testing.T) {
	dir := t.TempDir()
	mix := filepath.Join(dir, "mix.yaml")
	os.WriteFile(mix, []byte(`calls:
  get: {http: {path: "/get/${k}"}, values: {k: {zipf: {n: 10, s: 1.1}}}}
  put: {http: {method: POST, path: /put, body: "v${n}"}, values: {n: {seq: {}}}}
mix: [{call: get, weight: 90}, {call: put, weight: 10}]
`), 0o644)
	url, take := uriLog(t)
	run := func(seed string) (sample struct {
		Requests, OK int64
		Parts        []struct{ Requests, OK int64 }
	}, sent []string) {
		t.Helper()
		code, out, stderr := tandem(t, "load", url+"/", "--mix", mix, "--requests", "2000", "--concurrency", "1", "--seed", seed, "--format", "json")
		if err := json.Unmarshal([]byte(out), &sample); err != nil || code != 0 {
			t.Fatalf("exit %d, stderr %q, output %q: %v", code, stderr, out, err)
		}
		if !strings.Contains(stderr, "mix: get 90 %, put 10 %, drawn from seed "+seed) {
			t.Errorf("stderr %q does not name the mix", stderr)
		}
		return sample, take()[1:] // the first is the reachability check's request 0
	}
	s, sent := run("1")
	if s.Requests != 2000 || s.OK != 2000 || len(s.Parts) != 2 || s.Parts[0].Requests+s.Parts[1].Requests != 2000 ||
		s.Parts[0].OK+s.Parts[1].OK != 2000 {
		t.Fatalf("results %+v; want 2000 requests, all ok, in two parts that add up", s)
	}
	puts := 0
	for _, r := range sent {
		switch {
		case strings.HasPrefix(r, "/put v"):
			puts++
		case !strings.HasPrefix(r, "/get/") || strings.HasSuffix(r, "/get/ "):
			t.Fatalf("server got %q: neither call as its values render it", r)
		}
	}
	if len(sent) != 2000 || int64(puts) != s.Parts[1].Requests || puts < 140 || puts > 260 {
		t.Errorf("server got %d requests, %d puts; the results say %d puts (about 200 expected of 2000 at 10 %%)", len(sent), puts, s.Parts[1].Requests)
	}
	if _, again := run("1"); strings.Join(again, "\n") != strings.Join(sent, "\n") {
		t.Error("the same seed sent another sequence")
	}
	if _, other := run("2"); strings.Join(other, "\n") == strings.Join(sent, "\n") {
		t.Error("another seed sent the same sequence")
	}
	code, out, stderr := tandem(t, "load", url+"/", "--mix", mix, "--requests", "50")
	if code != 0 || !strings.Contains(out, "get") || !strings.Contains(out, "put") {
		t.Errorf("text report: exit %d, stderr %q, output %q; want a line per call", code, stderr, out)
	}
}

// A bad mix file, a flag that describes a request beside --mix, or a
// target of another protocol is bad input (exit 2) that says where.
func TestLoadMixErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	good := write("good.yaml", "calls:\n  a: {http: {path: /a}}\n  b: {http: {path: /b}}\nmix: [{call: a}, {call: b}]\n")
	one := write("one.yaml", "calls:\n  a: {http: {path: /a}}\nmix: [{call: a}]\n")
	protos := write("protos.yaml", "calls:\n  a: {http: {path: /a}}\n  b: {jsonrpc: {method: m}}\nmix: [{call: a}, {call: b}]\n")
	undefined := write("undefined.yaml", "calls:\n  a: {http: {path: /a}}\nmix: [{call: a}, {call: c, weight: 0}]\n")
	caseVar := write("casevar.yaml", "calls:\n  a: {http: {path: \"/a/${x}\"}}\n  b: {http: {path: /b}}\nmix: [{call: a}, {call: b}]\n")
	env := write("env.yaml", "calls:\n  a: {http: {path: /a, headers: {X: \"${env.HOME}\"}}}\n  b: {http: {path: /b}}\nmix: [{call: a}, {call: b}]\n")
	url, _ := uriLog(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{url + "/", "--mix", one}, one + ":3:6: mix: 1 call"},
		{[]string{url + "/", "--mix", protos}, protos + ":4:25: mix[1].call: call b is jsonrpc, call a http"},
		{[]string{url + "/", "--mix", undefined}, undefined + ":3:25: mix[1].call: undefined call \"c\""},
		{[]string{url + "/", "--mix", undefined}, undefined + ":3:36: mix[1].weight: weight 0"},
		{[]string{url + "/", "--mix", caseVar}, caseVar + ":2:6: calls.a: call a uses case variable ${x}"},
		{[]string{url + "/", "--mix", env}, "${env.HOME} is not resolved here"},
		{[]string{url + "/", "--mix", good, "--data", "x"}, "--mix and --data"},
		{[]string{url + "/", "--mix", good, "--local-workers", "2"}, "--mix: a run on one machine"},
		{[]string{"grpc://" + strings.TrimPrefix(url, "http://"), "--mix", good}, "http calls go to http(s)://HOST/"},
		{[]string{url + "/", "--mix", filepath.Join(dir, "none.yaml")}, "--mix: open "},
	} {
		code, _, stderr := tandem(t, append([]string{"load"}, c.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("tandem load %q: exit %d, stderr %q; want exit %d saying %q", c.args, code, stderr, exitBadInput, c.want)
		}
	}
}
