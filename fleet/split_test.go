package fleet

import "testing"

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
