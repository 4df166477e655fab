package study

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/record"
)

// writeRecording writes a recording of exchanges of the given protocols.
func writeRecording(t *testing.T, path string, protocols ...record.Protocol) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	w, err := record.Create(path, record.Header{Upstream: "http://127.0.0.1:1", Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range protocols {
		ex := record.Exchange{Protocol: p, Method: "POST", Path: "/", Status: 200}
		if p == record.GRPC {
			ex.Path = "/p.S/Info"
		}
		if err := w.Write(&ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

const recordingStudy = `version: 1
name: recordings
targets:
  - {name: a, endpoints: {grpc: "127.0.0.1:1", http: "http://127.0.0.1:2/"}}
  - {name: b, endpoints: {grpc: "127.0.0.1:3", http: "http://127.0.0.1:4/"}}
calls:
  info: {grpc: {method: p.S/Info}}
compat:
  recordings:
    - one.jsonl
    - {file: sub/two.jsonl, endpoint: http, ignore: [time]}
`

func TestRecordings(t *testing.T) {
	dir := t.TempDir()
	writeRecording(t, filepath.Join(dir, "one.jsonl"), record.JSONRPC, record.GRPC, record.HTTP1)
	writeRecording(t, filepath.Join(dir, "sub", "two.jsonl"), record.H2)
	path := filepath.Join(dir, "study.yaml")
	os.WriteFile(path, []byte(recordingStudy), 0o644)
	s, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := s.Compat.Recordings
	if len(recs) != 2 || recs[0].Path != filepath.Join(dir, "one.jsonl") || recs[0].Exchanges != 3 ||
		recs[1].Path != filepath.Join(dir, "sub", "two.jsonl") || recs[1].Exchanges != 1 || recs[1].Endpoint != "http" || recs[1].Ignore[0] != "time" {
		t.Errorf("recordings %+v", recs)
	}
	for _, c := range []struct {
		rec  Recording
		p    record.Protocol
		want string
	}{{recs[0], record.GRPC, "grpc"}, {recs[0], record.JSONRPC, "http"}, {recs[0], record.H2, "http"}, {recs[1], record.GRPC, "http"}} {
		if got, err := RecordingEndpoint(&s.Targets[0], &c.rec, c.p); got != c.want || err != nil {
			t.Errorf("endpoint of %s exchanges of %s: %q, %v; want %q", c.p, c.rec.File, got, err, c.want)
		}
	}
}

func TestRecordingErrors(t *testing.T) {
	cases := []struct {
		name  string
		study string
		write func(dir string)
		want  string // the error, with DIR for the directory
	}{
		{"missing file", recordingStudy, func(dir string) { writeRecording(t, filepath.Join(dir, "sub", "two.jsonl"), record.H2) },
			"DIR/study.yaml:10:7: compat.recordings[0]: open DIR/one.jsonl: no such file or directory (a recording written by tandem record (docs/recording.md))"},
		{"bad line", recordingStudy, func(dir string) {
			writeRecording(t, filepath.Join(dir, "one.jsonl"), record.HTTP1)
			writeRecording(t, filepath.Join(dir, "sub", "two.jsonl"), record.H2)
			f, _ := os.OpenFile(filepath.Join(dir, "one.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(`{"protocol":"smtp","method":"GET","path":"/"}` + "\n")
			f.Close()
		}, `DIR/one.jsonl:3:1: protocol "smtp": want http1, h2, grpc or jsonrpc (a recording line (docs/recording.md))`},
		{"not a recording", recordingStudy, func(dir string) {
			os.WriteFile(filepath.Join(dir, "one.jsonl"), []byte("version: 1\n"), 0o644)
			writeRecording(t, filepath.Join(dir, "sub", "two.jsonl"), record.H2)
		}, "DIR/one.jsonl:1:1: header: not JSON"},
		{"no endpoint for gRPC", strings.Replace(recordingStudy, `{grpc: "127.0.0.1:3", http: "http://127.0.0.1:4/"}`, `{http: "http://127.0.0.1:4/", admin: "http://127.0.0.1:5/"}`, 1),
			func(dir string) {
				writeRecording(t, filepath.Join(dir, "one.jsonl"), record.GRPC)
				writeRecording(t, filepath.Join(dir, "sub", "two.jsonl"), record.H2)
			}, "DIR/study.yaml:10:7: compat.recordings[0]: its grpc exchanges: target \"b\" has no endpoint named \"grpc\" and more than one endpoint: set the call's endpoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.write(dir)
			path := filepath.Join(dir, "study.yaml")
			os.WriteFile(path, []byte(c.study), 0o644)
			_, err := Read(path)
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error %v; want an ErrorList", err)
			}
			if want := strings.ReplaceAll(c.want, "DIR", dir); !strings.Contains(err.Error(), want) {
				t.Errorf("error\n%v\nwant\n%s", err, want)
			}
		})
	}
}
