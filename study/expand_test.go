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
