package compat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/internal/digest"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// Agreements of an answer with the reference's; "both STATUS" when both
// failed alike: the same status and the same error content (an HTTP error
// body, a JSON-RPC error object, a gRPC status; see driver.Reply.Error).
// ErrorDiffers is two failures with the same status whose contents
// differ: a changed error message. From worst to best a case's agreement
// ranks status differs, content differs, error differs, both STATUS,
// identical; a case in mode equal fails on any of the first three.
const (
	Identical      = results.AgreementIdentical
	ContentDiffers = results.AgreementContent
	ErrorDiffers   = results.AgreementError
	StatusDiffers  = results.AgreementStatus
	NotSent        = results.AgreementNotSent
)

// Querier sends one call to one endpoint (driver.Querier is the real one).
type Querier interface {
	Query(ctx context.Context, call *study.Call, endpoint string) (driver.Reply, error)
}

// Options configures a Run.
type Options struct {
	// Endpoints gives each running target's endpoints by name, resolved.
	Endpoints map[string]map[string]string
	// Query sends the calls.
	Query Querier
	// Progress, if set, hears about long runs.
	Progress func(format string, args ...any)
	// Parallel is how many expansions of a case in order parallel are in
	// flight at once (each asks its targets in turn; a case in order
	// listed sends one at a time, and the cases run one after another);
	// default DefaultParallel.
	Parallel int
}

// Run sends every case of the study's compat section to every target under
// test (the reference first), and to the oracles and the noise source it
// names, and returns the outcome. A case's captures are taken from each
// target's own answer and bound into later cases' requests for that
// target (capture.go). The exchanges of its recordings follow
// the listed cases, each a case of its own (Options.Query must then be a
// Replayer too). Targets missing from Endpoints answer with status
// "unreachable".
func Run(ctx context.Context, s *study.Study, o Options) (*results.Compat, error) {
	c := s.Compat
	if c == nil {
		return nil, errors.New("the study has no compat section")
	}
	under := c.Under(s)
	under = append([]string{c.Reference}, slices.DeleteFunc(slices.Clone(under), func(n string) bool { return n == c.Reference })...)
	r := &runner{s: s, o: o, under: under, captured: map[string]map[string]captured{}, out: &results.Compat{Reference: c.Reference, Targets: under,
		Noise: c.Noise, Seed: s.Seed, Cases: []results.Case{}, Matrix: []results.MatrixRow{}}}
	// groups[g] are the expansions of the g-th case of the list. Cases
	// run one after another, so a case may read what an earlier one
	// wrote; the expansions of a case in order parallel share a fixed
	// pool of workers, those of a case in order listed go one at a time;
	// each asks its targets one after another. Answers land by index, so the outcome
	// does not depend on timing.
	var groups []group
	total := 0
	for i := range c.Cases {
		vars, err := c.Cases[i].Expand(s.Seed, i)
		if err != nil {
			return nil, fmt.Errorf("compat.cases[%d]: %w", i, err)
		}
		groups = append(groups, group{index: i, cs: &c.Cases[i], order: c.CaseOrder(s, i), vars: vars})
		total += len(vars)
	}
	for _, rec := range c.Recordings {
		total += rec.Exchanges
	}
	workers := o.Parallel
	if workers <= 0 {
		workers = DefaultParallel
	}
	cases := make([]results.Case, 0, total)
	var done atomic.Int64
	var mu sync.Mutex
	last := time.Now()
	tick := func() {
		n := done.Add(1)
		if o.Progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if time.Since(last) > time.Second {
			o.Progress("compat: %d of %d cases", n, total)
			last = time.Now()
		}
	}
	for _, g := range groups {
		if ctx.Err() != nil {
			break
		}
		n := workers
		if g.order == study.OrderListed {
			n = 1
		}
		cases = append(cases, r.group(ctx, g, n, tick)...)
	}
	var replayErr error
	if len(c.Recordings) > 0 && ctx.Err() == nil {
		var recorded []results.Case
		recorded, replayErr = r.recordings(ctx, tick)
		cases = append(cases, recorded...)
	}
	for _, cs := range cases {
		if cs.Call != "" { // cut short: keep the cases that finished
			r.out.Cases = append(r.out.Cases, cs)
		}
	}
	if replayErr != nil {
		return r.finish(), replayErr
	}
	return r.finish(), ctx.Err()
}

// DefaultParallel is how many expansions of a case are in flight at once.
const DefaultParallel = 8

type runner struct {
	s     *study.Study
	o     Options
	under []string
	out   *results.Compat
	// captured holds each target's captures by name (capture.go); only
	// cases in order listed, whose expansions run alone, write or read it.
	captured map[string]map[string]captured
}

// group is one case of the list: its index, the order it runs in and its
// expansions.
type group struct {
	index int
	cs    *study.Case
	order study.CaseOrder
	vars  []map[string]any
}

// group sends a case's expansions, at most workers at a time, and returns
// their outcomes in expansion order; an expansion cut short by the
// context's end is left zero.
func (r *runner) group(ctx context.Context, g group, workers int, tick func()) []results.Case {
	out := make([]results.Case, len(g.vars))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(g.vars)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(len(g.vars)) {
					return
				}
				cs := r.one(ctx, g, g.vars[i])
				if ctx.Err() != nil {
					return // answers cut by the cancellation are not answers
				}
				out[i] = cs
				tick()
			}
		}()
	}
	wg.Wait()
	return out
}

// answer is one reply made comparable.
type answer struct {
	results.Answer
	tree any
	// errTree is a failure's content under the key "error" (errorTree).
	errTree any
}

// errorTree is a failure's content as compared: {"error": tree}, the tree
// of its JSON or its text (null when it has none), so that differences
// have paths under "error" and ignore patterns such as error.request_id
// apply.
func errorTree(content []byte) any {
	var t any
	if len(content) > 0 {
		var err error
		if t, err = JSONTree(content); err != nil {
			t = string(content) // not JSON: compared as text
		}
	}
	return map[string]any{"error": t}
}

func (r *runner) endpoint(target string, call *study.Call) (string, error) {
	t := r.s.Target(target)
	if t == nil {
		return "", fmt.Errorf("no target %q", target)
	}
	name, err := call.EndpointName(t)
	if err != nil {
		return "", err
	}
	ep, ok := r.o.Endpoints[target][name]
	if !ok {
		return "", fmt.Errorf("target %s is not running", target)
	}
	return ep, nil
}

// ask sends a bound call to a target (or to a URL when target is empty).
func (r *runner) ask(ctx context.Context, target, url string, call *study.Call) (answer, error) {
	a := answer{Answer: results.Answer{Target: target}}
	ep := url
	if ep == "" {
		var err error
		if ep, err = r.endpoint(target, call); err != nil {
			a.Status, a.Error = "unreachable", err.Error()
			return a, nil
		}
	}
	rep, err := r.o.Query.Query(ctx, call, ep)
	if err != nil {
		return a, err
	}
	return answerOf(a, rep), nil
}

// answerOf makes a reply comparable: its status, digest and tree.
func answerOf(a answer, rep driver.Reply) answer {
	var err error
	a.Status, a.Error = rep.Status, rep.Detail
	if rep.Status != driver.StatusOK {
		a.errTree = errorTree(rep.Error)
		return a
	}
	switch {
	case rep.Raw != nil:
		// a replayed gRPC answer whose types are unknown: by field number
		a.Messages, a.Digest = len(rep.Raw), digest.Of(rep.Raw)
		trees := make([]any, len(rep.Raw))
		for i, m := range rep.Raw {
			trees[i] = WireTree(m)
		}
		if rep.Stream {
			a.tree = trees
		} else if len(trees) == 1 {
			a.tree = trees[0]
		}
	case rep.Messages != nil || rep.Stream:
		a.Messages = len(rep.Messages)
		if a.Digest, err = ProtoDigest(rep.Messages); err != nil {
			a.Status, a.Error = "protocol", err.Error()
			return a
		}
		trees := make([]any, len(rep.Messages))
		for i, m := range rep.Messages {
			trees[i] = ProtoTree(m.ProtoReflect())
		}
		if rep.Stream {
			a.tree = trees
		} else if len(trees) == 1 {
			a.tree = trees[0]
		}
	default:
		a.Messages = len(rep.JSON)
		var raw []byte
		if len(rep.JSON) > 0 {
			raw = rep.JSON[0]
		}
		if t, err := JSONTree(raw); err == nil {
			a.tree, a.Digest = t, JSONDigest(t)
		} else { // not JSON: compared as text
			sum := sha256.Sum256(raw)
			a.tree, a.Digest = string(raw), hex.EncodeToString(sum[:])
		}
	}
	return a
}

func (r *runner) one(ctx context.Context, g group, vars map[string]any) results.Case {
	cs := g.cs
	mode := cs.Mode
	if mode == "" {
		mode = study.ModeEqual
	}
	out := results.Case{Call: cs.Call, Vars: vars, Mode: mode, Answers: []results.Answer{}, Differences: []results.Difference{}, Order: string(g.order)}
	if vars == nil {
		out.Vars = map[string]any{}
	}
	calls, oracleVars, err := r.bind(g, vars)
	if err != nil {
		out.Agreement, out.Error = NotSent, err.Error()
		r.captureNone(g, &out)
		return out
	}
	got := map[string]answer{} // each target's first answer, for the captures
	answers, ok := r.judge(ctx, &out, func(ctx context.Context, target string) (answer, error) {
		a, err := r.ask(ctx, target, "", calls[target])
		if _, seen := got[target]; !seen && err == nil {
			got[target] = a
		}
		return a, err
	}, cs.Ignore)
	if !ok {
		r.captureNone(g, &out)
		return out
	}
	r.capture(g, &out, got)
	if cs.Oracle != nil {
		out.Oracle = r.oracle(ctx, cs.Oracle, oracleVars, answers)
	}
	return out
}

// sender sends a case's request to one target.
type sender func(ctx context.Context, target string) (answer, error)

// judge sends a case's request to every target under test (the reference
// first) and to the noise source, and fills in out's answers, agreement
// and differences; false when the request could not be sent.
func (r *runner) judge(ctx context.Context, out *results.Case, send sender, ignorePaths []string) ([]answer, bool) {
	answers := make([]answer, len(r.under))
	for i, t := range r.under {
		var err error
		if answers[i], err = send(ctx, t); err != nil {
			out.Agreement, out.Error = NotSent, err.Error()
			return nil, false
		}
	}
	var ignore []Pattern
	for _, p := range ignorePaths {
		if pat, err := ParsePattern(p); err == nil {
			ignore = append(ignore, pat)
		}
	}
	noise := r.noise(ctx, send, answers[0], ignore)
	ref := answers[0]
	ref.Agreement = Identical
	out.Answers = append(out.Answers, ref.Answer)
	worst := ""
	for _, a := range answers[1:] {
		diffs, more := r.compare(ref, &a, ignore)
		for _, d := range diffs {
			d.Target = a.Target
			if noisy(noise, d.Path) {
				out.Noise = append(out.Noise, d)
			} else {
				out.Differences = append(out.Differences, d)
			}
		}
		out.MoreDifferences += more
		if !slices.ContainsFunc(out.Differences, func(d results.Difference) bool { return d.Target == a.Target }) {
			switch a.Agreement { // every difference was noise
			case ContentDiffers:
				a.Agreement = Identical
			case ErrorDiffers:
				a.Agreement = results.AgreementBoth + a.Status
			}
		}
		out.Answers = append(out.Answers, a.Answer)
		if rank(a.Agreement) > rank(worst) {
			worst = a.Agreement
		}
	}
	if worst == "" {
		worst = ref.Agreement
		if ref.Status != driver.StatusOK {
			worst = results.AgreementBoth + ref.Status
		}
	}
	out.Agreement = worst
	return answers, true
}

func rank(agreement string) int {
	switch {
	case agreement == "":
		return -1
	case agreement == StatusDiffers:
		return 4
	case agreement == ContentDiffers:
		return 3
	case agreement == ErrorDiffers:
		return 2
	case strings.HasPrefix(agreement, results.AgreementBoth):
		return 1
	}
	return 0
}

// compare sets a's agreement with ref and returns its differences.
func (r *runner) compare(ref answer, a *answer, ignore []Pattern) ([]results.Difference, int) {
	switch {
	case ref.Status != a.Status:
		a.Agreement = StatusDiffers
		return []results.Difference{{Kind: KindStatus, Reference: ref.Status, Value: a.Status}}, 0
	case ref.Status != driver.StatusOK:
		a.Agreement = results.AgreementBoth + ref.Status
		diffs, total := Diff(ref.errTree, a.errTree, ignore)
		if total == 0 {
			return nil, 0
		}
		a.Agreement = ErrorDiffers
		return diffs, total - len(diffs)
	case ref.Digest == a.Digest:
		a.Agreement = Identical
		return nil, 0
	}
	diffs, total := Diff(ref.tree, a.tree, ignore)
	if total == 0 {
		a.Agreement = Identical // equal but for ignored fields, or for encoding
		return nil, 0
	}
	a.Agreement = ContentDiffers
	return diffs, total - len(diffs)
}

// noise asks the noise source the same question and returns the paths
// where its answer differs from the reference's: fields of the answer, or
// of the error content when both failed with the same status.
func (r *runner) noise(ctx context.Context, send sender, ref answer, ignore []Pattern) []Pattern {
	src := r.s.Compat.Noise
	if src == "" {
		return nil
	}
	if src == study.NoiseAgain {
		src = r.s.Compat.Reference
	}
	again, err := send(ctx, src)
	if err != nil || again.Status != ref.Status {
		return nil
	}
	var diffs []results.Difference
	switch {
	case ref.Status != driver.StatusOK:
		diffs, _ = Diff(ref.errTree, again.errTree, ignore)
	case again.Digest != ref.Digest:
		diffs, _ = Diff(ref.tree, again.tree, ignore)
	}
	var out []Pattern
	for _, d := range diffs {
		if p, err := ParsePattern(d.Path); err == nil {
			out = append(out, p)
		}
	}
	if len(diffs) == maxDifferences {
		out = append(out, Pattern{}) // too noisy to list: all of it
	}
	return out
}

func noisy(noise []Pattern, path string) bool {
	segs, err := ParsePattern(path)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(noise, func(p Pattern) bool { return p.matches(segs) })
}

// finish fills the matrix and the failure count.
func (r *runner) finish() *results.Compat {
	type key struct{ call, target string }
	counts := map[key]map[string]int{}
	var order []key
	for _, cs := range r.out.Cases {
		failed := false
		for _, a := range cs.Answers[min(1, len(cs.Answers)):] {
			k := key{cs.Call, a.Target}
			if counts[k] == nil {
				counts[k] = map[string]int{}
				order = append(order, k)
			}
			counts[k][a.Agreement]++
			failed = failed || a.Agreement == StatusDiffers || a.Agreement == ContentDiffers || a.Agreement == ErrorDiffers
		}
		if cs.Oracle != nil {
			for _, ch := range cs.Oracle.Checks {
				k := key{cs.Call, ch.Target}
				if counts[k] == nil {
					counts[k] = map[string]int{}
					order = append(order, k)
				}
				if ch.OK {
					counts[k]["oracle ok"]++
				} else {
					counts[k]["oracle failed"]++
					failed = true
				}
			}
		}
		if cs.Mode == study.ModeEqual && failed {
			r.out.Failed++
		}
	}
	for _, k := range order {
		r.out.Matrix = append(r.out.Matrix, results.MatrixRow{Call: k.call, Target: k.target, Counts: counts[k]})
	}
	return r.out
}
