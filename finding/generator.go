package finding

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
)

// Generator says where a load run fell short of what it was asked, from
// what was measured: a generator that may have been the bottleneck (the
// event loop's thread, or the process on every core), and why an open or
// batched loop did not reach its offered rate (drops, busy connections).
// connections are the clients or connections that carried the load; cpu
// is the process's CPU time over the run.
func Generator(s results.Sample, cpu time.Duration, connections int) []string {
	var warnings []string
	elapsed := time.Duration(s.DurationNs)
	switch {
	case elapsed > 0 && s.EngineCPUNs > 0: // the event loop: one thread
		if use := float64(s.EngineCPUNs) / float64(elapsed); use >= 0.9 {
			warnings = append(warnings, fmt.Sprintf("the event loop's thread was busy %.0f%% of the run: the generator may have been the bottleneck, not the target", use*100))
		}
	case elapsed > 0:
		cores := float64(runtime.GOMAXPROCS(0))
		if use := cpu.Seconds() / elapsed.Seconds() / cores; use >= 0.9 {
			warnings = append(warnings, fmt.Sprintf("the generator used %.0f%% of its %d cores: it may have been the bottleneck, not the target", use*100, int(cores)))
		}
	}
	if s.OfferedRate <= 0 || s.AchievedRate >= 0.99*s.OfferedRate && s.Dropped == 0 {
		return warnings
	}
	msg := fmt.Sprintf("offered %s/s but achieved %s/s", human.Number(s.OfferedRate), human.Number(s.AchievedRate))
	var why []string
	if s.Dropped > 0 {
		why = append(why, fmt.Sprintf("%s arrivals were dropped because too many waited for a free connection (--max-waiting)", human.Count(s.Dropped)))
	}
	if mean := s.ServiceTimeNs.Mean; mean > 0 {
		capacity := float64(connections) / (mean / 1e9)
		if capacity < s.OfferedRate*1.05 {
			why = append(why, fmt.Sprintf("%d connections at a mean service time of %s carry at most %s/s: add --connections or the target is saturated",
				connections, human.Duration(mean), human.Number(capacity)))
		}
	}
	if len(why) == 0 {
		why = append(why, "the schedule lag shows the generator falling behind its timetable")
	}
	return append(warnings, msg+": "+strings.Join(why, "; "))
}
