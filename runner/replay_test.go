package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/record"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
)

// A scenario that replays a recording sends its requests, in the order
// they arrived, in every run on every target: one pass on the recorded
// timetable (÷ speed), a loop that repeats it until the run's end, or a
// closed loop of one pass. results.json names the recording and its
// digest, and an open loop's schedule is the recorded timetable.
func TestReplayInRun(t *testing.T) {
	tooltest.Long(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "traffic.jsonl")
	w, err := record.Create(file, record.Header{Upstream: "http://127.0.0.1:1", Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 0, 3, 2, 4} { // the file in another order than the requests came
		ex := record.Exchange{Offset: time.Second + time.Duration(k)*30*time.Millisecond, Protocol: record.HTTP1, Method: "GET", Path: fmt.Sprintf("/r%d", k)}
		if err := w.Write(&ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	idx, err := record.OpenIndex(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := idx.SHA256()
	idx.Close()
	a, b := newConnLog(t), newConnLog(t)
	s := runtest.Parse(t, `version: 1
name: replay
defaults: {rounds: 2, warmup: 50ms}
targets:
  - {name: a, endpoints: {http: "`+a.srv.URL+`/"}}
  - {name: b, endpoints: {http: "`+b.srv.URL+`/"}}
calls:
  ping: {http: {path: /ping}}
scenarios:
  - {name: once, replay: {recording: `+file+`, speed: 2}}
  - {name: looped, replay: {recording: `+file+`, loop: true}, duration: 400ms}
  - {name: closed, replay: {recording: `+file+`}, load: {concurrency: 1}}
`)
	plan := NewPlan(s, Options{}).String()
	if !strings.Contains(plan, "replays "+file+" (5 requests ×2)") || !strings.Contains(plan, "(5 requests, looped)") {
		t.Errorf("the plan does not say what is replayed:\n%s", plan)
	}
	// arrivals in 400 ms of a loop whose pass is 120 ms + a mean gap of 30 ms
	wantRequests := map[string]int{"once": 5, "looped": 14, "closed": 5}
	for _, sc := range s.Scenarios {
		progress := &runtest.Progress{}
		o := options(t, progress)
		o.Only = []string{sc.Name}
		if _, err := Run(context.Background(), s, o); err != nil {
			t.Fatal(err)
		}
		out := readResults(t, o.Out).Scenarios[0]
		for _, runs := range [][][]string{a.take(), b.take()} {
			if len(runs) != 3 {
				t.Fatalf("%s: %d runs on a target; want the warm-up and 2 rounds", sc.Name, len(runs))
			}
			for i, run := range runs {
				// (an open loop's run may lose its last arrivals to a busy
				// machine: dropped or cut off, counted below)
				if i > 0 && (len(run) > wantRequests[sc.Name] || sc.Name == "closed" && len(run) != wantRequests[sc.Name]) {
					t.Errorf("%s: run %d sent %d requests; want %d", sc.Name, i, len(run), wantRequests[sc.Name])
				}
				for k, got := range run {
					if want := fmt.Sprintf("/r%d", k%5); got != want {
						t.Fatalf("%s: run %d, request %d is %s; want %s (all: %v)", sc.Name, i, k, got, want, run)
					}
				}
			}
		}
		rp := out.Replay
		if out.Call != "replay "+file || rp == nil || rp.File != file || rp.SHA256 != sum || rp.Exchanges != 5 || rp.SpanNs != int64(120*time.Millisecond) ||
			rp.Loop != (sc.Name == "looped") {
			t.Errorf("%s: call %q, replay %+v", sc.Name, out.Call, rp)
		}
		for _, rd := range out.Rounds {
			arrivals := rd.Requests + rd.Unfinished + rd.Dropped
			if arrivals != int64(wantRequests[sc.Name]) || rd.Requests == 0 || rd.OK != rd.Requests || rd.Failed ||
				sc.Name == "closed" && rd.Requests != arrivals {
				t.Errorf("%s: round %d on %s: %d requests, %d ok, %d cut, %d dropped (%s)", sc.Name, rd.Round, rd.Target, rd.Requests, rd.OK,
					rd.Unfinished, rd.Dropped, rd.Error)
			}
		}
		switch sc.Name {
		case "once":
			if out.Load.Model != "open" || rp.Speed != 2 || !strings.Contains(out.Load.Schedule, "recorded timetable of 5 arrivals over 120ms ×2") ||
				out.DurationNs != int64(60*time.Millisecond)+1 {
				t.Errorf("once: load %+v, duration %d, speed %v", out.Load, out.DurationNs, rp.Speed)
			}
		case "closed":
			if out.Load.Model != "closed" || rp.Speed != 1 || out.Requests != 5 || strings.Contains(progress.String(), "calibrated") {
				t.Errorf("closed: load %+v, %d requests, speed %v; want one pass, not calibrated", out.Load, out.Requests, rp.Speed)
			}
		}
		if !strings.Contains(progress.String(), sc.Name+": replays "+file+", 5 requests over 120ms") {
			t.Errorf("%s: the progress does not say what is replayed:\n%s", sc.Name, progress)
		}
	}
}
