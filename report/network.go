package report

import (
	"cmp"
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
		"the round trip is the target's first-answer call, through the link and straight, when the link opened; " +
		"measured is what crossed the link while it was open: each piece's mean time in it, and losses",
		Header: []string{"target", "endpoint", "link", "up", "down", "round trip (straight)", "measured (up / down)"}}
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
			ep := lk.Endpoint
			if lk.Node != "" {
				ep = lk.Node + " " + ep
			}
			t.Rows = append(t.Rows, []string{tg.Name, ep, lk.Listen + " → " + lk.Upstream + viaText(nw.Via),
				conditionsText(nw.Up), conditionsText(nw.Down), rtt, measuredText(lk.MeasuredUp, lk.MeasuredDown)})
		}
	}
	return t, len(t.Rows) > 0
}

// peerTable lists the links between each group's nodes: configured and
// measured; false when no group has them.
func peerTable(ts []results.Target) (table, bool) {
	t := table{Title: "Links between nodes", Note: "each ordered pair of a group's nodes has a link of its own (docs/network.md); " +
		"up is what the first node sends; measured is what crossed the link while it was open",
		Header: []string{"target", "from → to", "port", "up", "down", "measured (up / down)"}}
	for _, tg := range ts {
		pn := tg.PeerNetwork
		if pn == nil {
			continue
		}
		for _, lk := range pn.Links {
			pair := lk.From + " → " + lk.To
			if lk.FromRegion != "" || lk.ToRegion != "" {
				pair += fmt.Sprintf(" (%s → %s)", cmp.Or(lk.FromRegion, "–"), cmp.Or(lk.ToRegion, "–"))
			}
			t.Rows = append(t.Rows, []string{tg.Name, pair + viaText(pn.Via), lk.Port, conditionsText(lk.Up), conditionsText(lk.Down),
				measuredText(lk.MeasuredUp, lk.MeasuredDown)})
		}
	}
	return t, len(t.Rows) > 0
}

// viaText marks a path whose loss and bandwidth the kernel does.
func viaText(via string) string {
	if via == "" {
		return ""
	}
	return " (via " + via + ")"
}

// measuredText says what crossed a link each way: the mean time a piece
// was held, and the losses (of the packets, through the kernel).
func measuredText(up, down *results.LinkFlow) string {
	if up == nil || down == nil {
		return "–"
	}
	if up.Pieces == 0 && down.Pieces == 0 {
		return "nothing crossed"
	}
	s := fmt.Sprintf("held %s / %s", human.Duration(float64(up.MeanHeldNs)), human.Duration(float64(down.MeanHeldNs)))
	if up.Lost > 0 || down.Lost > 0 {
		s += fmt.Sprintf("; lost %d / %d", up.Lost, down.Lost)
	}
	if up.Packets > 0 || down.Packets > 0 {
		s += fmt.Sprintf(" of %d / %d packets", up.Packets, down.Packets)
	}
	if up.Overflow > 0 || down.Overflow > 0 {
		s += fmt.Sprintf("; %d / %d over the cap's queue", up.Overflow, down.Overflow)
	}
	return s
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
