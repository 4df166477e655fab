package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/sample"
)

// A gRPC server that answers but serves no reflection: tandem load says
// so and what to do (it used to say "cannot reach"), and with the
// service's .proto file, given by an absolute path and no import path, the
// run goes through.
func TestLoadGRPCWithoutReflection(t *testing.T) {
	s, err := sample.Start(context.Background(), sample.Options{Build: sample.BuildA, DataDir: t.TempDir(), Blocks: 100, Work: 1, NoReflection: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	target := "grpc://" + s.GRPCAddr() + "/tandem.sample.v1.Ledger/Ping"

	code, _, stderr := tandem(t, "load", target, "--requests", "5", "--timeout", "2s")
	if code == exitOK || !strings.Contains(stderr, "does not serve gRPC reflection") || !strings.Contains(stderr, "--proto") ||
		strings.Contains(stderr, "cannot reach") {
		t.Errorf("without reflection or protos: exit %d, %s; want the reflection message, not cannot reach", code, stderr)
	}

	proto, err := filepath.Abs("../../sample/ledgerpb/ledger.proto")
	if err != nil {
		t.Fatal(err)
	}
	code, out, stderr := tandem(t, "load", target, "--requests", "5", "--timeout", "2s", "--format", "json", "--proto", proto)
	var got struct{ Requests, OK int64 }
	json.Unmarshal([]byte(out), &got)
	if code != exitOK || got.OK != 5 {
		t.Errorf("with --proto %s: exit %d, %+v, %s; want 5 ok", proto, code, got, stderr)
	}
}

// A study in a subdirectory whose protos import google/api/annotations.proto
// validates from any working directory (proto and import_paths are the
// study file's, ${studydir} expanded), and a wrong import path fails
// validate at the proto key's line, listing where it looked.
func TestStudyProtosFromAnyDirectory(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "studies", "kv")
	writeFile(t, filepath.Join(sub, "protos", "kv", "v1", "kv.proto"), `syntax = "proto3";
package kv.v1;
import "google/api/annotations.proto";
import "kv/v1/types.proto";
service KV {
  rpc Get(Key) returns (Entry) { option (google.api.http) = { get: "/v1/{key}" }; }
}
`)
	writeFile(t, filepath.Join(sub, "protos", "kv", "v1", "types.proto"), `syntax = "proto3";
package kv.v1;
message Key { string key = 1; }
message Entry { string key = 1; bytes value = 2; }
`)
	study := func(importPath string) string {
		return `version: 1
name: kv
targets:
  - {name: a, endpoints: {grpc: "grpc://127.0.0.1:1"}}
calls:
  get:
    grpc:
      method: kv.v1.KV/Get
      request: {key: "k"}
      proto: [kv/v1/kv.proto]
      import_paths: ["` + importPath + `"]
scenarios:
  - {name: get, call: get, load: {concurrency: 1}}
`
	}
	good := filepath.Join(sub, "good.yaml")
	writeFile(t, good, study("${studydir}/protos"))
	rel := filepath.Join(sub, "relative.yaml")
	writeFile(t, rel, study("protos"))
	bad := filepath.Join(sub, "bad.yaml")
	writeFile(t, bad, study("nowhere"))
	for _, wd := range []string{dir, sub, t.TempDir()} {
		t.Chdir(wd)
		for _, f := range []string{good, rel} {
			if code, out, stderr := tandem(t, "validate", f); code != exitOK {
				t.Errorf("validate %s from %s: exit %d\n%s%s", f, wd, code, out, stderr)
			}
		}
		code, out, stderr := tandem(t, "validate", bad)
		msg := out + stderr
		for _, want := range []string{bad + ":11:", "kv/v1/kv.proto not found", filepath.Join(sub, "nowhere", "kv", "v1", "kv.proto")} {
			if code != exitBadInput || !strings.Contains(msg, want) {
				t.Errorf("validate %s from %s: exit %d, %q lacks %q", bad, wd, code, msg, want)
			}
		}
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
