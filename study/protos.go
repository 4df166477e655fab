package study

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/protofiles"
)

// compileProtos resolves each gRPC call's proto files and import paths
// against the study file's directory (${studydir} expanded, as everywhere
// in the study) and compiles them with the method they name, so that a
// missing file, a bad import path or a proto that does not compile is an
// error at its call before any target starts. The calls keep the
// resolved paths.
func compileProtos(s *Study, studyFile string, pos map[string]Pos) ErrorList {
	v := &validator{s: s, file: studyFile, pos: pos, bad: map[string]bool{}}
	dir := filepath.Dir(studyFile)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	for _, name := range slices.Sorted(maps.Keys(s.Calls)) {
		c := s.Calls[name]
		if c == nil || c.GRPC == nil || len(c.GRPC.Proto) == 0 {
			continue
		}
		g := c.GRPC
		path := "calls." + name + ".grpc"
		imports, ok := v.studyPaths(path+".import_paths", g.ImportPaths, dir, nil)
		if !ok {
			continue
		}
		if len(imports) == 0 {
			// the study file's directory, as for every other path of it
			imports = []string{dir}
		}
		files, ok := v.studyPaths(path+".proto", g.Proto, dir, imports)
		if !ok {
			continue
		}
		given := len(g.ImportPaths) > 0
		g.Proto, g.ImportPaths = files, imports
		compiled, err := protofiles.Compile(context.Background(), g.Proto, g.ImportPaths)
		var nf *protofiles.NotFoundError
		switch {
		case errors.As(err, &nf) && given:
			v.errorf(path+".import_paths", "directories, from the study file's, that hold the .proto files and their imports", "%v", err)
			continue
		case err != nil:
			v.errorf(path+".proto", "the service's .proto files, from the study file's directory or under import_paths", "%v", err)
			continue
		}
		svc, m, _ := strings.Cut(strings.TrimPrefix(g.Method, "/"), "/")
		if _, err := protofiles.Method(compiled, svc, m); err != nil {
			v.errorf(path+".method", "a method the .proto files define", "%v", err)
		}
	}
	return v.errs
}

// studyPaths resolves paths of a study key against dir, with ${studydir}
// expanded; any other placeholder is an error at its element. A relative
// path that one of imports holds stays a name to find there.
func (v *validator) studyPaths(key string, paths []string, dir string, imports []string) ([]string, bool) {
	out := make([]string, 0, len(paths))
	ok := true
	for i, p := range paths {
		p = strings.ReplaceAll(p, "${studydir}", dir)
		if strings.Contains(p, "${") {
			v.errorf(fmt.Sprintf("%s[%d]", key, i), "a path; ${studydir} is the only placeholder here", "placeholder in %q", paths[i])
			ok = false
			continue
		}
		inImports := slices.ContainsFunc(imports, func(d string) bool {
			_, err := os.Stat(filepath.Join(d, p))
			return err == nil
		})
		if _, err := os.Stat(filepath.Join(dir, p)); !filepath.IsAbs(p) && !inImports && (err == nil || imports == nil) {
			p = filepath.Join(dir, p)
		}
		out = append(out, p)
	}
	return out, ok
}
