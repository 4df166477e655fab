package protofiles

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write makes the files of a tree under dir.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, src := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const kv = `syntax = "proto3";
package kv.v1;
import "google/api/annotations.proto";
import "google/api/field_behavior.proto";
import "google/rpc/status.proto";
import "gogoproto/gogo.proto";
import "google/protobuf/timestamp.proto";
import "kv/v1/types.proto";

message GetRequest {
  string key = 1 [(google.api.field_behavior) = REQUIRED, (gogoproto.moretags) = "yaml:\"key\""];
}
message GetResponse {
  Entry entry = 1;
  google.rpc.Status status = 2;
  google.protobuf.Timestamp at = 3;
}
service KV {
  rpc Get(GetRequest) returns (GetResponse) {
    option (google.api.http) = { get: "/v1/kv/{key}" };
  }
}
`

const types = `syntax = "proto3";
package kv.v1;
message Entry { string key = 1; bytes value = 2; }
`

func TestBuiltinImports(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"proto/kv/v1/kv.proto": kv, "proto/kv/v1/types.proto": types})
	root := filepath.Join(dir, "proto")
	for _, tc := range []struct {
		name        string
		file        string
		importPaths []string
	}{
		{"relative to an import path", "kv/v1/kv.proto", []string{root}},
		{"absolute, under an import path", filepath.Join(root, "kv/v1/kv.proto"), []string{root}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := Compile(context.Background(), []string{tc.file}, tc.importPaths)
			if err != nil {
				t.Fatal(err)
			}
			md, err := Method(files, "kv.v1.KV", "Get")
			if err != nil {
				t.Fatal(err)
			}
			if got := md.Output().Fields().ByName("status").Message().FullName(); got != "google.rpc.Status" {
				t.Errorf("status field is %s", got)
			}
		})
	}
}

func TestAbsoluteFileOutsideImportPaths(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"a/svc.proto": `syntax = "proto3"; package p; import "common.proto"; service S { rpc M(Msg) returns (Msg); }`,
		"lib/common.proto": `syntax = "proto3"; package p; message Msg {}`})
	files, err := Compile(context.Background(), []string{filepath.Join(dir, "a/svc.proto")}, []string{filepath.Join(dir, "lib")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Method(files, "p.S", "M"); err != nil {
		t.Fatal(err)
	}
}

func TestMissingImportSaysWhereItLooked(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"one/a.proto": "syntax = \"proto3\";\npackage a;\nimport \"b.proto\";\n",
		"two/b.proto": "syntax = \"proto3\";\npackage b;\n\nimport \"c/missing.proto\";\n",
	})
	paths := []string{filepath.Join(dir, "one"), filepath.Join(dir, "two")}
	_, err := Compile(context.Background(), []string{"a.proto"}, paths)
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("got %v, want a NotFoundError", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"b.proto:4:8", // the import's own line and column
		`import "c/missing.proto" not found (a.proto → b.proto → c/missing.proto)`,
		filepath.Join(dir, "one", "c", "missing.proto"),
		filepath.Join(dir, "two", "c", "missing.proto"),
		"built in (google/protobuf/*, google/api/*, google/rpc/*, gogoproto/*)",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}

	_, err = Compile(context.Background(), []string{"nowhere.proto"}, paths)
	if !errors.As(err, &nf) || len(nf.Chain) != 0 || len(nf.Searched) != 3 {
		t.Errorf("a missing file given: %v (%+v)", err, nf)
	}
}

func TestMethodErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"x.proto": `syntax = "proto3"; package p; message Msg {} service S { rpc M(Msg) returns (Msg); }`})
	files, err := Compile(context.Background(), []string{filepath.Join(dir, "x.proto")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ svc, method, want string }{
		{"p.S", "N", "service p.S has no method N"},
		{"p.Msg", "M", "p.Msg is not a service"},
		{"q.S", "M", "no service q.S in x.proto"},
	} {
		if _, err := Method(files, tc.svc, tc.method); err == nil || err.Error() != tc.want {
			t.Errorf("Method(%s, %s) = %v, want %q", tc.svc, tc.method, err, tc.want)
		}
	}
}

// A device or a directory given as a proto is refused, not read.
func TestNotARegularFile(t *testing.T) {
	for _, f := range []string{"/dev/zero", t.TempDir()} {
		_, err := Compile(context.Background(), []string{f}, nil)
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Compile(%s) = %v; want not a regular file", f, err)
		}
	}
}
