package main

import (
	"github.com/spf13/pflag"
	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/verdict"
)

// formatVar defines --format among the formats that render kind, text by
// default.
func formatVar(f *pflag.FlagSet, p *string, kind report.Kind) {
	cli.ChoiceVar(f, p, "format", "text", report.FormatList(kind), report.FormatNames(kind)...)
}

// textMdOrJSON defines --format of text, md or json.
func textMdOrJSON(f *pflag.FlagSet, p *string) {
	cli.ChoiceVar(f, p, "format", "text", "text, md or json", "text", "md", "json")
}

// gateFlags defines the flags that say how compare and the history's
// gate judge rows: --max-regression (maxRegression by default),
// --on-inconclusive and --allow-changed.
func gateFlags(f *pflag.FlagSet, maxRegression *float64, on *verdict.OnInconclusive, allowChanged *bool, def float64) {
	f.Float64Var(maxRegression, "max-regression", def, "tolerated worsening in percent of the base (latency grown, throughput fallen)")
	*on = verdict.InconclusiveFails
	f.Var(on, "on-inconclusive", "what an undecided row does to the gate: fail (a gate that cannot tell does not pass) or pass")
	f.BoolVar(allowChanged, "allow-changed", false, "pass rows whose definition changed (another call, load or engine); they are listed as not comparable")
}
