package history

import (
	"context"
	"math"
	"strings"
	"testing"
)

// rounds are five p50s (µs) around level, a little different each day.
func rounds(level float64, d int) []float64 {
	out := make([]float64, 5)
	for i := range out {
		out[i] = level * (1 + 0.01*math.Sin(float64(7*d+3*i)))
	}
	return out
}

// A history of twelve steady runs and then four 25 % slower: one change
// point, at the first slow run, a regression with the commits either side;
// acknowledged as expected it is no longer open; the gate with
// --on-change-point fails a run that starts a slowdown and passes one that
// does not.
func TestChangePoints(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			var ids []string
			for d := 1; d <= 16; d++ {
				level := 100.0
				if d >= 13 {
					level = 125
				}
				r, _, err := s.Add(ctx, runOf(t, d, rounds(level, d), nil), Meta{Branch: "main", Commit: strings.Repeat(string(rune('a'+d%6)), 40)})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, r.ID)
			}
			cps, err := s.Changes(ctx, ChangesOptions{Study: "gate"})
			if err != nil {
				t.Fatal(err)
			}
			var lat []ChangePoint
			for _, c := range cps {
				if c.Series.Metric == "headline" {
					lat = append(lat, c)
				}
			}
			if len(lat) != 1 {
				t.Fatalf("change points %+v; want one on the headline", cps)
			}
			c := lat[0]
			if c.Run != ids[12] || c.PrevRun != ids[11] || c.Kind != Regression || c.Ratio < 1.2 || c.Ratio > 1.3 || !c.Open() || c.Commit == "" {
				t.Errorf("change point %+v; want a regression of about ×1.25 at the 13th run", c)
			}
			if !strings.Contains(c.Text(), "a regression, from run "+ids[12][:12]) {
				t.Errorf("text %q", c.Text())
			}
			if got, _ := s.Changes(ctx, ChangesOptions{Study: "gate", Since: c.At.Add(1)}); len(got) != 0 {
				t.Errorf("since after it: %+v; want none", got)
			}
			acked, err := s.Ack(ctx, "gate", "main", c.Series, ids[12][:10], AckExpected, "a bigger block size")
			if err != nil || acked.Ack != AckExpected {
				t.Fatalf("ack: %+v, %v", acked, err)
			}
			cps, _ = s.Changes(ctx, ChangesOptions{Study: "gate", Series: c.Series.Key()})
			if len(cps) != 1 || cps[0].Ack != AckExpected || cps[0].Note != "a bigger block size" || cps[0].Open() {
				t.Errorf("after the ack: %+v", cps)
			}
			if _, err := s.Ack(ctx, "gate", "main", c.Series, ids[5], AckExpected, ""); err == nil {
				t.Error("an ack of a run that starts no change point was taken")
			}

			gate := func(level float64) Gate {
				g, err := s.GateRun(ctx, runOf(t, 20, rounds(level, 20), nil), GateOptions{BaseBranch: "main", Baseline: "last", MaxRegression: 50, OnChangePoint: true})
				if err != nil {
					t.Fatal(err)
				}
				return g
			}
			if g := gate(160); !g.Failed || !strings.Contains(strings.Join(g.Reasons, "\n"), "a change point starts here") {
				t.Errorf("a run 28 %% slower than the last four: failed %v, reasons %v, change points %+v", g.Failed, g.Reasons, g.ChangePoints)
			}
			if g := gate(125); g.Failed || len(g.ChangePoints) != 0 {
				t.Errorf("an unchanged rerun: failed %v, reasons %v, change points %+v", g.Failed, g.Reasons, g.ChangePoints)
			}
		})
	}
}
