// Package protofiles compiles the .proto files that define a gRPC service
// when the server does not serve reflection. A file is found by its path
// (absolute, or relative to the working directory) or under one of the
// import paths; its imports are searched in the import paths, then among
// the files linked into tandem: google/protobuf/* (the well-known types),
// google/api/* (annotations, http, field behaviour, …), google/rpc/*
// (status, code, error details) and gogoproto/gogo.proto, which services'
// protos routinely import. An import found nowhere is a *NotFoundError
// that lists every place searched and the chain of imports that led to it.
package protofiles

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/ast"
	"github.com/bufbuild/protocompile/linker"
	"github.com/bufbuild/protocompile/parser"
	"github.com/bufbuild/protocompile/reporter"
	gogoproto "github.com/cosmos/gogoproto/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	// Linked for the files they register: what Builtin resolves.
	_ "github.com/cosmos/gogoproto/gogoproto"
	_ "google.golang.org/genproto/googleapis/api/annotations"
	_ "google.golang.org/genproto/googleapis/api/httpbody"
	_ "google.golang.org/genproto/googleapis/rpc/code"
	_ "google.golang.org/genproto/googleapis/rpc/errdetails"
	_ "google.golang.org/genproto/googleapis/rpc/status"
)

// BuiltinDirs are the directories of imports resolved from tandem's own
// binary when no import path has them.
var BuiltinDirs = []string{"google/protobuf", "google/api", "google/rpc", "gogoproto"}

// builtin finds a file linked into the binary, by its import name.
func builtin(name string) (protoreflect.FileDescriptor, bool) {
	if !slices.ContainsFunc(BuiltinDirs, func(d string) bool { return strings.HasPrefix(name, d+"/") }) {
		return nil, false
	}
	if fd, err := protoregistry.GlobalFiles.FindFileByPath(name); err == nil {
		return fd, true
	}
	if fd, err := gogoproto.HybridResolver.FindFileByPath(name); err == nil {
		return fd, true
	}
	return nil, false
}

// NotFoundError is a file, or an import, found nowhere.
type NotFoundError struct {
	// Name is the file or import as written.
	Name string
	// Chain is the files whose imports led to Name, the one given first
	// (empty when Name is one of the files given).
	Chain []string
	// Searched is every path tried, in order, then "built in" if the
	// builtin files were searched too.
	Searched []string
}

func (e *NotFoundError) Error() string {
	var b strings.Builder
	if len(e.Chain) > 0 {
		fmt.Fprintf(&b, "import %q not found (%s → %s)", e.Name, strings.Join(e.Chain, " → "), e.Name)
	} else {
		fmt.Fprintf(&b, "%s not found", e.Name)
	}
	fmt.Fprintf(&b, "; searched %s", strings.Join(e.Searched, ", "))
	return b.String()
}

// Compile compiles files, each found by its own path or under one of
// importPaths (none: the working directory), and their imports, searched in
// importPaths and then among the builtin files.
func Compile(ctx context.Context, files, importPaths []string) (linker.Files, error) {
	if len(files) == 0 {
		return nil, errors.New("no .proto files")
	}
	names, paths := place(files, importPaths)
	r := &resolver{paths: paths, found: map[string][]byte{}}
	comp := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(r),
		SourceInfoMode: protocompile.SourceInfoNone,
	}
	out, err := comp.Compile(ctx, names...)
	if err != nil {
		var nf *NotFoundError
		if errors.As(err, &nf) {
			nf.Chain = r.chain(names, nf.Name)
		}
		return nil, err
	}
	return out, nil
}

// place names each file as the compiler will look for it. A relative file
// that one of the import paths holds is that name (as protoc takes it);
// otherwise a file that exists (absolute, or relative to the working
// directory) is named relative to the import path that holds it, or by its
// base name with its directory added to the paths. Anything else is a name
// to search for, which fails listing where it looked.
func place(files, importPaths []string) (names, paths []string) {
	paths = slices.Clone(importPaths)
	if len(paths) == 0 {
		paths = []string{"."}
	}
	for _, f := range files {
		if !filepath.IsAbs(f) && slices.ContainsFunc(paths, func(p string) bool { return exists(filepath.Join(p, f)) }) {
			names = append(names, filepath.ToSlash(f))
			continue
		}
		if !exists(f) {
			names = append(names, filepath.ToSlash(f))
			continue
		}
		if name, ok := under(paths, f); ok {
			names = append(names, name)
			continue
		}
		if dir := filepath.Dir(f); !slices.Contains(paths, dir) {
			paths = append(paths, dir)
		}
		names = append(names, filepath.Base(f))
	}
	return names, paths
}

// maxSource bounds a .proto file's size.
const maxSource = 16 << 20

// readSource reads a regular file of at most maxSource bytes (never a
// device or a pipe that would not end).
func readSource(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file", path)
	case fi.Size() > maxSource:
		return nil, fmt.Errorf("%s: %d bytes: want at most %d", path, fi.Size(), maxSource)
	}
	return io.ReadAll(io.LimitReader(f, maxSource+1))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// under is f's name relative to the first of paths that holds it.
func under(paths []string, f string) (string, bool) {
	af, err := filepath.Abs(f)
	if err != nil {
		return "", false
	}
	for _, p := range paths {
		ap, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(ap, af); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel), true
		}
	}
	return "", false
}

// resolver finds files in its paths, then among the builtin ones, and
// keeps the source of each file it found (to explain a missing import).
type resolver struct {
	paths []string
	mu    sync.Mutex
	found map[string][]byte
}

func (r *resolver) FindFileByPath(name string) (protocompile.SearchResult, error) {
	var searched []string
	for _, p := range r.paths {
		path := filepath.Join(p, filepath.FromSlash(name))
		searched = append(searched, path)
		src, err := readSource(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return protocompile.SearchResult{}, err
		}
		r.mu.Lock()
		r.found[name] = src
		r.mu.Unlock()
		return protocompile.SearchResult{Source: io.NopCloser(bytes.NewReader(src))}, nil
	}
	if fd, ok := builtin(name); ok {
		// as a descriptor proto, so that it links against the compiler's
		// own copies of its imports (the gogo registry has its own
		// google/protobuf/descriptor.proto)
		return protocompile.SearchResult{Proto: protodesc.ToFileDescriptorProto(fd)}, nil
	}
	searched = append(searched, "built in ("+strings.Join(BuiltinDirs, "/*, ")+"/*)")
	return protocompile.SearchResult{}, &NotFoundError{Name: name, Searched: searched}
}

// chain is the shortest path of imports from one of roots to a file that
// imports missing, roots first, from the sources found.
func (r *resolver) chain(roots []string, missing string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(roots, missing) {
		return nil
	}
	from := map[string]string{}
	queue := slices.Clone(roots)
	seen := map[string]bool{}
	for _, root := range roots {
		seen[root] = true
	}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for _, imp := range imports(f, r.found[f]) {
			if imp == missing {
				path := []string{f}
				for p, ok := from[f]; ok; p, ok = from[p] {
					path = append([]string{p}, path...)
				}
				return path
			}
			if !seen[imp] {
				seen[imp] = true
				from[imp] = f
				queue = append(queue, imp)
			}
		}
	}
	return nil
}

// imports lists the files a source imports (none if it does not parse).
func imports(name string, src []byte) []string {
	if src == nil {
		return nil
	}
	file, err := parser.Parse(name, bytes.NewReader(src), reporter.NewHandler(nil))
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range file.Decls {
		if imp, ok := d.(*ast.ImportNode); ok {
			out = append(out, imp.Name.AsString())
		}
	}
	return out
}

// Method finds the method svc/method among files.
func Method(files linker.Files, svc, method string) (protoreflect.MethodDescriptor, error) {
	for _, f := range files {
		d := f.FindDescriptorByName(protoreflect.FullName(svc))
		if d == nil {
			continue
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			return nil, fmt.Errorf("%s is not a service", svc)
		}
		md := sd.Methods().ByName(protoreflect.Name(method))
		if md == nil {
			return nil, fmt.Errorf("service %s has no method %s", svc, method)
		}
		return md, nil
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Path())
	}
	return nil, fmt.Errorf("no service %s in %s", svc, strings.Join(names, ", "))
}
