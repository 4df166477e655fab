package record

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// FuzzReader: a recording either reads, and what it read writes back and
// reads again the same, or fails with a *LineError at a line it reached.
func FuzzReader(f *testing.F) {
	var b bytes.Buffer
	w, _ := NewWriter(&b, header())
	for _, ex := range exchanges() {
		w.Write(&ex)
	}
	f.Add(b.Bytes())
	f.Add([]byte(strings.SplitAfter(b.String(), "\n")[0]))
	f.Add([]byte(`{"format":"tandem-recording","version":1,"start":"2026-03-01T12:00:00Z"}` + "\n" + `{"protocol":"grpc","method":"POST","path":"/a/b","body_base64":"AA==","body_size":1}`))
	f.Add([]byte("{}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), "f.jsonl")
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Line != 1 || le.Col < 1 {
				t.Fatalf("header error %v (%T): want a *LineError at line 1", err, err)
			}
			return
		}
		var exs []Exchange
		for r.Scan() {
			exs = append(exs, r.Exchange())
		}
		if err := r.Err(); err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Line != len(exs)+2 || le.Col < 1 {
				t.Fatalf("error %v after %d exchanges: want a *LineError at line %d", err, len(exs), len(exs)+2)
			}
			return
		}
		var out bytes.Buffer
		w, err := NewWriter(&out, r.Header())
		if err != nil {
			t.Fatalf("the header read does not write: %v", err)
		}
		for i := range exs {
			if err := w.Write(&exs[i]); err != nil {
				t.Fatalf("exchange %d read but does not write: %v", i, err)
			}
		}
		again, err := NewReader(&out, "again.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; again.Scan(); i++ {
			if got := again.Exchange(); !sameExchange(got, exs[i]) {
				t.Fatalf("exchange %d changed in a round trip:\n%+v\n%+v", i, got, exs[i])
			}
		}
		if again.Err() != nil {
			t.Fatal(again.Err())
		}
	})
}

// sameExchange is DeepEqual with an empty body, header or list the same
// as none.
func sameExchange(a, b Exchange) bool {
	for _, e := range []*Exchange{&a, &b} {
		if len(e.Body) == 0 {
			e.Body = nil
		}
		if len(e.Headers) == 0 {
			e.Headers = nil
		}
		if len(e.AnswerHeaders) == 0 {
			e.AnswerHeaders = nil
		}
		if len(e.Redacted) == 0 {
			e.Redacted = nil
		}
	}
	return reflect.DeepEqual(a, b)
}

// FuzzHAR: a HAR file imports or fails with an error naming the file;
// what it imports writes and reads back.
func FuzzHAR(f *testing.F) {
	sample, err := os.ReadFile("testdata/sample.har")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample)
	f.Add([]byte(`{"log":{"entries":[{"startedDateTime":"2026-03-01T12:00:00Z","request":{"method":"POST","url":"http://h/x?y","postData":{"text":"AAE=","encoding":"base64"}},"response":{"status":200,"content":{"text":"e30="}}}]}}`))
	f.Add([]byte(`{"log":{"entries":[{}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, exs, st, err := ReadHAR(bytes.NewReader(data), HAROptions{Name: "f.har", MaxBody: 16})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.har") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if st.Imported != len(exs) || len(exs) == 0 {
			t.Fatalf("stats %+v for %d exchanges", st, len(exs))
		}
		var out bytes.Buffer
		w, err := NewWriter(&out, h)
		if err != nil {
			t.Fatalf("header %+v does not write: %v", h, err)
		}
		for i := range exs {
			if exs[i].Offset < 0 || (i > 0 && exs[i].Offset < exs[i-1].Offset) {
				t.Fatalf("exchange %d at offset %v: out of order or negative", i, exs[i].Offset)
			}
			if err := w.Write(&exs[i]); err != nil {
				t.Fatalf("exchange %d imported but does not write: %v", i, err)
			}
		}
		r, err := NewReader(&out, "out.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for r.Scan() {
			n++
		}
		if r.Err() != nil || n != len(exs) {
			t.Fatalf("read back %d of %d: %v", n, len(exs), r.Err())
		}
	})
}
