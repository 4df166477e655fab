package study

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse holds that any input either parses into a study or yields an
// ErrorList whose every entry has a position, and never panics.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/valid/*.yaml", "testdata/errors/*.yaml", "../demo/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err == nil {
			if s == nil || s.Version != 1 || len(s.Targets) == 0 {
				t.Fatalf("Parse accepted an incomplete study: %+v", s)
			}
			return
		}
		var list ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Fatalf("Parse error %T %v; want a non-empty ErrorList", err, err)
		}
		for _, e := range list {
			if e.Line < 1 || e.Col < 1 {
				t.Fatalf("error without a position: %v", e)
			}
		}
	})
}

// FuzzReadValues holds that any values file (tandem load --values) either
// reads into sources or yields an ErrorList whose every entry has a
// position in it, and never panics.
func FuzzReadValues(f *testing.F) {
	for _, seed := range []string{
		"values:\n  n: {seq: {from: 1}}\n  k: {zipf: {n: 1000, s: 0.99}}\n  users: {csv: users.csv, order: random}\n",
		"values:\n  c: {choice: {values: [a, 1, {x: y}], weights: [1, 2, 3]}}\n  t: {time: unix_ms}\n  h: {hex: 8}\n",
		"values: {env: {seq: {}}, 1x: {bytes: 0}, f: {float: {min: 2, max: 1}}}\n",
		"values: []\n", "values:\n", "other: 1\n", "values: {a: {jsonl: x, order: twice}}\n---\nvalues: {}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "values.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		specs, err := ReadValues(path, "/nonexistent")
		if err == nil {
			if len(specs) == 0 {
				t.Fatal("ReadValues accepted a file without values")
			}
			return
		}
		var list ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Fatalf("ReadValues error %T %v; want a non-empty ErrorList", err, err)
		}
		for _, e := range list {
			if e.Line < 1 || e.Col < 1 || e.File != path {
				t.Fatalf("error without a position in the file: %v", e)
			}
		}
	})
}

func FuzzReadMix(f *testing.F) {
	if data, err := os.ReadFile("../examples/mix/ledger.yaml"); err == nil {
		f.Add(data)
	}
	for _, seed := range []string{
		"calls:\n  a: {http: {path: \"/a/${k}\"}, values: {k: {zipf: {n: 10, s: 1.1}}}}\n  b: {http: {method: POST, path: /b}}\nmix: [{call: a, weight: 9}, {call: b}]\n",
		"calls:\n  a: {grpc: {method: s.S/M, proto: [x.proto]}}\n  b: {jsonrpc: {method: m}}\nmix: [{call: a}, {call: b, weight: 0}, {call: a}]\n",
		"calls:\n  a: {http: {path: \"/${x}\", headers: {X: \"${env.HOME}\"}}}\nmix: []\n",
		"calls: {}\nmix: [{call: c}]\n", "mix:\n", "calls: []\n", "other: 1\n---\ncalls: {}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "mix.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		mf, err := ReadMix(path, 1)
		if err == nil {
			if len(mf.Mix) < 2 {
				t.Fatalf("ReadMix accepted a mix of %d calls", len(mf.Mix))
			}
			for _, mc := range mf.Mix {
				if mf.Calls[mc.Call] == nil || mc.Weight <= 0 {
					t.Fatalf("ReadMix accepted %+v: an undefined call or a weight not above 0", mc)
				}
			}
			return
		}
		var list ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Fatalf("ReadMix error %T %v; want a non-empty ErrorList", err, err)
		}
		for _, e := range list {
			if e.Line < 1 || e.Col < 1 || e.File != path {
				t.Fatalf("error without a position in the file: %v", e)
			}
		}
	})
}
