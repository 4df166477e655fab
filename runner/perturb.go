package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/target"
)

// timelineStep is the resolution at which a perturbed round's answers are
// counted, to tell when the load saw a fault and when it recovered.
const timelineStep = 10 * time.Millisecond

// planned is one perturbation of a round, at its time from the round's
// start.
type planned struct {
	at time.Duration
	p  *study.Perturbation
	// k counts the perturbation's occurrences from 0: a role's nodes in turn
	k int
}

// perturbPlan is what the scenario's perturbations do to the named target
// in a round of length d, in time order.
func perturbPlan(ps []study.Perturbation, name string, d time.Duration) []planned {
	var out []planned
	for i := range ps {
		p := &ps[i]
		if p.Target != "" && p.Target != name {
			continue
		}
		for at, k := p.At, 0; at < d; at, k = at+p.Every, k+1 {
			out = append(out, planned{at, p, k})
			if p.Every <= 0 {
				break
			}
		}
	}
	slices.SortStableFunc(out, func(a, b planned) int { return int(a.at - b.at) })
	return out
}

// perturbed is one measured run on l with the scenario's perturbations of
// l done while it goes, and what each did. A target that did not come
// back from one is out of the run (its error is returned).
func (r *runner) perturbed(ctx context.Context, sc *study.Scenario, m measurer, l *live, requests int64, bound time.Duration) (
	results.Sample, []results.Perturbation, error) {
	return r.underPerturbations(ctx, sc.Perturbations, l, bound, func(live *load.Live) (results.Sample, error) {
		return m.measure(ctx, l, requests, bound, live)
	})
}

// underPerturbations is one run of a load (run, followed by live when it
// is set) on l with the perturbations ps of l done while it goes, timed
// from the load's start within bound, and what each did.
func (r *runner) underPerturbations(ctx context.Context, ps []study.Perturbation, l *live, bound time.Duration,
	run func(live *load.Live) (results.Sample, error)) (results.Sample, []results.Perturbation, error) {
	plan := perturbPlan(ps, l.spec.Name, bound)
	if len(plan) == 0 || !l.running() && len(l.links) == 0 {
		s, err := run(nil)
		return s, nil, err
	}
	tl := load.NewTimeline(timelineStep, bound+r.s.Defaults.Timeout+time.Second)
	during, stop := context.WithCancel(ctx)
	done := make(chan []results.Perturbation, 1)
	go func() { done <- r.perturb(ctx, during, l, plan, tl) }()
	s, err := run(&load.Live{Timeline: tl})
	stop() // what is not yet begun is not done; what is, finishes
	events := <-done
	measureRecovery(events, tl, s)
	for _, ev := range events {
		if ev.Error != "" {
			perr := fmt.Errorf("%s at %v: %s", ev.Action, time.Duration(ev.AtNs).Round(time.Millisecond), ev.Error)
			r.fail(l, perr)
			if err == nil {
				err = perr
			}
			break
		}
	}
	return s, events, err
}

// perturb does plan to l once the round's load has started, until during
// ends; ctx is the run's, for finishing what was begun.
func (r *runner) perturb(ctx, during context.Context, l *live, plan []planned, tl *load.Timeline) []results.Perturbation {
	select {
	case <-tl.Started():
	case <-during.Done():
		return nil
	}
	start := tl.Start()
	var out []results.Perturbation
	for _, p := range plan {
		t := time.NewTimer(time.Until(start.Add(p.at)))
		select {
		case <-during.Done():
			t.Stop()
			return out
		case <-t.C:
		}
		n, chosen, err := r.chooseNode(ctx, l, p.p, p.k)
		if err != nil { // nothing to do it to: said, not done
			r.warn(fmt.Sprintf("%s on %s at %v not done: %v", p.p.Action, l.spec.Name, time.Since(start).Round(time.Millisecond), err))
			continue
		}
		ev := r.perturbOnce(ctx, l, n, p.p, start)
		ev.Chosen = chosen
		out = append(out, ev)
		if ev.Error != "" {
			break // the target is not back: nothing more to do to it
		}
	}
	return out
}

// perturbOnce does one perturbation to node n of l and waits until it is
// ready again (and, in a group with a height probe, caught up).
func (r *runner) perturbOnce(ctx context.Context, l *live, n *node, p *study.Perturbation, start time.Time) results.Perturbation {
	t0 := time.Now()
	ev := results.Perturbation{Action: p.Action, Target: l.spec.Name, Time: t0.UTC(), AtNs: int64(t0.Sub(start))}
	if l.spec.Group != nil {
		ev.Node = n.name
	}
	what := p.Action
	if p.For > 0 {
		what += " for " + p.For.String()
	}
	on := l.nodeName(n)
	if len(p.Sides) > 0 {
		on = "target " + l.spec.Name + ", between sides"
	}
	r.progressEvent(Event{Target: l.spec.Name}, "perturbation on %s at %v: %s", on, time.Duration(ev.AtNs).Round(time.Millisecond), what)
	if p.OnPath() && l.peers != nil && len(p.Sides) > 0 {
		return r.perturbSides(ctx, l, p, ev, t0)
	}
	if p.OnPath() && l.peers != nil {
		return r.perturbPeers(ctx, l, n, p, ev, t0)
	}
	if p.OnPath() {
		return r.perturbPath(ctx, l, n, p, ev, t0)
	}
	fail := func(err error) results.Perturbation {
		ev.Error = err.Error()
		return ev
	}
	old := n.proc
	select {
	case <-old.Done(): // it died before: a crash, not the perturbation's doing
		return fail(fmt.Errorf("had exited before the %s: %w", p.Action, old.ExitErr()))
	default:
	}
	if p.Action == study.ActionPause {
		if err := old.Pause(); err != nil {
			return fail(err)
		}
		sleep(ctx, p.For)
		if err := old.Resume(); err != nil { // resumed even when the run is cancelled
			return fail(err)
		}
		ev.DownNs = int64(time.Since(t0))
	} else {
		if p.Action == study.ActionKill {
			old.Kill()
		} else if err := old.Stop(r.o.StopGrace); err != nil {
			r.warn(fmt.Sprintf("perturbation %s: %v", p.Action, err))
		}
		sleep(ctx, p.For)
		spec := n.started
		if p.Action != study.ActionWipeAndRestart {
			spec.Wipe, spec.Init = nil, nil
		}
		proc, err := target.Start(ctx, spec)
		if err != nil {
			return fail(err)
		}
		n.proc = proc
		ev.DownNs = int64(proc.Started.Sub(t0))
	}
	st, err := r.awaitNode(ctx, l, n)
	if err != nil {
		var exit *target.ExitError
		if errors.As(err, &exit) {
			return fail(fmt.Errorf("did not come back: %w", err))
		}
		return fail(err)
	}
	ev.AnswersAfterNs = int64(n.proc.Started.Add(time.Duration(st.FirstAnswerNs)).Sub(t0))
	ev.ReadyAfterNs = int64(n.proc.Started.Add(time.Duration(st.ReadyNs)).Sub(t0))
	caught := ""
	if g := l.spec.Group; g != nil && g.Height != nil {
		at, behind, err := r.catchUp(ctx, l, n, max(l.spec.Ready.Timeout, 2*time.Minute))
		ev.BehindAtReady = behind
		if err != nil {
			return fail(err)
		}
		ev.CaughtUpNs = int64(at.Sub(t0))
		caught = fmt.Sprintf(", caught up after %v (%d behind when ready)", time.Duration(ev.CaughtUpNs).Round(time.Millisecond), behind)
	}
	r.progressEvent(Event{Target: l.spec.Name}, "perturbation on %s: down %v, answering after %v, ready after %v%s", l.nodeName(n),
		time.Duration(ev.DownNs).Round(time.Millisecond), time.Duration(ev.AnswersAfterNs).Round(time.Millisecond),
		time.Duration(ev.ReadyAfterNs).Round(time.Millisecond), caught)
	return ev
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// measureRecovery fills in what the load saw of each perturbation: the
// failed answers from its action until the next one's (or the round's
// end), those of them while the target was down (see downUntil), when
// the last of them ended, and the dip in successful answers and p99
// latency.
func measureRecovery(events []results.Perturbation, tl *load.Timeline, s results.Sample) {
	step := int64(tl.Step())
	steps := int64(tl.Len())
	okRate := func(from, to int64) float64 { // successful answers per second in [from, to) ns
		i0, i1 := max(from/step, 0), min((to+step-1)/step, steps)
		var n int64
		for i := i0; i < i1; i++ {
			ok, _ := tl.At(int(i))
			n += ok
		}
		if i1 <= i0 {
			return 0
		}
		return float64(n) / time.Duration((i1-i0)*step).Seconds()
	}
	p99 := func(from, to int64) int64 { // the highest p99 of the seconds overlapping [from, to) ns
		var out int64
		for _, sec := range s.Series {
			if t := sec.T * int64(time.Second); t < to && t+int64(time.Second) > from {
				out = max(out, sec.P99Ns)
			}
		}
		return out
	}
	for k := range events {
		ev := &events[k]
		// this event's steps: from its action's to the next one's
		// (exclusive: a step is counted once), or the timeline's end
		from, to := ev.AtNs/step, steps
		if k+1 < len(events) {
			to = min(events[k+1].AtNs/step, steps)
		}
		first, last := int64(-1), int64(-1)
		down := downUntil(ev, tl, to)
		recovered := false // once a second without a failure has passed since the target was ready
		for i := from; i < to; i++ {
			_, failed := tl.At(int(i))
			if failed == 0 {
				if last >= 0 && !recovered && (i-last)*step >= int64(time.Second) && i*step >= ev.AtNs+ev.ReadyAfterNs {
					recovered = true
				}
				continue
			}
			ev.Errors += failed
			if i*step < down {
				ev.ErrorsWhileDown += failed
			}
			if first < 0 {
				first = i
			}
			if !recovered { // a stray failure long after is not the fault's
				last = i
			}
		}
		if first >= 0 {
			ev.FirstErrorNs = max(first*step-ev.AtNs, 0)
			ev.LastErrorNs = (last+1)*step - ev.AtNs
			ev.RecoveredNs = ev.LastErrorNs
		}
		during := ev.AtNs + max(ev.RecoveredNs, ev.ReadyAfterNs, step)
		ev.OKPerSBefore = okRate(ev.AtNs-int64(time.Second), ev.AtNs)
		ev.OKPerSDuring = okRate(ev.AtNs, during)
		if whole := ev.AtNs / int64(time.Second) * int64(time.Second); whole > 0 { // the last second wholly before
			ev.P99BeforeNs = p99(whole-int64(time.Second), whole)
		}
		ev.P99DuringNs = p99(ev.AtNs, during)
	}
}

// downUntil is when, in ns from the load's start, the target of ev was
// no longer down for the load: when it was ready again, or the end of the
// timeline's step in which the first request was sent that it answered
// successfully after it was back (started again, or resumed), whichever
// came first. A failure that ended before then is the fault's; one after
// it is the target's own, like a restarted target that listens and
// answers 503 until it has warmed up. A target that never came back
// (no ready time) is down until the end of the event's steps, to.
func downUntil(ev *results.Perturbation, tl *load.Timeline, to int64) int64 {
	step := int64(tl.Step())
	if ev.ReadyAfterNs <= 0 {
		return to * step
	}
	down := ev.AtNs + ev.ReadyAfterNs
	back := ev.AtNs + ev.DownNs
	// a request sent before the target was back and answered since was
	// answered by the old process (or the paused one): only the steps
	// wholly after it count
	for i := (back + step - 1) / step; i*step < down && i < to; i++ {
		if tl.OKSentIn(int(i)) > 0 {
			return min((i+1)*step, down)
		}
	}
	return down
}

// recoveryHeadline is a perturbed round's recovery: the longest, over its
// perturbations, of the time until the load recovered, until the target
// answered again and (a group's node) until it caught up; NaN without
// perturbations.
func recoveryHeadline(events []results.Perturbation) float64 {
	if len(events) == 0 {
		return math.NaN()
	}
	var worst int64
	for _, ev := range events {
		worst = max(worst, ev.RecoveredNs, ev.AnswersAfterNs, ev.CaughtUpNs)
	}
	return float64(worst)
}
