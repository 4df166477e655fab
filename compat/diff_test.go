package compat

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"google.golang.org/protobuf/proto"
)

func tree(t *testing.T, js string) any {
	t.Helper()
	v, err := JSONTree([]byte(js))
	if err != nil {
		t.Fatalf("JSONTree(%s): %v", js, err)
	}
	return v
}

func TestDiffKinds(t *testing.T) {
	cases := []struct {
		name, ref, got string
		ignore         []string
		want           []results.Difference
	}{
		{"identical", `{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1.0}`, nil, nil},
		{"value", `{"a":1}`, `{"a":2}`, nil, []results.Difference{{Path: "a", Kind: KindValue, Reference: "1", Value: "2"}}},
		{"missing", `{"a":1,"b":2}`, `{"a":1}`, nil, []results.Difference{{Path: "b", Kind: KindMissing, Reference: "2"}}},
		{"extra", `{"a":1}`, `{"a":1,"c":true}`, nil, []results.Difference{{Path: "c", Kind: KindExtra, Value: "true"}}},
		{"type", `{"tx":"00ff"}`, `{"tx":{"hex":"00ff"}}`, nil,
			[]results.Difference{{Path: "tx", Kind: KindType, Reference: `"00ff"`, Value: `{"hex":"00ff"}`}}},
		{"ordering", `{"l":[1,2,3]}`, `{"l":[3,1,2]}`, nil,
			[]results.Difference{{Path: "l", Kind: KindOrdering, Reference: "[1,2,3]", Value: "[3,1,2]"}}},
		{"size", `{"l":[1,2]}`, `{"l":[1,2,2]}`, nil, []results.Difference{{Path: "l", Kind: KindSize, Reference: "2", Value: "3"}}},
		{"byte-order hex", `{"h":"0011aabb"}`, `{"h":"bbaa1100"}`, nil,
			[]results.Difference{{Path: "h", Kind: KindByteOrder, Reference: `"0011aabb"`, Value: `"bbaa1100"`}}},
		{"byte-order base64", `{"h":"AAECAw=="}`, `{"h":"AwIBAA=="}`, nil,
			[]results.Difference{{Path: "h", Kind: KindByteOrder, Reference: `"AAECAw=="`, Value: `"AwIBAA=="`}}},
		{"not reversed", `{"h":"0011aabb"}`, `{"h":"0011aabc"}`, nil,
			[]results.Difference{{Path: "h", Kind: KindValue, Reference: `"0011aabb"`, Value: `"0011aabc"`}}},
		{"nested path", `{"txs":[{"o":[{"a":1}]}]}`, `{"txs":[{"o":[{"a":5}]}]}`, nil,
			[]results.Difference{{Path: "txs[0].o[0].a", Kind: KindValue, Reference: "1", Value: "5"}}},
		{"ignored", `{"t":1,"txs":[{"time":1,"v":1}]}`, `{"t":2,"txs":[{"time":2,"v":1}]}`, []string{"t", "txs[*].time"}, nil},
		{"ignored subtree", `{"meta":{"a":1,"b":2}}`, `{"meta":{"a":3}}`, []string{"meta"}, nil},
		{"wildcard key", `{"m":{"x":{"t":1},"y":{"t":1}}}`, `{"m":{"x":{"t":2},"y":{"t":3}}}`, []string{"m.*.t"}, nil},
		{"root type", `"abc"`, `{"hex":"abc"}`, nil, []results.Difference{{Path: "", Kind: KindType, Reference: `"abc"`, Value: `{"hex":"abc"}`}}},
		{"null vs value", `{"a":null}`, `{"a":0}`, nil, []results.Difference{{Path: "a", Kind: KindType, Reference: "null", Value: "0"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ignore []Pattern
			for _, p := range c.ignore {
				pat, err := ParsePattern(p)
				if err != nil {
					t.Fatal(err)
				}
				ignore = append(ignore, pat)
			}
			got, total := Diff(tree(t, c.ref), tree(t, c.got), ignore)
			if total != len(c.want) || len(got) != len(c.want) {
				t.Fatalf("Diff = %+v (total %d); want %+v", got, total, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("difference %d = %+v; want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestDiffIsBounded(t *testing.T) {
	var a, b strings.Builder
	a.WriteString("[")
	b.WriteString("[")
	for i := range 1000 {
		if i > 0 {
			a.WriteString(",")
			b.WriteString(",")
		}
		a.WriteString("1")
		b.WriteString("2")
	}
	a.WriteString("]")
	b.WriteString("]")
	got, total := Diff(tree(t, a.String()), tree(t, b.String()), nil)
	if len(got) != maxDifferences || total != 1000 {
		t.Errorf("kept %d of %d; want %d of 1000", len(got), total, maxDifferences)
	}
	long := `"` + strings.Repeat("é", 500) + `"`
	got, _ = Diff(tree(t, long), tree(t, `"x"`), nil)
	if len(got[0].Reference) > maxShown+40 || !strings.Contains(got[0].Reference, "bytes)") {
		t.Errorf("a long value is shown whole: %d bytes", len(got[0].Reference))
	}
}

func TestCanonical(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"b":1,"a":[true,null,"x"]}`, `{"a":[true,null,"x"],"b":1}`},
		{`[1.0, 1e0, 10E-1, -0, 1.5, 1e400, 12345678901234567890123]`, `[1,1,1,0,1.5,1e400,12345678901234567890123]`},
		{`[-0.0, -0e5, 0.0]`, `[0,0,0]`}, // found by FuzzCanonical: -0.0 once became "-0", then "0"
		{`"<&>\u00e9\n"`, `"<&>é\n"`},
		{` { "z" : { "y" : 2 , "x" : 1 } } `, `{"z":{"x":1,"y":2}}`},
	} {
		if got := string(Canonical(tree(t, c.in))); got != c.want {
			t.Errorf("Canonical(%s) = %s; want %s", c.in, got, c.want)
		}
	}
	if JSONDigest(tree(t, `{"a":1,"b":2}`)) != JSONDigest(tree(t, `{"b":2.0,"a":1}`)) {
		t.Error("equal JSON, different digests")
	}
}

func TestJSONTreeRejects(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1} x`, strings.Repeat("[", 300) + strings.Repeat("]", 300)} {
		if _, err := JSONTree([]byte(in)); err == nil {
			t.Errorf("JSONTree(%.20q) accepted it", in)
		}
	}
}

// The digest is SHA-256 over each message's deterministic encoding, each
// behind its length as 8 bytes big-endian (docs/methods.md, Compatibility).
func TestProtoDigest(t *testing.T) {
	msgs := []proto.Message{&ledgerpb.Block{Height: 7, Hash: []byte{1, 2}}, &ledgerpb.Block{Height: 8}}
	h := sha256.New()
	for _, m := range msgs {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	got, err := ProtoDigest(msgs)
	if err != nil || got != hex.EncodeToString(h.Sum(nil)) {
		t.Errorf("ProtoDigest = %s, %v", got, err)
	}
	tr := ProtoTree((&ledgerpb.Block{Height: 7, Hash: []byte{0xab}, Txs: []*ledgerpb.Transaction{{From: "x"}}}).ProtoReflect())
	if got := string(Canonical(tr)); got != `{"hash":"ab","height":7,"prev_hash":"","time":0,"txs":[{"from":"x","height":0,"outputs":[],"txid":""}]}` {
		t.Errorf("ProtoTree = %s", got)
	}
}

func TestHolds(t *testing.T) {
	for _, c := range []struct {
		rule, got, want, same string
		ok                    bool
	}{
		{"equal", `"ab"`, `"ab"`, ``, true},
		{"equal", `1`, `1.0`, ``, true},
		{"equal", `0`, `null`, `[[0, null]]`, true},
		{"equal", `0`, `null`, ``, false},
		{"reversed", `"0011aabb"`, `"bbaa1100"`, ``, true},
		{"reversed", `["0011","aabb"]`, `["1100","bbaa"]`, ``, true},
		{"reversed", `"0011aabb"`, `"0011aabb"`, ``, false},
		{"set", `[1,2,2,3]`, `[3,1,2]`, ``, true},
		{"set", `[1,2]`, `[1,2,3]`, ``, false},
		{"set", `1`, `[1]`, ``, false},
	} {
		var same []any
		if c.same != "" {
			same, _ = tree(t, c.same).([]any)
		}
		if got := Holds(c.rule, tree(t, c.got), tree(t, c.want), same); got != c.ok {
			t.Errorf("Holds(%s, %s, %s, %s) = %v", c.rule, c.got, c.want, c.same, got)
		}
	}
}

func TestExtract(t *testing.T) {
	tr := tree(t, `{"txs":[{"id":"a","o":[1,2]},{"id":"b","o":[3]}],"n":1}`)
	for _, c := range []struct{ path, want string }{
		{"n", "1"}, {"txs[1].id", `"b"`}, {"txs[*].id", `["a","b"]`}, {"txs[*].o[0]", "[1,3]"}, {"", `{"n":1,"txs":[{"id":"a","o":[1,2]},{"id":"b","o":[3]}]}`},
	} {
		v, ok := Extract(tr, c.path)
		if !ok || string(Canonical(v)) != c.want {
			t.Errorf("Extract(%q) = %s, %v; want %s", c.path, Canonical(v), ok, c.want)
		}
	}
	if _, ok := Extract(tr, "txs[9].id"); ok {
		t.Error("Extract of a missing index succeeded")
	}
}
