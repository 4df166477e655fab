package study

import (
	"fmt"
	"reflect"
	"testing"
)

func fmtAny(v any) string { return fmt.Sprintf("%#v", v) }

func TestExpand(t *testing.T) {
	vars := map[string]string{"port.grpc": "9090", "env.HOME": "/root", "tandem": "/bin/tandem", "X": "x"}
	lookup := func(name string) (string, bool) {
		v, ok := vars[name]
		return v, !ok
	}
	cases := []struct {
		in, want, err string
	}{
		{"plain", "plain", ""},
		{"127.0.0.1:${port.grpc}", "127.0.0.1:9090", ""},
		{"${tandem} ${env.HOME}/${X}${X}", "/bin/tandem /root/xx", ""},
		{"cost $${literal} and $5", "cost ${literal} and $5", ""},
		{"${port.grpc", "", `unclosed placeholder in "${port.grpc"`},
		{"a ${} b", "", "empty placeholder ${}"},
		{"${port.http}", "", "unknown placeholder ${port.http}"},
	}
	for _, c := range cases {
		got, err := Expand(c.in, lookup)
		errStr := ""
		if err != nil {
			errStr = err.Error()
		}
		if got != c.want || errStr != c.err {
			t.Errorf("Expand(%q) = %q, %q; want %q, %q", c.in, got, errStr, c.want, c.err)
		}
	}
	if got := Placeholders("${a} x ${b.c}"); !reflect.DeepEqual(got, []string{"a", "b.c"}) {
		t.Errorf("Placeholders = %q", got)
	}
}

func TestParseCPUList(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		err  bool
	}{
		{"", nil, false},
		{"0", []int{0}, false},
		{"1,3", []int{1, 3}, false},
		{"0-2,5,2", []int{0, 1, 2, 5}, false},
		{"3-1", nil, true},
		{"x", nil, true},
		{"-1", nil, true},
	}
	for _, c := range cases {
		got, err := ParseCPUList(c.in)
		if !reflect.DeepEqual(got, c.want) || (err != nil) != c.err {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}
