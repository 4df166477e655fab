package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/tandem-bench/tandem/comet"
	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/hdr"
	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/metrics"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/target"
	"github.com/tandem-bench/tandem/verdict"
)

// maxProbes bounds a saturation search.
const maxProbes = 12

// sweep runs a sweep scenario: every cell on every running target, the
// targets interleaved cell by cell, or a bisection per target and
// connection count. Results are saved after every cell.
func (r *runner) sweep(ctx context.Context, sc *study.Scenario) error {
	sw := sc.Sweep
	ls := r.running(sc, "sweep")
	if len(ls) == 0 {
		return nil
	}
	rule := saturationRule(sw)
	idx := map[string]int{}
	for _, l := range ls {
		idx[l.spec.Name] = len(r.res.Sweeps)
		r.res.Sweeps = append(r.res.Sweeps, results.Sweep{Scenario: sc.Name, Target: l.spec.Name, Call: sc.Call, Load: sw.Load,
			Confirm: sw.Confirm, Rule: rule, Cells: []results.Cell{}, Saturation: []results.SaturationPoint{}, DBBackend: r.dbBackend(sw, l)})
	}
	out := func(l *live) *results.Sweep { return &r.res.Sweeps[idx[l.spec.Name]] }
	rounds := 1
	cells := 0 // a grid's: a search does not know its count
	if sw.Search == nil {
		rounds = sc.Rounds
		if r.o.Rounds > 0 {
			rounds = r.o.Rounds
		}
		cells = len(sw.Connections) * len(sw.Rate) * rounds
	}
	run := func(l *live, conns int, rate float64, search bool, repeat, round int) (results.Cell, error) {
		cell := len(out(l).Cells) + 1
		r.send(Event{Status: true, Target: l.spec.Name, Round: cell, Rounds: cells})
		what := ""
		if rounds > 1 {
			what = fmt.Sprintf(" (round %d of %d)", round, rounds)
		}
		r.progress("sweep %s: %s, %d connections at %s/s each%s", sc.Name, l.spec.Name, conns, fmtRate(rate), what)
		c := r.cell(ctx, sc, l, conns, rate)
		c.Search, c.Repeat = search, repeat
		if rounds > 1 {
			c.Round = round
		}
		s := out(l)
		s.Cells = append(s.Cells, c)
		s.Saturation = saturation(s.Cells)
		r.progressEvent(Event{Target: l.spec.Name, Round: cell, Rounds: cells}, "sweep %s: %s, c=%d r=%s: %d of %d confirmed%s", sc.Name, l.spec.Name, conns, fmtRate(rate), c.Confirmed, c.Expected,
			map[bool]string{true: ", saturated", false: ""}[c.Saturated])
		if err := r.save(); err != nil {
			return c, err
		}
		return c, ctx.Err()
	}
	if sw.Search == nil {
		// the whole grid once per round, the targets' order in each cell
		// alternating (or shuffled) from round to round as in scenarios
		for round := 1; round <= rounds; round++ {
			for _, conns := range sw.Connections {
				for _, rate := range sw.Rate {
					for _, l := range roundOrder(ls, r.s.Defaults.Order, r.s.Seed, sc.Name, conns, round) {
						if l.err != nil {
							continue
						}
						if _, err := run(l, conns, rate, false, 0, round); err != nil {
							return err
						}
					}
				}
			}
		}
		r.judgeSweep(sc, ls, idx, rounds)
		return r.save()
	}
	for _, l := range ls {
		for _, conns := range sw.Connections {
			res, err := r.search(sw, func(rate float64, repeat int) (bool, error) {
				if l.err != nil {
					return true, l.err
				}
				c, err := run(l, conns, rate, true, repeat, 0)
				return c.Saturated, err
			})
			res.Connections = conns
			out(l).Search = append(out(l).Search, res)
			if serr := r.save(); serr != nil {
				return serr
			}
			if err != nil && l.err == nil {
				return err // cancelled, or the results could not be written
			}
		}
	}
	return nil
}

// fmtRate shows a rate without decimals when it is whole (20,000), else
// with three significant digits (12.5, 0.250): never e-notation.
func fmtRate(r float64) string {
	if r == math.Trunc(r) && math.Abs(r) < 1<<53 {
		return human.Count(int64(r))
	}
	return human.Sig(r)
}

// judgeSweep summarises a grid's cells over its rounds and judges each
// target's cells against the baseline's; it warns when the cells were too
// short for the target's blocks to average out.
func (r *runner) judgeSweep(sc *study.Scenario, ls []*live, idx map[string]int, rounds int) {
	var sweeps []*results.Sweep
	for _, l := range ls {
		sw := &r.res.Sweeps[idx[l.spec.Name]]
		sw.Rounds = rounds
		sweeps = append(sweeps, sw)
		if w := shortCells(sc.Sweep, sw); w != "" {
			r.warn(fmt.Sprintf("sweep %s on %s: %s", sc.Name, l.spec.Name, w))
		}
	}
	verdict.Sweep(r.policy, sweeps, r.s.Baseline, r.alpha)
}

// minBlocksPerCell is how many blocks a cell confirmed in blocks should
// span for the phase of its batches against the blocks to average out.
const minBlocksPerCell = 10

// shortCells says, for a sweep confirmed in blocks, when its cells spanned
// fewer than minBlocksPerCell blocks of the target's (measured) interval:
// each cell's latency then swings by up to a block with the phase of its
// batches against the blocks, which one run per cell cannot tell from a
// difference between targets. "" when the cells were long enough.
func shortCells(sw *study.Sweep, res *results.Sweep) string {
	var span time.Duration
	var blocks int
	for _, c := range res.Cells {
		if len(c.Blocks) >= 2 {
			span += time.Duration(c.Blocks[len(c.Blocks)-1].TimeUnixNs - c.Blocks[0].TimeUnixNs)
			blocks += len(c.Blocks) - 1
		}
	}
	if blocks == 0 || span <= 0 {
		return ""
	}
	interval := span / time.Duration(blocks)
	sending := sw.Duration - time.Second
	if n := float64(sending) / float64(interval); n < minBlocksPerCell {
		advice := "run each cell several times (rounds: 3 or more)"
		if res.Rounds > 1 {
			advice = "lengthen the cells"
		}
		return fmt.Sprintf("cells send for %v, about %.0f blocks of %v: the phase of the batches against the blocks moves each cell's latency by up to a block; %s, or cells of at least %v",
			sending, n, interval.Round(time.Millisecond), advice, (minBlocksPerCell*interval + time.Second).Round(time.Second))
	}
	return ""
}

// search brackets the highest sustainable rate by bisection on a log
// scale: from must keep up and to must not; each probe runs repeats times
// and counts as saturated if any run is. It stops when hi/lo ≤ 1 +
// precision (batched rates are whole numbers, so also when no whole rate
// lies between) or after maxProbes probes.
func (r *runner) search(sw *study.Sweep, probe func(rate float64, repeat int) (bool, error)) (results.SearchResult, error) {
	se := sw.Search
	res := results.SearchResult{StopRule: fmt.Sprintf("hi/lo ≤ %.4g, or %d probes", 1+se.Precision, maxProbes)}
	saturated := func(rate float64) (bool, error) {
		res.Probes++
		for rep := 1; rep <= se.Repeats; rep++ {
			sat, err := probe(rate, rep)
			if err != nil || sat {
				return true, err
			}
		}
		return false, nil
	}
	lo, hi := se.From, se.To
	if sat, err := saturated(lo); err != nil || sat {
		res.Saturated = lo
		return res, err
	}
	res.Sustained = lo
	if sat, err := saturated(hi); err != nil || !sat {
		res.Sustained = hi
		return res, err
	}
	res.Saturated = hi
	for res.Probes < maxProbes && hi/lo > 1+se.Precision {
		mid := math.Sqrt(lo * hi)
		if sw.Load == study.SweepBatched {
			mid = math.Round(mid)
			if mid <= lo || mid >= hi {
				break
			}
		}
		sat, err := saturated(mid)
		if err != nil {
			return res, err
		}
		if sat {
			hi = mid
		} else {
			lo = mid
		}
		res.Sustained, res.Saturated = lo, hi
	}
	return res, nil
}

// saturationRule says in words when a cell of sw is saturated: the rule
// results.json records and every report prints.
func saturationRule(sw *study.Sweep) string {
	rule := "confirmed < expected"
	if k := sw.SaturatedBelow(); k < 1 {
		rule = fmt.Sprintf("confirmed < %.6g %% of expected", 100*k)
	}
	if sw.Confirm != study.ConfirmCometBFT {
		rule += ", or the latency grows over the cell"
	}
	if sw.MaxP99 > 0 {
		rule += fmt.Sprintf(", or p99 latency > %s", sw.MaxP99)
	}
	return rule
}

// saturated applies sw's rule to a measured cell: confirmed below the
// kept fraction of expected, a latency that grows over the cell, or (with
// max_p99) a p99 latency above it.
func saturated(sw *study.Sweep, c *results.Cell) bool {
	return float64(c.Confirmed) < float64(c.Expected)*sw.SaturatedBelow() || c.LatencyGrows ||
		sw.MaxP99 > 0 && c.LatencyNs.P99 > int64(sw.MaxP99)
}

// windowParts is how many parts a cell's window is cut into to tell a
// latency that grows over it: thirds.
const windowParts = 3

// maxAllowance bounds the time after a cell's window in which its answers
// still count as processed: a tenth of the window.
const maxAllowance = 10

// growthFloor is the least rise of the median latency from one third of a
// cell to the next that counts as growth, beyond half the first third's
// median: what a busy machine's scheduling adds to a few answers' median
// is not a queue.
const growthFloor = 5 * time.Millisecond

// answered fills in a cell confirmed by answers from its window (the
// arrivals of its load, T − 1 s) with drain the time after it. Processed
// are the successful answers to the window's arrivals that came by the
// window's end plus an allowance (to the timeline's step): the lowest of
// the thirds' 90th percentile latencies, at most a tenth of the window
// and at most drain. A target that keeps up answers nearly all of them by
// then; one of capacity C answers at most C × 1.1 × the window there,
// however much of its backlog the cell's last second would let it drain,
// so with a shortfall of 5 % a cell above 1.16 C saturates whatever the
// latencies. Each third's median latency is recorded (0: no successful
// answer); the latency grows when each exceeds the one before by more
// than half the first third's plus growthFloor: a queue that builds
// through the cell (which catches the rates just above C).
func answered(c *results.Cell, win *load.Window, window, drain time.Duration) {
	allowance := time.Duration(-1)
	c.ThirdsP50Ns = make([]int64, win.Parts())
	for i := range win.Parts() {
		p := win.Part(i)
		c.ThirdsP50Ns[i] = int64(p.P50)
		if p.OK > 0 && (allowance < 0 || p.P90 < allowance) {
			allowance = p.P90
		}
	}
	by := window + min(max(allowance, 0), window/maxAllowance, drain)
	c.ProcessedByNs = int64(by)
	c.Confirmed = win.OKBefore(by)
	c.LatencyGrows = latencyGrows(c.ThirdsP50Ns)
}

// latencyGrows says whether the thirds' median latencies (0: none) rise
// third by third, each by more than half the first's plus growthFloor.
func latencyGrows(p50 []int64) bool {
	if len(p50) < 2 || slices.Contains(p50, 0) {
		return false
	}
	tol := p50[0]/2 + int64(growthFloor)
	for i := 1; i < len(p50); i++ {
		if p50[i] <= p50[i-1]+tol {
			return false
		}
	}
	return true
}

// saturation finds, per connection count, the highest rate that kept up
// and the lowest that did not. A rate run more than once (a search's
// repeats) saturates if any of its cells did, as the search counts it,
// so one rate is never both. When the cells disagree across rates (a
// lower rate saturated, a higher one kept up) both are kept as measured:
// HighestOK ≥ LowestSaturated then marks a grid that is not monotonic.
func saturation(cells []results.Cell) []results.SaturationPoint {
	type key struct {
		conns int
		rate  float64
	}
	sat := map[key]bool{}
	for _, c := range cells {
		k := key{c.Connections, c.Rate}
		sat[k] = sat[k] || c.Saturated
	}
	var out []results.SaturationPoint
	for _, c := range cells {
		i := slices.IndexFunc(out, func(p results.SaturationPoint) bool { return p.Connections == c.Connections })
		if i < 0 {
			out = append(out, results.SaturationPoint{Connections: c.Connections})
			i = len(out) - 1
		}
		p := &out[i]
		if sat[key{c.Connections, c.Rate}] {
			if p.LowestSaturated == 0 || c.Rate < p.LowestSaturated {
				p.LowestSaturated = c.Rate
			}
		} else if c.Rate > p.HighestOK {
			p.HighestOK = c.Rate
		}
	}
	for i := range out {
		p := &out[i]
		var sum float64
		n := 0
		for _, c := range cells {
			if c.Connections == p.Connections && c.Rate == p.HighestOK {
				sum += c.ConfirmedPerSecond()
				n++
			}
		}
		if n > 0 {
			p.ThroughputAtBest = sum / float64(n)
		}
	}
	return out
}

// cell runs one (connections, rate) cell on one target and confirms it.
func (r *runner) cell(ctx context.Context, sc *study.Scenario, l *live, conns int, rate float64) results.Cell {
	sw := sc.Sweep
	c := results.Cell{Connections: conns, Rate: rate, DurationNs: int64(sw.Duration), Errors: map[string]int64{},
		StartUnixNs: time.Now().UnixNano()}
	call := r.s.Calls[sc.Call]
	id := comet.NewRunID()
	if call.CometBFT != nil {
		c.RunID = comet.UUID(id)
	}
	// Both loads send for T − 1 s and leave the last second for the
	// answers (a batched cell's last batch never goes).
	sending := sw.Duration - time.Second
	c.Expected = cellExpected(sw, conns, rate, sending)
	fail := func(err error) results.Cell {
		c.Error, c.Saturated = err.Error(), true
		c.EndUnixNs = time.Now().UnixNano()
		return c
	}
	epName, err := call.EndpointName(l.spec)
	if err != nil {
		return fail(err)
	}
	caller, err := driver.New(ctx, call, l.endpoints[epName], driver.Options{Timeout: r.s.Defaults.Timeout,
		Run: comet.Run{Connections: conns, Rate: int(math.Round(rate)), ID: id}})
	if err != nil {
		return fail(err)
	}
	var node *comet.Node
	var from int64
	if sw.Confirm == study.ConfirmCometBFT {
		// connections of its own, closed with the cell, so none is left
		// open to the node's RPC server when the node is stopped
		tr := http.DefaultTransport.(*http.Transport).Clone()
		defer tr.CloseIdleConnections()
		node = &comet.Node{URL: l.endpoints[sw.Endpoint], Client: &http.Client{Transport: tr}}
		if from, err = node.Height(ctx); err != nil {
			return fail(err)
		}
	}
	// The load ends with the cell: what is not answered by then is cut
	// off, neither a failure nor a latency (dropped).
	drain := sw.Duration - sending
	win := load.NewWindow(sending, windowParts, timelineStep, sw.Duration)
	start := time.Now()
	s, events, err := r.cellLoad(ctx, sc, l, caller, conns, rate, sending, drain, win)
	c.Perturbations = events
	c.Dropped = s.Dropped + s.Unfinished // not sent, or not waited for past the end
	switch {
	case err == nil && l.proc != nil && len(events) == 0:
		err = exitedDuring(l, s)
	case err == nil && l.proc != nil:
		err = exitedNow(l) // the perturbations' own errors are not an exit
	}
	c.Sent, c.OK = s.Requests, s.OK
	for k, v := range s.Errors {
		c.Errors[k] = v
	}
	if err != nil {
		var exit *target.ExitError
		if errors.As(err, &exit) {
			r.fail(l, fmt.Errorf("sweep %s: %w", sc.Name, err))
		}
		return fail(err)
	}
	if rest := time.Until(start.Add(sw.Duration)); rest > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(rest):
		}
	}
	c.EndUnixNs = time.Now().UnixNano()
	switch sw.Confirm {
	case study.ConfirmCometBFT:
		if err := confirmInBlocks(ctx, &c, node, id, from, sw); err != nil {
			return fail(fmt.Errorf("confirm: %w", err))
		}
	default:
		answered(&c, win, sending, drain)
		c.LatencyNs = s.LatencyNs
	}
	if m, ok := nodeMetrics(l, false); ok {
		cellMetrics(&c, m)
	}
	c.Saturated = saturated(sw, &c)
	return c
}

// cellExpected is what a cell's target processes if it keeps up, its
// load sending for sending.
func cellExpected(sw *study.Sweep, conns int, rate float64, sending time.Duration) int64 {
	switch sw.Load {
	case study.SweepOpen:
		return load.Constant{Rate: rate * float64(conns), Duration: sending}.Arrivals()
	default:
		return load.Batched{Connections: conns, PerPeriod: int(math.Round(rate)), Period: time.Second, Duration: sw.Duration - time.Second}.Expected()
	}
}

// cellLoad runs a cell's load on l under the scenario's perturbations:
// open or batched, sending for sending and waiting drain for the answers,
// which win counts.
func (r *runner) cellLoad(ctx context.Context, sc *study.Scenario, l *live, caller driver.Caller, conns int, rate float64,
	sending, drain time.Duration, win *load.Window) (results.Sample, []results.Perturbation, error) {
	sw := sc.Sweep
	return r.underPerturbations(ctx, sc.Perturbations, l, sending, func(live *load.Live) (results.Sample, error) {
		if live == nil {
			live = &load.Live{}
		}
		live.Window = win
		if sw.Load == study.SweepOpen {
			return load.Spec{Kind: load.KindOpen, Schedule: load.Constant{Rate: rate * float64(conns), Duration: sending}, Connections: conns,
				Duration: sending, Timeout: r.s.Defaults.Timeout, Drain: drain, Live: live}.Run(ctx, caller)
		}
		return load.Spec{Kind: load.KindBatched, Connections: conns, PerPeriod: int(math.Round(rate)), Period: time.Second,
			Duration: sending, Timeout: r.s.Defaults.Timeout, Drain: drain, Live: live}.Run(ctx, caller)
	})
}

// confirmInBlocks confirms a cell's transactions (run id) in the node's
// blocks from height from on, and records in c what the blocks show.
func confirmInBlocks(ctx context.Context, c *results.Cell, node *comet.Node, id [16]byte, from int64, sw *study.Sweep) error {
	conf, err := node.Confirm(ctx, id, from, sw.Drain, hdr.New)
	if err != nil {
		return err
	}
	if !conf.Drained {
		c.Error = fmt.Sprintf("the mempool did not empty within %s", sw.Drain)
	}
	c.Confirmed, c.Duplicates, c.NegativeLatencies = conf.Confirmed, conf.Duplicates, conf.Negative
	c.LatencyNs = hdr.Distribution(conf.Latency)
	c.LatencyNs.Mean = max(0, float64(conf.Mean))
	if !conf.First.IsZero() {
		c.ProcessedFirstUnixNs, c.ProcessedLastUnixNs = conf.First.UnixNano(), conf.Last.UnixNano()
	}
	for _, b := range conf.Blocks {
		c.Blocks = append(c.Blocks, results.BlockPoint{Height: b.Height, TimeUnixNs: b.Time.UnixNano(), Txs: b.Txs, MeanLatencyNs: int64(b.Mean)})
	}
	return nil
}

// cellMetrics derives a cell's figures from its target's metrics: over the
// cell, and (prefixed processing_) over the blocks that held its work.
func cellMetrics(c *results.Cell, m results.Metrics) {
	c.Metrics = metrics.Derive(m, time.Unix(0, c.StartUnixNs), time.Unix(0, c.EndUnixNs))
	if c.ProcessedFirstUnixNs != 0 {
		for k, v := range metrics.Derive(m, time.Unix(0, c.ProcessedFirstUnixNs), time.Unix(0, c.ProcessedLastUnixNs)) {
			c.Metrics["processing_"+k] = v
		}
	}
}

// dbBackend is, for a sweep that confirms in CometBFT blocks, the database
// the node stores them in (its home is the target's data_dir), so that a
// kept blockstore can be handed to CometBFT's report tool; "" otherwise,
// or where the node's config cannot be read (said on the progress line).
func (r *runner) dbBackend(sw *study.Sweep, l *live) string {
	if sw.Confirm != "cometbft" || l.dataDir == "" {
		return ""
	}
	var env map[string]string
	if l.spec.Start != nil {
		env = l.spec.Start.Env
	}
	b, err := comet.Backend(l.dataDir, env)
	if err != nil {
		r.progress("target %s: %v", l.spec.Name, err)
		return ""
	}
	return b
}
