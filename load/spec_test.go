package load_test

import (
	"context"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/load"
)

// A Spec runs the executor of its kind: each kind's requests reach the
// server, counted as they are sent, with the kind's own marks (a schedule
// lag for the loops that keep one); an unknown kind is refused.
func TestSpecRuns(t *testing.T) {
	srv := newSeqServer(t)
	for _, tc := range []struct {
		spec load.Spec
		want int64
		lag  bool
	}{
		{load.Spec{Kind: load.KindClosed, Clients: 2, Requests: 40, Duration: time.Minute}, 40, false},
		{load.Spec{Kind: load.KindOpen, Schedule: load.Constant{Rate: 200, Duration: 200 * time.Millisecond}, Connections: 2,
			Duration: 200 * time.Millisecond}, 40, true},
		{load.Spec{Kind: load.KindBatched, Connections: 2, PerPeriod: 5, Period: 50 * time.Millisecond, Duration: 200 * time.Millisecond}, 40, true},
	} {
		t.Run(string(tc.spec.Kind), func(t *testing.T) {
			tc.spec.Timeout = time.Minute
			s, err := tc.spec.Run(context.Background(), seqDialer{srv})
			if err != nil {
				t.Fatal(err)
			}
			if s.Requests+s.Unfinished+s.Dropped != tc.want || s.OK > s.Requests || (s.ScheduleLagNs != nil) != tc.lag {
				t.Errorf("%s: %d sent, %d unfinished, %d dropped, %d ok, lag %v; want %d in all, lag %v", tc.spec.Kind,
					s.Requests, s.Unfinished, s.Dropped, s.OK, s.ScheduleLagNs != nil, tc.want, tc.lag)
			}
		})
	}
	if _, err := (load.Spec{Kind: "spiral"}).Run(context.Background(), seqDialer{srv}); err == nil {
		t.Error("a spec of kind spiral ran")
	}
}
