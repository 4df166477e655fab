package study

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		err  string
	}{
		{"", nil, ""},
		{"  ", nil, ""},
		{"0", []int{0}, ""},
		{"0-1", []int{0, 1}, ""},
		{"1,3", []int{1, 3}, ""},
		{"0,2-3", []int{0, 2, 3}, ""},
		{" 0 , 2-3 ", []int{0, 2, 3}, ""},
		{"0-2,5,2", []int{0, 1, 2, 5}, ""},
		{"3-3", []int{3}, ""},
		{"3-1", nil, `bad CPU range "3-1"`},
		{"2-", nil, `bad CPU range "2-"`},
		{"0-4097", nil, `bad CPU range "0-4097"`},
		{"x", nil, `bad CPU "x"`},
		{"-1", nil, `bad CPU "-1"`},
		{"0,,1", nil, `bad CPU ""`},
		{"0 1", nil, `bad CPU "0 1"`},
	}
	for _, c := range cases {
		got, err := ParseCPUList(c.in)
		errStr := ""
		if err != nil {
			errStr = err.Error()
		}
		if !slices.Equal(got, c.want) || errStr != c.err {
			t.Errorf("ParseCPUList(%q) = %v, %q; want %v, %q", c.in, got, errStr, c.want, c.err)
		}
	}
}

func TestFormatCPUList(t *testing.T) {
	cases := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1}, "0-1"},
		{[]int{6, 0, 1, 2, 3}, "0-3,6"},
		{[]int{1, 3, 5}, "1,3,5"},
		{[]int{2, 2, 3}, "2-3"},
	}
	for _, c := range cases {
		if got := FormatCPUList(c.in); got != c.want {
			t.Errorf("FormatCPUList(%v) = %q; want %q", c.in, got, c.want)
		}
		if back, err := ParseCPUList(c.want); err != nil || len(c.in) > 0 && !slices.Equal(back, slices.Compact(slices.Sorted(slices.Values(c.in)))) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v sorted", c.want, back, err, c.in)
		}
	}
}

func TestGeneratorCPUs(t *testing.T) {
	const src = `version: 1
name: pinned
generator: {cpus: "%s"}
targets:
  - {name: a, endpoints: {http: "http://127.0.0.1:1/"}}
calls:
  ping: {http: {path: /}}
`
	cases := []struct {
		list    string
		allowed []int
		want    []int
		err     string
	}{
		{"", []int{0, 1}, nil, ""},
		{"0", []int{0, 1}, []int{0}, ""},
		{"0,2-3", nil, []int{0, 2, 3}, ""},
		{"0,2-3", []int{0, 1, 2, 3}, []int{0, 2, 3}, ""},
		{"1", []int{0}, nil, "g.yaml:3:19: generator.cpus: CPU 1 is not available here (a CPU list within 0, the CPUs tandem may run on here)"},
		{"2-5", []int{0, 1, 2, 3}, nil, "g.yaml:3:19: generator.cpus: CPUs 4-5 are not available here (a CPU list within 0-3, the CPUs tandem may run on here)"},
	}
	for _, c := range cases {
		t.Run(c.list, func(t *testing.T) {
			s, err := Parse("g.yaml", []byte(fmt.Sprintf(src, c.list)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.GeneratorCPUs(c.allowed)
			errStr := ""
			if err != nil {
				errStr = err.Error()
				if list := ErrorList(nil); !errors.As(err, &list) {
					t.Errorf("error %T; want an ErrorList", err)
				}
			}
			if !slices.Equal(got, c.want) || errStr != c.err {
				t.Errorf("GeneratorCPUs(%v) = %v, %q; want %v, %q", c.allowed, got, errStr, c.want, c.err)
			}
		})
	}
}
