// Package runtest holds what the runner's own tests and its drain tests
// (runner/drains) share: a study read from a string, a run's results read
// back and checked against the schema, and a progress writer a test can
// watch while a run writes to it. Import it from tests only.
package runtest

import (
	"bytes"
	"os"
	"sync"
	"testing"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// Parse validates the study in src, named test.yaml in its errors; an
// invalid one ends the test.
func Parse(t testing.TB, src string) *study.Study {
	t.Helper()
	s, err := study.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatalf("study: %v", err)
	}
	return s
}

// ReadResults reads the results file at path; one that does not validate
// against the schema fails the test, one that cannot be read ends it.
func ReadResults(t testing.TB, path string) *results.Results {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Validate(data); err != nil {
		t.Errorf("%s does not validate against the schema: %v", path, err)
	}
	r, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Progress is a progress writer that can be read while a run writes to
// it; OnLog, if set, sees every write first.
type Progress struct {
	OnLog func(string)
	mu    sync.Mutex
	buf   bytes.Buffer
}

// Write records p, after OnLog has seen it.
func (p *Progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.OnLog != nil {
		p.OnLog(string(b))
	}
	return p.buf.Write(b)
}

// String is everything written so far.
func (p *Progress) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}
