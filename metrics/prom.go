package metrics

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/tandem-bench/tandem/results"
)

// Selector builds a PromQL series selector: name{k="v",…}, labels in
// order, values quoted.
func Selector(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+strconv.Quote(labels[k]))
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// QueryRange asks a Prometheus server for the named series of one target
// (those carrying labels) over [start, end] at step, and returns them the
// way a Collector would have scraped them. A failed query is counted in
// Errors, not fatal. Its connections to the server are closed when it
// returns.
func QueryRange(ctx context.Context, server string, names []string, labels map[string]string, start, end time.Time, step time.Duration) results.Metrics {
	if len(names) == 0 {
		names = DefaultSeries
	}
	if step <= 0 {
		step = time.Second
	}
	m := results.Metrics{URL: server + " " + Selector("", labels), StartUnixNs: start.UnixNano(), IntervalNs: int64(step), Series: []results.Series{}}
	tr := newTransport() // not the api package's, which would keep idle connections to the server
	defer tr.CloseIdleConnections()
	client, err := api.NewClient(api.Config{Address: server, RoundTripper: tr})
	if err != nil {
		m.Errors, m.LastError = 1, err.Error()
		return m
	}
	q := promv1.NewAPI(client)
	for _, name := range names {
		m.Scrapes++
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		v, _, _, err := q.QueryRange(ctx, Selector(name, labels), promv1.Range{Start: start, End: end, Step: step})
		cancel()
		if err != nil {
			m.Errors++
			m.LastError = fmt.Sprintf("%s: %v", name, err)
			continue
		}
		mat, ok := v.(model.Matrix)
		if !ok {
			m.Errors++
			m.LastError = fmt.Sprintf("%s: a %s, not a range of samples", name, v.Type())
			continue
		}
		for _, ss := range mat {
			if len(m.Series) >= maxSeries {
				break
			}
			s := results.Series{Name: string(ss.Metric[model.MetricNameLabel]), Labels: map[string]string{}}
			for k, v := range ss.Metric {
				if k != model.MetricNameLabel {
					s.Labels[string(k)] = string(v)
				}
			}
			for _, p := range ss.Values {
				s.Points = append(s.Points, [2]float64{float64(p.Timestamp.Time().Sub(start).Nanoseconds()), float64(p.Value)})
			}
			m.Series = append(m.Series, s)
		}
	}
	sort.SliceStable(m.Series, func(i, j int) bool { return m.Series[i].Name < m.Series[j].Name })
	m.Derived = Derive(m, time.Time{}, time.Time{})
	m.Families = families(ctx, q, m.Series)
	return m
}

// families asks the server what the targets' expositions said of the
// series' families (TYPE, HELP, UNIT): a series' own name, and a
// histogram's or summary's (without _bucket, _sum or _count). A family the
// server knows nothing of, or a failed question, is left out: its kind is
// then inferred from its name (Figures).
func families(ctx context.Context, q promv1.API, series []results.Series) map[string]results.MetricFamily {
	out := map[string]results.MetricFamily{}
	asked := map[string]bool{}
	for _, s := range series {
		names := []string{s.Name}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(s.Name, suffix); ok {
				names = append(names, base)
			}
		}
		for _, name := range names {
			if asked[name] {
				continue
			}
			asked[name] = true
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			md, err := q.Metadata(ctx, name, "1")
			cancel()
			if err != nil || len(md[name]) == 0 {
				continue
			}
			d := md[name][0]
			typ := string(d.Type)
			switch typ {
			case "counter", "gauge", "histogram", "gaugehistogram", "summary":
			default:
				typ = "untyped" // unknown, info, stateset
			}
			out[name] = results.MetricFamily{Type: typ, Help: d.Help, Unit: d.Unit}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
