package values

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// millionRows is a CSV file of 1,000,000 rows, about 60 MB.
func millionRows(b *testing.B) string {
	path, _ := bigCSV(b, 1_000_000)
	return path
}

// BenchmarkRender renders what an HTTP request needs: a path with one
// splice and a JSON body with three, against a fixed request of the same
// bytes ("fixed": what a request costs without values). The values come
// from generators, or from a 1,000,000-row feeder in each order.
func BenchmarkRender(b *testing.B) {
	path := millionRows(b)
	for _, c := range []struct {
		name  string
		specs map[string]Spec
		url   string
		body  map[string]any
	}{
		{"generators", map[string]Spec{"n": Seq{}, "k": Zipf{N: 1_000_000, S: 0.99}, "op": Choice{Values: []any{"get", "put"}}},
			"/items/${k}", map[string]any{"id": "${n}", "key": "${k}", "op": "${op}", "fixed": "x"}},
		{"feeder-sequential", map[string]Spec{"n": Seq{}, "u": File{Path: path, Format: CSV, Order: Sequential}},
			"/users/${u.user}", map[string]any{"id": "${n}", "user": "${u.id}", "mail": "${u.email}", "fixed": "x"}},
		{"feeder-random", map[string]Spec{"n": Seq{}, "u": File{Path: path, Format: CSV, Order: Random}},
			"/users/${u.user}", map[string]any{"id": "${n}", "user": "${u.id}", "mail": "${u.email}", "fixed": "x"}},
		{"feeder-once", map[string]Spec{"n": Seq{}, "u": File{Path: path, Format: CSV, Order: Once}},
			"/users/${u.user}", map[string]any{"id": "${n}", "user": "${u.id}", "mail": "${u.email}", "fixed": "x"}},
	} {
		s, err := Open(context.Background(), 1, c.specs)
		if err != nil {
			b.Fatal(err)
		}
		u, err1 := s.Compile(c.url, URL)
		body, err2 := s.CompileJSON(c.body)
		if err1 != nil || err2 != nil {
			b.Fatal(err1, err2)
		}
		r := s.NewRenderer()
		buf := make([]byte, 0, 512)
		now := time.Now()
		fixed, _ := u.Append(nil, r, 0, now)
		fixed, _ = body.Append(fixed, r, 0, now)
		b.Run(c.name+"/fixed", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf = append(buf[:0], fixed...)
			}
		})
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			i := uint64(0)
			for b.Loop() {
				var err error
				buf, err = u.Append(buf[:0], r, i%1_000_000, now)
				if err == nil {
					buf, err = body.Append(buf, r, i%1_000_000, now)
				}
				if err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		s.Close()
	}
}

// BenchmarkFeederRead reads a row of a 1,000,000-row file per request
// (CSV, then JSONL), in each order.
func BenchmarkFeederRead(b *testing.B) {
	csvPath := millionRows(b)
	jsonlPath := filepath.Join(b.TempDir(), "million.jsonl")
	var lines []byte
	for k := range 1_000_000 {
		lines = fmt.Appendf(lines, `{"id": %d, "user": "user%08d", "email": "user%d@example.com", "tags": [1, 2]}`+"\n", k, k*7, k)
	}
	if err := os.WriteFile(jsonlPath, lines, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		format FileFormat
		order  Order
	}{{CSV, Sequential}, {CSV, Random}, {CSV, Once}, {JSONL, Sequential}, {JSONL, Random}} {
		path := csvPath
		if c.format == JSONL {
			path = jsonlPath
		}
		s, err := Open(context.Background(), 1, map[string]Spec{"u": File{Path: path, Format: c.format, Order: c.order}})
		if err != nil {
			b.Fatal(err)
		}
		r := s.NewRenderer()
		b.Run(c.format.String()+"-"+c.order.String(), func(b *testing.B) {
			b.ReportAllocs()
			i := uint64(0)
			for b.Loop() {
				if _, err := r.value(ref{feeder: 0, col: 2}, i%1_000_000, time.Time{}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		s.Close()
	}
}

// BenchmarkOpen opens a 1,000,000-row feeder: the time to check and index
// it, and what it holds (heap-bytes) against the file's size.
func BenchmarkOpen(b *testing.B) {
	path := millionRows(b)
	info, _ := os.Stat(path)
	var grew int64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, err := Open(context.Background(), 1, map[string]Spec{"u": File{Path: path, Format: CSV, Order: Sequential}})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		grew = int64(after.HeapAlloc) - int64(before.HeapAlloc)
		s.Close()
	}
	b.ReportMetric(float64(grew), "heap-bytes")
	b.ReportMetric(float64(info.Size()), "file-bytes")
}

// BenchmarkFlatMemory renders b.N requests (path and body) from a
// 1,000,000-row feeder in sequential and random order and reports how much
// the heap and the memory taken from the OS grew meanwhile: run it with
// -benchtime 10000000x for a 10-million-request run.
func BenchmarkFlatMemory(b *testing.B) {
	path := millionRows(b)
	s, err := Open(context.Background(), 1, map[string]Spec{
		"n":   Seq{},
		"seq": File{Path: path, Format: CSV, Order: Sequential},
		"rnd": File{Path: path, Format: CSV, Order: Random},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	u, err1 := s.Compile("/users/${seq.user}?r=${rnd.id}", URL)
	body, err2 := s.CompileJSON(map[string]any{"id": "${n}", "mail": "${seq.email}", "other": "${rnd.email}"})
	if err1 != nil || err2 != nil {
		b.Fatal(err1, err2)
	}
	r := s.NewRenderer()
	buf := make([]byte, 0, 512)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	i := uint64(0)
	for b.Loop() {
		buf, err = u.Append(buf[:0], r, i, time.Time{})
		if err == nil {
			buf, err = body.Append(buf, r, i, time.Time{})
		}
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)), "heap-growth-bytes")
	b.ReportMetric(float64(int64(after.Sys)-int64(before.Sys)), "sys-growth-bytes")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs), "mallocs")
}
