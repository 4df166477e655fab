package runner

import (
	"fmt"
	"path/filepath"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/record"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// openReplay opens the recording a scenario replays, once for the whole
// scenario (every target's connections read it), and checks that it is
// the file the study read; nil for a scenario with a call.
func (r *runner) openReplay(sc *study.Scenario) (*record.Index, error) {
	rp := sc.Replay
	if rp == nil {
		return nil, nil
	}
	if r.o.Fleet != nil {
		return nil, fmt.Errorf("scenario %s: a replay does not run on workers (--workers) yet", sc.Name)
	}
	path := rp.Path
	if path == "" {
		path = rp.Recording
		if !filepath.IsAbs(path) && r.s.File != "" {
			path = filepath.Join(filepath.Dir(r.s.File), path)
		}
	}
	idx, err := record.OpenIndex(path)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: replay: %w", sc.Name, err)
	}
	if rp.SHA256 != "" && idx.SHA256() != rp.SHA256 {
		idx.Close()
		return nil, fmt.Errorf("scenario %s: replay: %s changed since the study was read", sc.Name, rp.Recording)
	}
	r.progress("%s: replays %s, %s over %s (request k of every run its k-th, on every target)", sc.Name, rp.Recording,
		human.Count(int64(idx.Len()))+" requests", human.Duration(float64(idx.At(idx.Len()-1)-idx.At(0))))
	return idx, nil
}

// replayer is what sends a recording's requests to one target: each
// protocol of the recording to the target's endpoint for it.
func (r *runner) replayer(l *live, rp *study.Replay, rec *record.Index) (load.Dialer, error) {
	eps := map[record.Protocol]string{}
	for _, p := range rec.Protocols() {
		name, err := study.ReplayEndpoint(l.spec, rp, p)
		if err != nil {
			return nil, fmt.Errorf("target %s: replay %s: %w", l.spec.Name, rp.Recording, err)
		}
		eps[p] = l.endpoints[name]
	}
	d, err := driver.NewReplayLoad(rec, eps, driver.Options{})
	if err != nil {
		return nil, fmt.Errorf("target %s: replay %s: %w", l.spec.Name, rp.Recording, err)
	}
	return d, nil
}

// recorded is the timetable of a replay's open loop.
func recorded(rp *study.Replay, rec *record.Index) load.Recorded {
	return load.Recorded{Arrivals: rec, Speed: rp.Speed, Loop: rp.Loop}
}

// replayResults records in rs what a scenario replayed: its call is
// "replay FILE", an open loop's schedule the recorded timetable.
func replayResults(rs *results.Scenario, rp *study.Replay, rec *record.Index, kind study.Kind) {
	speed := rp.Speed
	if kind == study.KindOpen {
		sch := recorded(rp, rec)
		rs.Load.Schedule, rs.Load.Rate = sch.String(), 0
	} else {
		speed = 1 // as fast as the clients go
	}
	rs.Call = "replay " + rp.Recording
	rs.Replay = &results.ReplayedLoad{File: rp.Recording, SHA256: rec.SHA256(), Exchanges: rec.Len(),
		SpanNs: int64(rec.At(rec.Len()-1) - rec.At(0)), Speed: max(speed, 0), Loop: rp.Loop}
	if rs.Replay.Speed == 0 {
		rs.Replay.Speed = 1
	}
}
