package load

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestSplitSumsExactly(t *testing.T) {
	for _, tc := range []struct {
		total int64
		count int
	}{{0, 3}, {1, 3}, {2, 3}, {10, 3}, {1000, 7}, {999_999_999, 50}, {5, 5}, {7, 1}} {
		var sum, lo, hi int64 = 0, tc.total, 0
		for i := range tc.count {
			s := SplitCount(tc.total, tc.count, i)
			sum += s
			lo, hi = min(lo, s), max(hi, s)
		}
		if sum != tc.total || hi-lo > 1 {
			t.Errorf("%d over %d: shares sum to %d, spread %d..%d", tc.total, tc.count, sum, lo, hi)
		}
	}
	if SplitCount(10, 3, 3) != 0 || SplitCount(10, 0, 0) != 0 || SplitCount(10, 3, -1) != 0 {
		t.Error("an index outside the count has a share")
	}
}

func TestSpecSplit(t *testing.T) {
	open := Constant{Rate: 300, Duration: time.Second}
	for _, tc := range []struct {
		spec         Spec
		index, count int
		conns        int
		requests     int64
		words        string
		err          bool
	}{
		{Spec{Kind: KindClosed, Clients: 5}, 0, 2, 3, 0, "closed loop: 3 clients", false},
		{Spec{Kind: KindClosed, Clients: 5}, 1, 2, 2, 0, "closed loop: 2 clients", false},
		{Spec{Kind: KindOpen, Connections: 4, Requests: 1001, Schedule: open}, 2, 3, 1, 333,
			"open loop: every 3rd arrival from the 3rd, over 1 connection, 333 requests", false},
		{Spec{Kind: KindBatched, Connections: 3}, 0, 3, 1, 0, "batched loop: 1 connection", false},
		{Spec{Kind: KindClosed, Clients: 2}, 2, 3, 0, 0, "", true},              // a worker without a client
		{Spec{Kind: KindClosed, Clients: 3, Requests: 2}, 2, 3, 0, 0, "", true}, // a worker without a request, where the whole has a count
		{Spec{Kind: KindOpen, Connections: 1, Schedule: open}, 1, 2, 0, 0, "", true},
		{Spec{Kind: KindClosed, Clients: 3}, 3, 3, 0, 0, "", true}, // no such share
	} {
		got, words, err := tc.spec.Split(tc.index, tc.count)
		if (err != nil) != tc.err {
			t.Errorf("%s %d of %d: error %v, want one: %v", tc.spec.Kind, tc.index, tc.count, err, tc.err)
			continue
		}
		if tc.err {
			continue
		}
		conns := got.Connections
		if got.Kind == KindClosed {
			conns = got.Clients
		}
		if conns != tc.conns || got.Requests != tc.requests || words != tc.words {
			t.Errorf("%s %d of %d: %d conns, %d requests, %q; want %d, %d, %q", tc.spec.Kind, tc.index, tc.count, conns, got.Requests, words,
				tc.conns, tc.requests, tc.words)
		}
	}
}

// TestSpecSplitArrivals checks that the shares of an open loop hold every
// arrival of the whole schedule once: the shards' offsets, merged, are the
// whole's.
func TestSpecSplitArrivals(t *testing.T) {
	whole := Spec{Kind: KindOpen, Connections: 5, Schedule: Ramp{From: 100, To: 900, Duration: time.Second}}
	seen := map[time.Duration]int{}
	var n int
	for i := range 3 {
		part, _, err := whole.Split(i, 3)
		if err != nil {
			t.Fatal(err)
		}
		for k := int64(0); ; k++ {
			at, ok := part.Schedule.Offset(k)
			if !ok {
				break
			}
			seen[at]++
			n++
		}
	}
	var want int
	for k := int64(0); ; k++ {
		at, ok := whole.Schedule.Offset(k)
		if !ok {
			break
		}
		want++
		seen[at]--
	}
	if n != want || want == 0 {
		t.Fatalf("the shares hold %d arrivals, the whole %d", n, want)
	}
	for at, c := range seen {
		if c != 0 {
			t.Fatalf("the arrival at %v is in the shares %d times more than in the whole", at, c)
		}
	}
}

// TestSpecJSON checks that a spec, its schedule of every kind included,
// comes back from JSON as it went, and that what cannot travel does not.
func TestSpecJSON(t *testing.T) {
	for _, sch := range []Schedule{nil, Constant{Rate: 250, Duration: 3 * time.Second}, Ramp{From: 10, To: 90, Duration: time.Minute},
		Steps{{Rate: 5, Duration: time.Second}, {Rate: 0, Duration: 2 * time.Second}},
		Shard{Schedule: Constant{Rate: 7}, Index: 1, Count: 4}} {
		in := Spec{Kind: KindOpen, Clients: 2, Schedule: sch, Connections: 3, PerPeriod: 4, Period: time.Second, MaxWaiting: 9,
			Requests: 1000, Duration: 5 * time.Second, Warmup: time.Second, Drain: 2 * time.Second, Timeout: 3 * time.Second,
			Unit: "message", Engine: EngineLoop, Quantum: time.Millisecond}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out Spec
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Errorf("%s came back as %+v, want %+v", b, out, in)
		}
	}
	live := Spec{Kind: KindClosed, Clients: 1, Tap: &Tap{}, Live: &Live{}}
	b, _ := json.Marshal(live)
	var out Spec
	if err := json.Unmarshal(b, &out); err != nil || out.Tap != nil || out.Live != nil {
		t.Errorf("%s: tap and live travelled (%v)", b, err)
	}
	for _, bad := range []string{`{"kind":"closed","schedule":{"kind":"sine"}}`, `{"kind":"closed","schedule":{"kind":"shard","count":2}}`,
		`{"kind":"closed","schedule":{"kind":"shard","index":3,"count":2,"of":{"kind":"constant","rate":1}}}`} {
		if err := json.Unmarshal([]byte(bad), &out); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
