package record

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func header() Header {
	return Header{Upstream: "http://127.0.0.1:8080", Start: start, MaxBody: 64, Source: "proxy"}
}

func code(n int) *int { return &n }

// exchanges are one of each shape: text and binary bodies, a cut body, a
// gRPC answer, an exchange without an answer.
func exchanges() []Exchange {
	return []Exchange{
		{Offset: 5 * time.Millisecond, Protocol: JSONRPC, Method: "POST", Path: "/",
			Headers: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"getinfo"}`), BodySize: 43,
			Status: 200, AnswerHeaders: http.Header{"Content-Type": {"application/json"}}, Digest: strings.Repeat("ab", 32), AnswerSize: 80, Duration: time.Millisecond},
		{Offset: 6 * time.Millisecond, Protocol: GRPC, Method: "POST", Path: "/pkg.Svc/Get",
			Body: []byte{0, 0, 0, 0, 2, 0x08, 0xff}, BodySize: 7, Status: 200, GRPCStatus: code(5), GRPCMessage: "not found", Messages: 0,
			Digest: strings.Repeat("0", 64), Duration: 2 * time.Millisecond},
		{Offset: 7 * time.Millisecond, Protocol: HTTP1, Method: "PUT", Path: "/big?x=1", Body: bytes.Repeat([]byte("a"), 64), BodySize: 1000,
			Status: 204, Redacted: []string{"header Authorization"}, Headers: http.Header{"Authorization": {Marker}}},
		{Offset: 8 * time.Millisecond, Protocol: H2, Method: "GET", Path: "/gone", Error: "no answer from the upstream: refused"},
	}
}

func TestRoundTrip(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, header())
	if err != nil {
		t.Fatal(err)
	}
	want := exchanges()
	for i := range want {
		if err := w.Write(&want[i]); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if w.Count() != int64(len(want)) {
		t.Errorf("count %d; want %d", w.Count(), len(want))
	}
	if n := strings.Count(b.String(), "\n"); n != len(want)+1 {
		t.Errorf("%d lines; want a header and %d exchanges", n, len(want))
	}
	r, err := NewReader(&b, "rec.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	if h.Format != Format || h.Version != Version || !h.Start.Equal(start) || h.Upstream != "http://127.0.0.1:8080" || h.MaxBody != 64 {
		t.Errorf("header %+v", h)
	}
	var got []Exchange
	for r.Scan() {
		got = append(got, r.Exchange())
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back:\n%+v\nwant\n%+v", got, want)
	}
	if !got[2].Truncated() || got[0].Truncated() {
		t.Errorf("truncated: %v %v; want the cut body only", got[0].Truncated(), got[2].Truncated())
	}
	// the text body is text, the binary one base64
	if l := lines(t, want)[1]; !strings.Contains(l, `"body":"{\"jsonrpc\"`) {
		t.Errorf("text body not written as text:\n%s", l)
	}
	if l := lines(t, want)[2]; !strings.Contains(l, `"body_base64":"AAAAAAII/w=="`) {
		t.Errorf("binary body not written as base64:\n%s", l)
	}
}

// lines is the recording of exs, line by line.
func lines(t *testing.T, exs []Exchange) []string {
	t.Helper()
	var b bytes.Buffer
	w, err := NewWriter(&b, header())
	if err != nil {
		t.Fatal(err)
	}
	for i := range exs {
		if err := w.Write(&exs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

func TestReaderErrors(t *testing.T) {
	good := lines(t, exchanges())
	head := good[0]
	cases := []struct {
		name, file, want string
	}{
		{"empty file", "", "rec.jsonl:1:1: empty file"},
		{"not a recording", `{"format":"har","version":1}`, `rec.jsonl:1:1: header: format "har": not a tandem recording`},
		{"newer version", strings.Replace(head, `"version":1`, `"version":2`, 1), "rec.jsonl:1:1: header: version 2: this tandem reads recordings up to version 1"},
		{"header not JSON", `{"format": tandem}`, "rec.jsonl:1:13: header: not JSON"},
		{"bad JSON at line 3", head + "\n" + good[1] + "\n" + `{"offset_ns": 1, "method": }`, "rec.jsonl:3:28: not JSON"},
		{"unknown field", head + "\n" + `{"offset_ns":1,"protocol":"http1","method":"GET","path":"/","colour":"red"}`, `rec.jsonl:2:1: json: unknown field "colour"`},
		{"wrong type", head + "\n" + `{"offset_ns":"soon","protocol":"http1","method":"GET","path":"/"}`, "rec.jsonl:2:19: field offset_ns: got a JSON string, want int64"},
		{"unknown protocol", head + "\n" + `{"protocol":"smtp","method":"GET","path":"/"}`, `rec.jsonl:2:1: protocol "smtp": want http1, h2, grpc or jsonrpc`},
		{"bad path", head + "\n" + `{"protocol":"http1","method":"GET","path":"no slash"}`, `rec.jsonl:2:1: path "no slash"`},
		{"bad method", head + "\n" + `{"protocol":"http1","method":"GE T","path":"/"}`, `rec.jsonl:2:1: method "GE T"`},
		{"negative offset", head + "\n" + `{"offset_ns":-1,"protocol":"http1","method":"GET","path":"/"}`, "rec.jsonl:2:1: offset_ns, duration_ns"},
		{"body over max_body", head + "\n" + `{"protocol":"http1","method":"GET","path":"/","body":"` + strings.Repeat("a", 65) + `","body_size":65}`, "more than the recording's max_body 64"},
		{"both bodies", head + "\n" + `{"protocol":"http1","method":"GET","path":"/","body":"a","body_base64":"YQ==","body_size":1}`, "rec.jsonl:2:1: body and body_base64 both set"},
		{"bad digest", head + "\n" + `{"protocol":"http1","method":"GET","path":"/","digest":"XYZ"}`, `digest "XYZ"`},
		{"empty line", head + "\n\n" + good[1], "rec.jsonl:2:1: empty line"},
		{"last line cut", head + "\n" + good[1] + "\n" + good[2][:40], "rec.jsonl:3:41: the last line is incomplete"},
		{"bad last line, whole", head + "\n" + good[1] + "\n" + good[2][:40] + "\n", "rec.jsonl:3:41: not JSON: the line ends inside its object"},
		{"data after the object", head + "\n" + good[1] + " {}", "rec.jsonl:2:"},
		{"bad header name", head + "\n" + `{"protocol":"http1","method":"GET","path":"/","headers":{"a b":["x"]}}`, `rec.jsonl:2:1: headers: bad header name "a b"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(c.file), "rec.jsonl")
			if err == nil {
				for r.Scan() {
				}
				err = r.Err()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want %q", err, c.want)
			}
			var le *LineError
			if !errors.As(err, &le) {
				t.Errorf("%T is not a *LineError", err)
			}
		})
	}
}

func TestReaderLongLine(t *testing.T) {
	head := lines(t, nil)[0]
	long := head + "\n" + `{"path":"/` + strings.Repeat("a", MaxLine) + `"}` + "\n"
	r, err := NewReader(strings.NewReader(long), "rec.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if r.Scan() {
		t.Fatal("a line over MaxLine was read")
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "rec.jsonl:2:1: line longer than") {
		t.Errorf("error %v; want line 2 too long", err)
	}
}

func TestCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	w, err := Create(path, header())
	if err != nil {
		t.Fatal(err)
	}
	ex := exchanges()[0]
	if err := w.Write(&ex); err != nil {
		t.Fatal(err)
	}
	// written through at once: a reader sees the line before Close
	if data, _ := os.ReadFile(path); strings.Count(string(data), "\n") != 2 {
		t.Errorf("before Close the file holds %q; want the header and the exchange", data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&ex); !errors.Is(err, ErrClosed) {
		t.Errorf("write after close: %v; want ErrClosed", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v; want 0600", fi.Mode().Perm())
	}
	if _, err := Create(path, header()); !errors.Is(err, os.ErrExist) {
		t.Errorf("create over an existing recording: %v; want it refused", err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for r.Scan() {
		n++
	}
	if r.Err() != nil || n != 1 {
		t.Errorf("read %d exchanges, error %v; want 1", n, r.Err())
	}
}

func TestWriterRefusesWhatReaderWould(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, header())
	if err != nil {
		t.Fatal(err)
	}
	before := b.Len()
	bad := Exchange{Protocol: "smtp", Method: "GET", Path: "/"}
	if err := w.Write(&bad); err == nil {
		t.Fatal("an unknown protocol was written")
	}
	if b.Len() != before || w.Count() != 0 {
		t.Errorf("a refused exchange left %d bytes", b.Len()-before)
	}
}

func TestRedaction(t *testing.T) {
	rules, err := CompileRules([]string{"^x-api-"}, []string{`tok_[a-z0-9]+`}, false)
	if err != nil {
		t.Fatal(err)
	}
	ex := Exchange{Protocol: HTTP1, Method: "POST", Path: "/login?user=ann&key=tok_abc123",
		Headers: http.Header{"Authorization": {"Bearer s3cret"}, "Cookie": {"sid=1"}, "X-Api-Key": {"k1"},
			"X-Request-Id": {"r-tok_zz9"}, "Accept": {"*/*"}},
		AnswerHeaders: http.Header{"Set-Cookie": {"sid=2"}},
		Body:          []byte(`{"token":"tok_def456"}`)}
	rules.Apply(&ex)
	want := http.Header{"Authorization": {Marker}, "Cookie": {Marker}, "X-Api-Key": {Marker}, "X-Request-Id": {"r-" + Marker}, "Accept": {"*/*"}}
	if !reflect.DeepEqual(ex.Headers, want) {
		t.Errorf("headers %v; want %v", ex.Headers, want)
	}
	if ex.AnswerHeaders.Get("Set-Cookie") != Marker {
		t.Errorf("Set-Cookie %q; want it redacted", ex.AnswerHeaders.Get("Set-Cookie"))
	}
	if ex.Path != "/login?user=ann&key="+Marker || string(ex.Body) != `{"token":"`+Marker+`"}` {
		t.Errorf("path %q, body %s", ex.Path, ex.Body)
	}
	wantNotes := []string{"header Authorization", "header Cookie", "header X-Api-Key", "header X-Request-Id", "query", "body"}
	if !reflect.DeepEqual(ex.Redacted, wantNotes) {
		t.Errorf("redacted %q; want %q", ex.Redacted, wantNotes)
	}
	// binary: masked byte for byte, so the length holds
	bin := Exchange{Body: []byte{0, 0, 0, 0, 10, 0x0a, 8, 't', 'o', 'k', '_', 'a', 'b', 'c', 0xff}}
	rules.Apply(&bin)
	if want := []byte{0, 0, 0, 0, 10, 0x0a, 8, 'x', 'x', 'x', 'x', 'x', 'x', 'x', 0xff}; !bytes.Equal(bin.Body, want) {
		t.Errorf("binary body %v; want %v", bin.Body, want)
	}
	// kept: nothing changes
	keep, _ := CompileRules(nil, []string{"tok_"}, true)
	kept := Exchange{Path: "/?tok_a", Headers: http.Header{"Authorization": {"Bearer s3cret"}}}
	keep.Apply(&kept)
	if kept.Headers.Get("Authorization") != "Bearer s3cret" || kept.Path != "/?tok_a" || kept.Redacted != nil {
		t.Errorf("with Keep: %+v", kept)
	}
}

func TestCompileRulesErrors(t *testing.T) {
	cases := []struct {
		headers, values []string
		want            string
	}{
		{[]string{"("}, nil, `--redact-header "("`},
		{nil, []string{"["}, `--redact-value "["`},
		{nil, []string{"a*"}, `--redact-value "a*": matches the empty string`},
	}
	for _, c := range cases {
		if _, err := CompileRules(c.headers, c.values, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: error %v; want %q", c.headers, c.values, err, c.want)
		}
	}
}

func TestDetect(t *testing.T) {
	cases := []struct {
		major int
		ct    string
		body  string
		want  Protocol
	}{
		{2, "application/grpc", "", GRPC},
		{2, "application/grpc+proto", "", GRPC},
		{1, "application/grpc-web", "", HTTP1},
		{1, "application/json", `{"jsonrpc":"2.0","id":1,"method":"getinfo","params":[]}`, JSONRPC},
		{2, "application/json", ` {"jsonrpc":"2.0","method":"notify"}`, JSONRPC},
		{1, "application/json", `[{"jsonrpc":"2.0","id":1,"method":"a"}]`, HTTP1}, // a batch
		{1, "application/json", `{"jsonrpc":"1.0","id":1,"method":"a"}`, HTTP1},
		{1, "application/json", `{"jsonrpc":"2.0","id":1,"method":5}`, HTTP1},
		{2, "", "", H2},
		{1, "text/plain", "hello", HTTP1},
	}
	for _, c := range cases {
		if got := Detect(c.major, c.ct, []byte(c.body)); got != c.want {
			t.Errorf("Detect(%d, %q, %q) = %s; want %s", c.major, c.ct, c.body, got, c.want)
		}
	}
}

func TestGRPCMessages(t *testing.T) {
	msgs, err := GRPCMessages([]byte{0, 0, 0, 0, 2, 8, 1, 0, 0, 0, 0, 0})
	if err != nil || len(msgs) != 2 || !bytes.Equal(msgs[0], []byte{8, 1}) || len(msgs[1]) != 0 {
		t.Errorf("messages %v, %v; want [8 1] and an empty one", msgs, err)
	}
	for name, body := range map[string][]byte{
		"cut header":  {0, 0, 0},
		"cut message": {0, 0, 0, 0, 3, 8},
		"compressed":  {1, 0, 0, 0, 1, 8},
	} {
		if _, err := GRPCMessages(body); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
