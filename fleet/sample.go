package fleet

import (
	"fmt"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/results"
)

// Sample adds the run's tallies up into the sample one machine would have
// written, with the fleet's account (where: the NATS server; onLoss: the
// run's --on-worker-loss) and the warnings it calls for.
func (out *Outcome) Sample(where, onLoss string) (results.Sample, []string) {
	var elapsed time.Duration
	unit := "request"
	for _, w := range out.Workers {
		if w.Report != nil {
			elapsed = max(elapsed, time.Duration(w.Report.Sample.DurationNs))
			if w.Report.Sample.Unit != "" {
				unit = w.Report.Sample.Unit
			}
		}
	}
	if elapsed == 0 && !out.Agreed.IsZero() && out.Ended.After(out.Agreed) { // no report came: the run's own span
		elapsed = out.Ended.Sub(out.Agreed)
	}
	s := out.Sum.Sample(elapsed, unit)
	// the requests over the run's time, as the throughput counts its
	// answers: every request was sent within it, so the rate they were
	// sent at is at least this (a worker's own, of its sends' span, can
	// fall a request short of it)
	floor := s.AchievedRate
	s.AchievedRate = 0
	fl := &results.Fleet{NATS: where, StartSkewNs: int64(out.StartSkew), OnWorkerLoss: onLoss, Duplicates: out.Duplicates,
		Incomplete: out.Missing()}
	if secs := elapsed.Seconds(); secs > 0 {
		fl.MessagesPerS, fl.BytesPerS = float64(out.Messages)/secs, float64(out.Bytes)/secs
	}
	var warnings []string
	for _, w := range out.Workers {
		fw := results.FleetWorker{ID: w.ID, Host: w.Host, Index: w.Index, Cores: w.Cores, Share: w.Share, ClockOffsetNs: int64(w.ClockOffset),
			RTTNs: int64(w.RTT), Tallies: w.Tallies, Lost: w.Lost}
		switch {
		case w.Lost && w.Late:
			fw.LostAfterNs = int64(w.LostAfter)
			fl.Lost = append(fl.Lost, w.ID)
			warnings = append(warnings, fmt.Sprintf("worker %s went silent %v into the run and was written off; its report came later, with its tallies",
				w.ID, w.LostAfter.Round(time.Millisecond)))
		case w.Lost:
			fw.LostAfterNs = int64(w.LostAfter)
			fl.Lost = append(fl.Lost, w.ID)
			lostShare(&s, &fw, w, elapsed)
			warnings = append(warnings, fmt.Sprintf("worker %s was lost %v into the run: its share (%s) after its last tally was not run or not counted; the rates are of what ran",
				w.ID, w.LostAfter.Round(time.Millisecond), w.Share))
		}
		if r := w.Report; r != nil {
			ws := r.Sample
			fw.Requests, fw.OK, fw.OfferedRate, fw.AchievedRate = ws.Requests, ws.OK, ws.OfferedRate, ws.AchievedRate
			fw.Throughput, fw.Dropped, fw.GeneratorCPUNs, fw.Warnings, fw.Error = ws.Throughput, ws.Dropped, r.CPUNs, r.Warnings, r.Err
			fw.HDR = ws.HDR
			if !w.Started.IsZero() {
				fw.StartNs = int64(w.Started.Sub(out.Agreed))
			}
			s.OfferedRate += ws.OfferedRate
			s.AchievedRate += ws.AchievedRate
			s.Dropped += ws.Dropped
			for _, wn := range r.Warnings {
				warnings = append(warnings, "worker "+w.ID+": "+wn)
			}
			if r.Err != "" {
				warnings = append(warnings, "worker "+w.ID+" failed: "+r.Err)
			}
		}
		fl.Workers = append(fl.Workers, fw)
	}
	s.AchievedRate = max(s.AchievedRate, floor)
	if len(fl.Incomplete) > 0 {
		warnings = append(warnings, "not every tally of "+strings.Join(fl.Incomplete, ", ")+" arrived: the figures miss part of their load")
	}
	if out.StartSkew > 5*time.Millisecond {
		warnings = append(warnings, fmt.Sprintf("the workers started %s apart", human.Duration(float64(out.StartSkew))))
	}
	s.Fleet = fl
	return s, warnings
}

// lostShare accounts for a worker lost without a report, of which only
// its tallies are known (they are in s's counts): its figures are what
// they counted, its rates over the time it ran; its part of the run's
// achieved rate (and of an open or batched loop's offered rate, which it
// offered as it sent) is what it sent over the run's elapsed time, so the
// rates are of what ran and the throughput, of the same counts over the
// same time, stays within the achieved rate.
func lostShare(s *results.Sample, fw *results.FleetWorker, w *WorkerOutcome, elapsed time.Duration) {
	fw.Requests, fw.OK = w.Requests, w.OK
	if secs := w.LostAfter.Seconds(); secs > 0 {
		fw.AchievedRate, fw.Throughput = float64(w.Requests)/secs, float64(w.OK)/secs
	}
	secs := elapsed.Seconds()
	if secs <= 0 {
		return
	}
	s.AchievedRate += float64(w.Requests) / secs
	if s.ScheduleLagNs != nil { // an open or batched loop
		s.OfferedRate += float64(w.Requests) / secs
	}
}
