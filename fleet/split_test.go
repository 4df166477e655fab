package fleet

import (
	"testing"

	"github.com/tandem-bench/tandem/load"
)

func TestSplitSumsExactly(t *testing.T) {
	for _, tc := range []struct {
		total int64
		count int
	}{{0, 3}, {1, 3}, {2, 3}, {10, 3}, {1000, 7}, {999_999_999, 50}, {5, 5}, {7, 1}} {
		var sum, lo, hi int64 = 0, tc.total, 0
		for i := range tc.count {
			s := Split(tc.total, tc.count, i)
			sum += s
			lo, hi = min(lo, s), max(hi, s)
		}
		if sum != tc.total || hi-lo > 1 {
			t.Errorf("%d over %d: shares sum to %d, spread %d..%d", tc.total, tc.count, sum, lo, hi)
		}
	}
	if Split(10, 3, 3) != 0 || Split(10, 0, 0) != 0 || Split(10, 3, -1) != 0 {
		t.Error("an index outside the count has a share")
	}
}

func TestShareOf(t *testing.T) {
	for _, tc := range []struct {
		kind         load.Kind
		conns        int
		requests     int64
		index, count int
		want         Share
		err          bool
	}{
		{"closed", 5, 0, 0, 2, Share{3, 0, "closed loop: 3 clients"}, false},
		{"closed", 5, 0, 1, 2, Share{2, 0, "closed loop: 2 clients"}, false},
		{"open", 4, 1001, 2, 3, Share{1, 333, "open loop: every 3rd arrival from the 3rd, over 1 connection, 333 requests"}, false},
		{"batched", 3, 0, 0, 3, Share{1, 0, "batched loop: 1 connection"}, false},
		{"closed", 2, 0, 2, 3, Share{}, true}, // a worker without a client
		{"closed", 3, 2, 2, 3, Share{}, true}, // a worker without a request, where the whole has a count
		{"open", 1, 0, 1, 2, Share{}, true},   // a worker without a connection
	} {
		got, err := ShareOf(tc.kind, tc.conns, tc.requests, tc.index, tc.count)
		if (err != nil) != tc.err || !tc.err && got != tc.want {
			t.Errorf("%s %d/%d of %d: %+v, %v; want %+v (error %v)", tc.kind, tc.conns, tc.requests, tc.count, got, err, tc.want, tc.err)
		}
	}
}
