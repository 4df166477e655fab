package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tandem-bench/tandem/results"
)

// The terminal report ends with its summary: a line per comparison, compat
// in one line, and a finding seen in six scenarios of one target once,
// naming them (it used to print six times, after the metrics tables).
func TestTextEndsWithSummary(t *testing.T) {
	r, err := results.Read("testdata/results.json")
	if err != nil {
		t.Fatal(err)
	}
	r.Findings = nil
	for i := range 6 {
		r.Findings = append(r.Findings, results.Finding{ID: "delayed-ack", Target: "b", Scenario: fmt.Sprintf("s%d", i), Summary: "b's answers wait for a delayed ACK"})
	}
	r.Findings = append(r.Findings, results.Finding{ID: "delayed-ack", Target: "a", Scenario: "s0", Summary: "a's too"})
	var b bytes.Buffer
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	i := strings.LastIndex(out, "\nSummary\n")
	if i < 0 || strings.LastIndex(out, "\nMetrics of ") > i {
		t.Fatalf("the report does not end with its summary:\n%s", out)
	}
	summary := out[i:]
	for _, want := range []string{
		"getbalance-jsonrpc-latency, 1 client: b is 290× slower than a\n",
		"compat against a: 16 cases",
		"finding delayed-ack on b (6 scenarios: s0, s1, s2, s3, s4, s5): b's answers wait for a delayed ACK\n",
		"finding delayed-ack on a (s0): a's too\n",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	if n := strings.Count(out, "delayed ACK"); n != 1 {
		t.Errorf("the finding is printed %d times, want once", n)
	}
}

// Fitted to a terminal's width, every line of the report fits it; cells
// wrap at spaces.
func TestTextFitsWidth(t *testing.T) {
	r, err := results.Read("testdata/results.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{160, 200} {
		var b bytes.Buffer
		if err := TextWidth(&b, r, false, width); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("width %d: a line of %d runes: %q", width, n, l)
			}
		}
		if !strings.Contains(b.String(), "getblock-latency") {
			t.Fatalf("width %d: the report lost its scenarios", width)
		}
	}
	// narrower than the sweep's 14 columns' longest words: they wrap at
	// spaces and no word is cut
	var b bytes.Buffer
	if err := TextWidth(&b, r, false, 100); err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"connections", "SATURATED", "confirmed"} {
		if !strings.Contains(b.String(), word) {
			t.Errorf("width 100: %q was cut", word)
		}
	}
}
