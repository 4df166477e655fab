package report

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/tandem-bench/tandem/results"
)

// WriteFiles writes the reports a run keeps beside its results.json in
// dir: report.html, report.md and report.txt, each atomically.
func WriteFiles(dir string, res *results.Results) error {
	for _, f := range []struct {
		name   string
		render func(io.Writer, *results.Results) error
	}{{"report.html", HTML}, {"report.md", Markdown}, {"report.txt", Text}} {
		var b strings.Builder
		if err := f.render(&b, res); err != nil {
			return err
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, f.name), []byte(b.String())); err != nil {
			return err
		}
	}
	return nil
}
