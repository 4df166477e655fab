package runner

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/compat"
	"github.com/tandem-bench/tandem/cost"
	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/metrics"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// startMetrics starts scraping every running target that has a metrics
// endpoint; it goes on until stopMetrics, across rounds and cells.
func (r *runner) startMetrics() {
	var names []string
	if m := r.s.Metrics; m != nil {
		names = m.Series
	}
	interval, why, aliases := scrapeInterval(r.s)
	r.scrapeEvery = interval
	r.metricsStart = time.Now()
	scraped := slices.ContainsFunc(r.live, func(l *live) bool { return l.err == nil && l.metrics != "" })
	prom := r.s.Metrics != nil && r.s.Metrics.Prometheus != ""
	if scraped || prom && len(r.s.Targets) > 0 {
		if aliases {
			r.warn(why)
		} else if why != "" {
			r.progress("metrics: every %v (%s)", interval, why)
		}
	}
	if prom {
		return // queried when the run ends
	}
	for _, l := range r.live {
		for _, n := range l.nodes {
			if l.err == nil && n.metrics != "" {
				n.collector = metrics.Start(n.metrics, names, interval)
			}
		}
	}
}

// nodeMetrics is what a target's scrapers have so far (stop: and stops
// them): a group's series each labelled with its node, its counts summed.
// false when nothing is scraped.
func nodeMetrics(l *live, stop bool) (results.Metrics, bool) {
	var out results.Metrics
	found := false
	for _, n := range l.nodes {
		if n.collector == nil {
			continue
		}
		var m results.Metrics
		if stop {
			m = n.collector.Stop()
			n.collector = nil
		} else {
			m = n.collector.Snapshot()
		}
		if l.spec.Group == nil {
			return m, true
		}
		if !found {
			out, found = m, true
			out.URL = l.nodes[0].metrics + " (and each node's)"
			out.Series = nil
		} else {
			out.Scrapes += m.Scrapes
			out.Errors += m.Errors
			if m.LastError != "" {
				out.LastError = n.name + ": " + m.LastError
			}
		}
		for name, f := range m.Families {
			if out.Families == nil {
				out.Families = map[string]results.MetricFamily{}
			}
			out.Families[name] = f // the nodes run one program: what one says of a family, all do
		}
		shift := float64(m.StartUnixNs - out.StartUnixNs) // onto the first scraper's clock
		for _, sr := range m.Series {
			if sr.Name == metrics.Load1 && n != l.nodes[0] {
				continue // the machine's, once
			}
			sr.Labels = maps.Clone(sr.Labels)
			if sr.Labels == nil {
				sr.Labels = map[string]string{}
			}
			sr.Labels["node"] = n.name
			for i := range sr.Points {
				sr.Points[i][0] += shift
			}
			out.Series = append(out.Series, sr)
		}
	}
	if found && l.spec.Group != nil {
		out.Derived = metrics.Derive(out, time.Time{}, time.Time{})
	}
	return out, found
}

// scrapeInterval is the time between metrics scrapes: the study's, else
// 1 s, or a fifth of the shortest batch period (a batched scenario's, or
// a batched sweep's second) where that is shorter, so that a gauge that
// rises with each batch and falls at the next block (a mempool's size) is
// seen, not aliased to the same phase of every period. why says how it
// was chosen, or (aliases) why the study's interval aliases.
func scrapeInterval(s *study.Study) (every time.Duration, why string, aliases bool) {
	var period time.Duration // the shortest batch period, 0 without one
	shorter := func(p time.Duration) {
		if p > 0 && (period == 0 || p < period) {
			period = p
		}
	}
	for _, sc := range s.Scenarios {
		if sc.Load.Batch != nil {
			shorter(sc.Load.Batch.Period)
		}
		if sw := sc.Sweep; sw != nil && sw.Load != study.SweepOpen {
			shorter(time.Second)
		}
	}
	if m := s.Metrics; m != nil && m.Interval > 0 {
		if period > 0 && m.Interval > period/2 {
			return m.Interval, fmt.Sprintf("metrics.interval %v against batches every %v: a gauge that rises with each batch and falls within the period (a mempool's size) is read at one phase of it and may read 0; %v or less sees it",
				m.Interval, period, max(period/5, minScrapeInterval)), true
		}
		return m.Interval, "", false
	}
	if period == 0 || period/5 >= time.Second {
		return time.Second, "", false
	}
	every = max(period/5, minScrapeInterval)
	return every, fmt.Sprintf("a fifth of the %v batch period, so that what rises and falls within a period is seen", period), false
}

// minScrapeInterval bounds how often tandem scrapes by default.
const minScrapeInterval = 50 * time.Millisecond

// stopMetrics stops the scrapers and stores what they scraped; a scrape
// that failed is counted, never fatal.
func (r *runner) stopMetrics() {
	if mc := r.s.Metrics; mc != nil && mc.Prometheus != "" {
		r.queryMetrics(mc)
		return
	}
	for _, l := range r.live {
		m, ok := nodeMetrics(l, true)
		if !ok {
			continue
		}
		l.res.Metrics = &m
		if m.Errors > 0 {
			r.warn(fmt.Sprintf("target %s: %d of %d metrics scrapes failed (last: %s)", l.spec.Name, m.Errors, m.Scrapes, m.LastError))
		}
	}
}

// queryMetrics asks the study's Prometheus server for every target's
// series over the run's window, then derives each sweep cell's figures.
func (r *runner) queryMetrics(mc *study.MetricsConfig) {
	// the server's URL may name environment variables: kept out of what
	// the run prints and writes
	prom, err := r.newExpander("").expand(mc.Prometheus)
	if err != nil {
		r.warn(fmt.Sprintf("metrics.prometheus: %v", err))
		return
	}
	for _, l := range r.live {
		if len(l.spec.MetricsLabels) == 0 {
			continue
		}
		labels := map[string]string{}
		for k, v := range l.spec.MetricsLabels {
			e, err := r.expanders[l.spec.Name].expand(v)
			if err != nil {
				r.warn(fmt.Sprintf("target %s: metrics_labels.%s: %v", l.spec.Name, k, err))
				continue
			}
			labels[k] = e
		}
		// the study's step (default 1 s): a range query answers at most
		// 11,000 points a series, and a query's step does not alias
		m := metrics.QueryRange(context.Background(), prom, mc.Series, labels, r.metricsStart, time.Now(), mc.Interval)
		// the URL as the study writes it (as a command using ${env.*} is shown)
		m.URL = r.secrets.redact(strings.ReplaceAll(m.URL, prom, mc.Prometheus))
		m.LastError = r.secrets.redact(m.LastError)
		l.res.Metrics = &m
		if m.Errors > 0 {
			r.warn(fmt.Sprintf("target %s: %d of %d Prometheus queries failed (last: %s)", l.spec.Name, m.Errors, m.Scrapes, m.LastError))
		}
		for i := range r.res.Sweeps {
			sw := &r.res.Sweeps[i]
			if sw.Target != l.spec.Name {
				continue
			}
			for j := range sw.Cells {
				cellMetrics(&sw.Cells[j], m)
			}
		}
	}
}

// costs counts the study's costs under valgrind; a cost that cannot be
// counted is recorded with its error and a warning.
func (r *runner) costs(ctx context.Context) {
	v, verr := cost.FindValgrind()
	e := r.newExpander(filepath.Join(r.o.Out, "work", "costs"))
	for _, cs := range r.s.Costs {
		if ctx.Err() != nil {
			return
		}
		c := results.Cost{Name: cs.Name, Ops: cs.Ops, Source: "valgrind"}
		if c.Ops == 0 {
			c.Ops = 1000
		}
		argv, err := e.all(cs.Command)
		if err == nil {
			err = verr
		}
		if err == nil {
			r.progress("cost %s: counting %d, %d and %d operations under valgrind", cs.Name, c.Ops, 2*c.Ops, 4*c.Ops)
			vc := *v
			vc.Toggle = cs.ToggleCollect
			for _, k := range slices.Sorted(maps.Keys(cs.Env)) {
				vc.Env = append(vc.Env, k+"="+cs.Env[k])
			}
			var got results.Cost
			if got, err = vc.Measure(ctx, cs.Name, argv, c.Ops); err == nil {
				c = got
			}
		}
		if err != nil {
			c.Error = e.redact(err.Error())
			r.warn(fmt.Sprintf("cost %s: %s", cs.Name, c.Error))
		}
		r.res.Costs = append(r.res.Costs, c)
		if err := r.save(); err != nil {
			r.warn(err.Error())
		}
	}
}

// onlyNonScenarios reports whether --only names startup or compat and no
// scenario, so no round trip needs probing.
func (r *runner) onlyNonScenarios() bool {
	return len(r.o.Only) > 0 && !slices.ContainsFunc(r.o.Only, func(n string) bool { return n != "startup" && n != "compat" && n != "costs" })
}

// compat runs the differential tests against the running targets and
// saves their outcome.
func (r *runner) compat(ctx context.Context) error {
	eps := map[string]map[string]string{}
	for _, l := range r.live {
		if l.err == nil && l.endpoints != nil {
			eps[l.spec.Name] = l.endpoints
		}
	}
	// Oracle URLs may name environment variables; resolve them on a copy.
	s := *r.s
	cs := *s.Compat
	cs.Oracles = map[string]*study.Oracle{}
	e := r.newExpander("") // its values are the run's secrets
	for name, o := range r.s.Compat.Oracles {
		oc := *o
		var err error
		if oc.URL, err = e.expand(o.URL); err != nil {
			return fmt.Errorf("compat.oracles.%s.url: %w", name, err)
		}
		cs.Oracles[name] = &oc
	}
	s.Compat = &cs
	q := driver.NewQuerier(driver.Options{Timeout: r.s.Defaults.Timeout, MaxAnswer: maxAnswer})
	defer q.Close()
	r.progress("compat: %d case entries", len(r.s.Compat.Cases))
	c, err := compat.Run(ctx, &s, compat.Options{Endpoints: eps, Query: q, Progress: r.progress})
	if c != nil {
		r.res.Compat = c
		if err := r.save(); err != nil {
			return err
		}
		differ := 0
		for _, cs := range c.Cases {
			if cs.Agreement != "identical" {
				differ++
			}
		}
		r.progress("compat: %d of %d cases differ from %s; %d fail where agreement is required (--strict exits 1 on those)",
			differ, len(c.Cases), c.Reference, c.Failed)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// maxAnswer bounds one compat answer's body.
const maxAnswer = 64 << 20
