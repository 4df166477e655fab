package results

import "testing"

// A mix's or a flow's scenario, and each of its parts, measured something
// else than a scenario of one call, and a call of a mix at another weight
// or place something else again: compare holds none against the other.
func TestPartFingerprint(t *testing.T) {
	base := Scenario{Call: "get", Metric: "latency_p50_ns", Direction: "lower", Unit: "request", Load: Load{Model: "closed"}}
	mix, flow := base, base
	mix.Call, mix.Kind = "", KindMix
	flow.Call, flow.Kind = "", KindFlow
	part := base
	part.Part = &Part{Of: "rw", Index: 0, Weight: 90, Share: 0.9}
	reweighted := base
	reweighted.Part = &Part{Of: "rw", Index: 0, Weight: 50, Share: 0.5}
	same := base
	same.Part = &Part{Of: "rw", Index: 0, Weight: 90, Share: 0.9}
	prints := map[string]string{}
	for name, sc := range map[string]Scenario{"one call": base, "mix": mix, "flow": flow, "part": part, "reweighted": reweighted} {
		fp := sc.Fingerprint()
		if other, dup := prints[fp]; dup {
			t.Errorf("%s and %s have one fingerprint", name, other)
		}
		prints[fp] = name
	}
	if part.Fingerprint() != same.Fingerprint() {
		t.Error("one part has two fingerprints")
	}
}
