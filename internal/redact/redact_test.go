package redact

import (
	"reflect"
	"strings"
	"testing"
)

func TestURLs(t *testing.T) {
	cases := []struct{ in, want string }{
		{"amqp://guest:guest@127.0.0.1:5672/", "amqp://guest:xxx@127.0.0.1:5672/"},
		{"amqps://u:p%40ss@broker/vhost", "amqps://u:xxx@broker/vhost"},
		{"dial amqp://a:one@h/ and http://b:two@h:8080/x failed", "dial amqp://a:xxx@h/ and http://b:xxx@h:8080/x failed"},
		{"amqp://guest@127.0.0.1:5672/", "amqp://guest@127.0.0.1:5672/"},
		{"http://127.0.0.1:8080/ping", "http://127.0.0.1:8080/ping"},
		{"no url: user:password@host", "no url: user:password@host"},
		{"", ""},
	}
	for _, c := range cases {
		if got := URLs(c.in); got != c.want {
			t.Errorf("URLs(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// Copy hides every string of a value, wherever it is (fields, lists, map
// keys and values, nested), leaves the source as it was and every number
// whole.
func TestCopy(t *testing.T) {
	type inner struct {
		URL  string            `json:"url"`
		Vars map[string]any    `json:"vars"`
		Tags map[string]string `json:"tags"`
	}
	type outer struct {
		Error string  `json:"error"`
		Big   int64   `json:"big"`
		Inner []inner `json:"inner"`
		Ptr   *inner  `json:"ptr"`
	}
	hide := func(s string) string { return URLs(strings.ReplaceAll(s, "s3cret-value", Hidden)) }
	src := outer{Error: "exited; last output: token s3cret-value", Big: 1<<62 + 1,
		Inner: []inner{{URL: "http://m:pw9@127.0.0.1:1/metrics", Vars: map[string]any{"k": []any{"a s3cret-value", 3.5}}, Tags: map[string]string{"s3cret-value": "v"}}},
		Ptr:   &inner{URL: "amqp://u:s3cret-value@h/"}}
	var got outer
	if err := Copy(&got, src, hide); err != nil {
		t.Fatal(err)
	}
	want := outer{Error: "exited; last output: token xxx", Big: 1<<62 + 1,
		Inner: []inner{{URL: "http://m:xxx@127.0.0.1:1/metrics", Vars: map[string]any{"k": []any{"a xxx", 3.5}}, Tags: map[string]string{"xxx": "v"}}},
		Ptr:   &inner{URL: "amqp://u:xxx@h/"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Copy = %+v\nwant %+v", got, want)
	}
	if src.Error != "exited; last output: token s3cret-value" || src.Inner[0].Tags["s3cret-value"] != "v" {
		t.Errorf("the source was changed: %+v", src)
	}
	if err := Copy(&got, make(chan int), hide); err == nil {
		t.Error("a value JSON cannot hold was copied")
	}
}
