package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tandem-bench/tandem/internal/human"

	"github.com/tandem-bench/tandem/cost"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/verdict"
)

// Kind is a kind of output that formats render.
type Kind int

// The kinds of output, each a command's.
const (
	// ForResults is a results file (tandem report).
	ForResults Kind = iota
	// ForSample is one load run's sample (tandem load).
	ForSample
	// ForComparison is two runs held against each other (tandem compare).
	ForComparison
	// ForCost is counted costs (tandem cost).
	ForCost
)

// Format is an output format: its name and its renderer of each kind of
// output it has one for (nil: not in this format).
type Format struct {
	// Name is the format's --format value.
	Name string
	// Results renders a results file.
	Results func(io.Writer, *results.Results) error
	// Sample renders one load run's sample with what is said of it.
	Sample func(io.Writer, SampleRun) error
	// Comparison renders a comparison of two runs.
	Comparison func(io.Writer, verdict.Comparison) error
	// Cost renders counted costs.
	Cost func(io.Writer, *cost.Report) error
}

// Formats is the one list of output formats, in the order help text names
// them. Each call returns a new slice.
func Formats() []Format {
	return []Format{
		{Name: "text", Results: Text, Sample: sampleText, Comparison: comparisonText, Cost: cost.Text},
		{Name: "md", Results: Markdown, Sample: sampleMarkdown, Comparison: comparisonMarkdown},
		{Name: "json", Sample: sampleJSON, Comparison: comparisonJSON, Cost: costJSON},
		{Name: "html", Results: HTML, Comparison: comparisonHTML},
		{Name: "csv", Results: CSV},
		{Name: "bench", Results: Bench},
		{Name: "hdr", Results: HDRLog},
	}
}

// Renders reports whether f has a renderer for kind.
func (f Format) Renders(kind Kind) bool {
	switch kind {
	case ForResults:
		return f.Results != nil
	case ForSample:
		return f.Sample != nil
	case ForComparison:
		return f.Comparison != nil
	case ForCost:
		return f.Cost != nil
	}
	return false
}

// FormatNames lists the names of the formats that render kind, in the
// order of Formats.
func FormatNames(kind Kind) []string {
	var names []string
	for _, f := range Formats() {
		if f.Renders(kind) {
			names = append(names, f.Name)
		}
	}
	return names
}

// FormatList is FormatNames in words, for help text and errors: "text, md
// or json".
func FormatList(kind Kind) string { return human.Or(FormatNames(kind)) }

// LookupFormat finds the format called name among those that render kind.
func LookupFormat(name string, kind Kind) (Format, bool) {
	for _, f := range Formats() {
		if f.Name == name && f.Renders(kind) {
			return f, true
		}
	}
	return Format{}, false
}

// costJSON writes counted costs as indented JSON.
func costJSON(w io.Writer, r *cost.Report) error { return encodeJSON(w, r) }

// Costs writes counted costs to w in format and, when path is not
// empty, as the json format does to that file (WriteCostFile); nothing
// reaches w if rendering fails.
func Costs(w io.Writer, format string, r *cost.Report, path string) error {
	f, ok := LookupFormat(format, ForCost)
	if !ok {
		return fmt.Errorf("format %q: want %s", format, FormatList(ForCost))
	}
	var b strings.Builder
	if err := f.Cost(&b, r); err != nil {
		return err
	}
	if path != "" {
		if err := WriteCostFile(path, r); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCostFile writes counted costs to path as the json format does
// (indented, control characters escaped), whole or not at all: a
// baseline for later runs.
func WriteCostFile(path string, r *cost.Report) error {
	var b strings.Builder
	if err := costJSON(&b, r); err != nil {
		return err
	}
	return results.WriteFileAtomic(path, []byte(b.String()))
}
