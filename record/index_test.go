package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// writeFile writes a recording of exs (in that order) to a file and
// returns its path and bytes.
func writeFile(t *testing.T, h Header, exs []Exchange) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	w, err := NewWriter(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	for i := range exs {
		if err := w.Write(&exs[i]); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, b.Bytes()
}

// TestIndexArrivalOrder: exchanges are numbered by when their requests
// arrived, the file's order among equal offsets, and each reads back
// whole, from memory (a small file) or from the file (a large one).
func TestIndexArrivalOrder(t *testing.T) {
	small := exchanges()
	// lines in the order answers ended: offsets 8, 5, 7, 6, 7 ms
	order := []int{3, 0, 2, 1}
	var exs []Exchange
	for _, i := range order {
		exs = append(exs, small[i])
	}
	twin := small[2]
	twin.Path = "/big?x=2"
	exs = append(exs, twin)
	large := make([]Exchange, 40)
	for i := range large {
		large[i] = Exchange{Offset: time.Duration(40-i) * time.Second, Protocol: HTTP1, Method: "POST", Path: fmt.Sprintf("/%d", i),
			Body: bytes.Repeat([]byte{'a' + byte(i%26)}, 200<<10), BodySize: 200 << 10}
	}
	h := header()
	hl := header()
	hl.MaxBody = 1 << 20
	for _, c := range []struct {
		name string
		h    Header
		exs  []Exchange
		want []Exchange // in arrival order
		disk bool
	}{
		{"small", h, exs, []Exchange{small[0], small[1], small[2], twin, small[3]}, false},
		{"large", hl, large, reverse(large), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, data := writeFile(t, c.h, c.exs)
			x, err := OpenIndex(path)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			if (x.file != nil) != c.disk {
				t.Errorf("read from the file: %v; want %v (%d bytes)", x.file != nil, c.disk, len(data))
			}
			sum := sha256.Sum256(data)
			if x.Len() != len(c.want) || x.SHA256() != hex.EncodeToString(sum[:]) || x.Size() != int64(len(data)) {
				t.Errorf("len %d sha %s size %d; want %d, the file's digest, %d", x.Len(), x.SHA256(), x.Size(), len(c.want), len(data))
			}
			var buf []byte
			for k, want := range c.want {
				if k > 0 && x.At(k) < x.At(k-1) {
					t.Errorf("At(%d) %v before At(%d) %v", k, x.At(k), k-1, x.At(k-1))
				}
				var got Exchange
				got, buf, err = x.Exchange(k, buf)
				if err != nil {
					t.Fatalf("exchange %d: %v", k, err)
				}
				if !reflect.DeepEqual(got, want) || x.At(k) != want.Offset {
					t.Errorf("exchange %d: %s %s at %v; want %s %s at %v", k, got.Method, got.Path, x.At(k), want.Method, want.Path, want.Offset)
				}
			}
			if _, _, err := x.Exchange(x.Len(), buf); err == nil {
				t.Error("an exchange past the last read")
			}
		})
	}
}

func reverse(exs []Exchange) []Exchange {
	out := make([]Exchange, len(exs))
	for i, e := range exs {
		out[len(exs)-1-i] = e
	}
	return out
}

// TestIndexCRLF: a file with CRLF line ends reads back the same.
func TestIndexCRLF(t *testing.T) {
	exs := exchanges()
	_, data := writeFile(t, header(), exs)
	path := filepath.Join(t.TempDir(), "crlf.jsonl")
	os.WriteFile(path, bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")), 0o600)
	x, err := OpenIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for k := range x.Len() {
		got, _, err := x.Exchange(k, nil)
		if err != nil || !reflect.DeepEqual(got, exs[k]) {
			t.Errorf("exchange %d: %v, %+v", k, err, got)
		}
	}
}

func TestIndexErrors(t *testing.T) {
	good := func(offset int) string {
		return fmt.Sprintf(`{"offset_ns":%d,"protocol":"http1","method":"GET","path":"/","body_size":0,"status":200,"answer_size":0,"duration_ns":0}`, offset)
	}
	head := `{"format":"tandem-recording","version":1,"upstream":"http://127.0.0.1:1","start":"2026-03-01T12:00:00Z","max_body":64}`
	for _, c := range []struct {
		name, text, want string
	}{
		{"bad line", head + "\n" + good(1) + "\n" + `{"offset_ns":2,"protocol":"smtp"}` + "\n", "rec.jsonl:3:1: "},
		{"json", head + "\n" + good(1) + "\n" + `{"offset_ns":2,` + "\n", "rec.jsonl:3:"},
		{"no exchanges", head + "\n", "no exchanges"},
		{"empty", "", "rec.jsonl:1:1: empty file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rec.jsonl")
			os.WriteFile(path, []byte(c.text), 0o600)
			x, err := OpenIndex(path)
			if err == nil {
				x.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q; want %q", err, c.want)
			}
		})
	}
	if _, err := OpenIndex(t.TempDir()); err == nil {
		t.Error("a directory opened")
	}
	// a file changed after it was read: the exchange's line is at fault
	path, data := writeFile(t, header(), exchanges())
	x, err := OpenIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	x.src = bytes.NewReader(bytes.ReplaceAll(data, []byte(`"protocol":"h2"`), []byte(`"protocol":"h9"`)))
	_, _, err = x.Exchange(3, nil)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 5 || !strings.Contains(err.Error(), "changed") {
		t.Errorf("changed file: %v; want an error at line 5", err)
	}
}
