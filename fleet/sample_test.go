package fleet_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/fleet"
	"github.com/tandem-bench/tandem/results"
)

// The fleet's sample adds the workers' accounts up: a worker that
// reported adds its rates, one lost without a report adds what its
// tallies counted over the run's time, is listed as lost and warned of.
func TestOutcomeSample(t *testing.T) {
	agreed := time.Unix(1000, 0)
	out := &fleet.Outcome{Agreed: agreed, Ended: agreed.Add(2 * time.Second), Workers: []*fleet.WorkerOutcome{
		{ID: "w1", Index: 0, Cores: 2, Share: "half", Started: agreed, Report: &fleet.Report{
			Sample: results.Sample{DurationNs: int64(2 * time.Second), Requests: 200, OK: 200, OfferedRate: 100, AchievedRate: 100, Throughput: 100},
			CPUNs:  int64(time.Second)}},
		{ID: "w2", Index: 1, Cores: 2, Share: "half", Lost: true, LostAfter: time.Second, Requests: 50, OK: 50},
	}}
	s, warnings := out.Sample("nats://127.0.0.1:4222", "continue")
	fl := s.Fleet
	if fl == nil || len(fl.Workers) != 2 || strings.Join(fl.Lost, ",") != "w2" || fl.OnWorkerLoss != "continue" {
		t.Fatalf("fleet %+v; want two workers, w2 lost, continue", fl)
	}
	if got := s.AchievedRate; got != 125 {
		t.Errorf("achieved rate %v; want 100 (w1's) + 50 requests over 2 s (w2's)", got)
	}
	if w2 := fl.Workers[1]; w2.AchievedRate != 50 || w2.Requests != 50 || w2.LostAfterNs != int64(time.Second) {
		t.Errorf("w2 %+v; want 50 requests at 50/s, lost after 1 s", w2)
	}
	if w1 := fl.Workers[0]; w1.GeneratorCPUNs != int64(time.Second) || w1.Requests != 200 {
		t.Errorf("w1 %+v; want its report's figures", w1)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "worker w2 was lost") || !strings.Contains(warnings[1], "not every tally of w2") {
		t.Errorf("warnings %q; want w2's loss and its missing tallies", warnings)
	}
}
