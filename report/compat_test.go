package report

import (
	"testing"

	"github.com/tandem-bench/tandem/results"
)

// A recorded case is named by its recording and exchange in the
// differences table, a listed case by its variables.
func TestDifferenceExampleNamesTheCase(t *testing.T) {
	diff := []results.Difference{{Target: "b", Path: "n", Kind: "value", Reference: "1", Value: "2"}}
	cases := []results.Case{
		{Call: "jsonrpc get", Mode: "equal", Differences: diff, Recording: &results.RecordedCase{File: "traffic.jsonl", Exchange: 4}},
		{Call: "get", Mode: "equal", Vars: map[string]any{"n": 5}, Differences: diff},
	}
	tb := differenceTable("d", cases, func(cs results.Case) []results.Difference { return cs.Differences }, 10)
	if len(tb.Rows) != 2 || tb.Rows[0][5] != "traffic.jsonl#4" || tb.Rows[1][5] != "n=5" {
		t.Errorf("rows %q; want the first case named traffic.jsonl#4, the second n=5", tb.Rows)
	}
}
