package report

import (
	"fmt"
	"strings"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/link"
	"github.com/tandem-bench/tandem/results"
)

// networkTable lists the links on the generator's paths to the targets:
// each endpoint's configured conditions and the round trip measured
// through the link and straight to the target; false when no target's
// path went through a link.
func networkTable(ts []results.Target) (table, bool) {
	t := table{Title: "Network paths", Note: "the generator's path to each endpoint through a link in tandem's process (docs/network.md); " +
		"the round trip is the target's first-answer call, through the link and straight, when the link opened",
		Header: []string{"target", "endpoint", "link", "up", "down", "round trip (straight)"}}
	for _, tg := range ts {
		nw := tg.Network
		if nw == nil {
			continue
		}
		for _, lk := range nw.Links {
			rtt := "–"
			if lk.RTTNs > 0 {
				rtt = fmt.Sprintf("%s (%s), %s", human.Duration(float64(lk.RTTNs)), human.Duration(float64(lk.DirectRTTNs)), lk.RTTCall)
			}
			t.Rows = append(t.Rows, []string{tg.Name, lk.Endpoint, lk.Listen + " → " + lk.Upstream,
				conditionsText(nw.Up), conditionsText(nw.Down), rtt})
		}
	}
	return t, len(t.Rows) > 0
}

// conditionsText says a direction's conditions in a few words.
func conditionsText(c results.LinkConditions) string {
	var parts []string
	if c.DelayNs > 0 || c.JitterNs > 0 {
		d := "delay " + human.Duration(float64(c.DelayNs))
		if c.JitterNs > 0 {
			d += fmt.Sprintf(" ± %s %s", human.Duration(float64(c.JitterNs)), c.Distribution)
		}
		parts = append(parts, d)
	}
	if c.Loss > 0 {
		parts = append(parts, "loss "+human.Percent(c.Loss))
	}
	if c.BandwidthBytesPerS > 0 {
		parts = append(parts, link.FormatBandwidth(c.BandwidthBytesPerS))
	}
	if c.ResetAfterNs > 0 {
		parts = append(parts, "reset after "+human.Duration(float64(c.ResetAfterNs)))
	}
	if c.ResetAfterBytes > 0 {
		parts = append(parts, "reset after "+human.Bytes(c.ResetAfterBytes))
	}
	if len(parts) == 0 {
		return "passes"
	}
	return strings.Join(parts, ", ")
}
