// Package uplot embeds uPlot (MIT, see LICENSE and README.md), the chart
// library of tandem's pages: the HTML report inlines it, tandem serve
// serves it.
package uplot

import _ "embed"

// JS is uPlot's minified script (it defines the global uPlot).
//
//go:embed uPlot.iife.min.js
var JS string

// CSS is uPlot's style sheet.
//
//go:embed uPlot.min.css
var CSS string
