// Package metrics scrapes Prometheus endpoints during a run and derives
// the figures a QA report quotes: per-minute slopes of counters and
// heights, means and maxima of gauges, over the whole run or a window;
// and reads each family by its kind (Figures): a histogram as quantiles
// of the run's observations, a counter as its rate, a gauge as last, mean
// and maximum.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/tandem-bench/tandem/results"
)

// DefaultSeries are kept when a study names none: CometBFT's consensus and
// mempool figures and every process's memory and CPU.
var DefaultSeries = []string{
	"cometbft_consensus_height", "cometbft_consensus_total_txs", "cometbft_consensus_num_txs",
	"cometbft_consensus_rounds", "cometbft_mempool_size", "cometbft_p2p_peers",
	"process_resident_memory_bytes", "process_cpu_seconds_total", "go_goroutines",
}

// Load1 is the series tandem adds itself: the machine's 1-minute load
// average from /proc/loadavg, read at every scrape.
const Load1 = "machine_load1"

// Limits that keep a long run's memory bounded.
const (
	maxSeries = 200
	maxBody   = 32 << 20
	// accept asks for the protobuf exposition first, then text.
	accept = `application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.1`
)

// Sample is one scraped value, with the family it belongs to (a
// histogram's _bucket, _sum and _count samples are its family's).
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
	// Family is the family's name; FamilyInfo what the exposition says of
	// it (its type, HELP and UNIT).
	Family     string
	FamilyInfo results.MetricFamily
}

// familyTypes names dto's metric types as results.MetricFamily does.
var familyTypes = map[dto.MetricType]string{
	dto.MetricType_COUNTER: "counter", dto.MetricType_GAUGE: "gauge", dto.MetricType_HISTOGRAM: "histogram",
	dto.MetricType_SUMMARY: "summary", dto.MetricType_GAUGE_HISTOGRAM: "gaugehistogram", dto.MetricType_UNTYPED: "untyped",
}

// Scrape reads an exposition once (protobuf or text, as the server
// offers) and returns the samples of the named families.
func Scrape(ctx context.Context, client *http.Client, url string, names []string) ([]Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	format := expfmt.ResponseFormat(resp.Header)
	if format.FormatType() == expfmt.TypeUnknown {
		format = expfmt.NewFormat(expfmt.TypeTextPlain)
	}
	dec := expfmt.NewDecoder(io.LimitReader(resp.Body, maxBody), format)
	var out []Sample
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("exposition: %w", err)
		}
		if !slices.Contains(names, mf.GetName()) {
			continue
		}
		vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, &mf)
		if err != nil {
			return out, fmt.Errorf("exposition: %w", err)
		}
		info := results.MetricFamily{Type: familyTypes[mf.GetType()], Help: mf.GetHelp(), Unit: mf.GetUnit()}
		if info.Type == "" {
			info.Type = "untyped"
		}
		for _, s := range vec {
			labels := map[string]string{}
			for k, v := range s.Metric {
				if k != model.MetricNameLabel {
					labels[string(k)] = string(v)
				}
			}
			out = append(out, Sample{Name: string(s.Metric[model.MetricNameLabel]), Labels: labels, Value: float64(s.Value),
				Family: mf.GetName(), FamilyInfo: info})
		}
	}
}

// newTransport is an HTTP transport of tandem's own, with
// http.DefaultTransport's settings, for one collector or one query: its
// connections are tandem's alone, so closing them when done (see
// Collector.Stop) leaves none open to a server that is about to shut down.
// Go's http.Server.Shutdown, for one, closes idle keep-alive connections
// at once but waits up to 5 s for a connection on which no request has
// arrived, such as one that net/http went on dialling for a scrape that was
// cancelled (at Stop, or at the scrape's timeout) and then kept for later.
func newTransport() *http.Transport {
	return http.DefaultTransport.(*http.Transport).Clone()
}

// Collector scrapes one endpoint every interval until stopped.
type Collector struct {
	url       string
	names     []string
	interval  time.Duration
	transport *http.Transport
	client    *http.Client
	start     time.Time

	mu       sync.Mutex
	series   map[string]*results.Series
	families map[string]results.MetricFamily
	order    []string
	scrapes  int
	errors   int
	lastErr  string
	stop     context.CancelFunc
	done     chan struct{}
}

// Start begins scraping url every interval (default 1 s) for the named
// families (default DefaultSeries).
func Start(url string, names []string, interval time.Duration) *Collector {
	if len(names) == 0 {
		names = DefaultSeries
	}
	if interval <= 0 {
		interval = time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	tr := newTransport()
	c := &Collector{url: url, names: names, interval: interval, transport: tr, client: &http.Client{Timeout: interval, Transport: tr},
		start: time.Now(), series: map[string]*results.Series{}, families: map[string]results.MetricFamily{}, stop: cancel, done: make(chan struct{})}
	go c.loop(ctx)
	return c
}

func (c *Collector) loop(ctx context.Context) {
	defer close(c.done)
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		c.once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (c *Collector) once(ctx context.Context) {
	now := time.Now()
	samples, err := Scrape(ctx, c.client, c.url, c.names)
	if load, lerr := load1(); lerr == nil {
		samples = append(samples, Sample{Name: Load1, Labels: map[string]string{}, Value: load})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scrapes++
	if err != nil && ctx.Err() == nil {
		c.errors++
		c.lastErr = err.Error()
	}
	t := now.Sub(c.start).Nanoseconds()
	for _, s := range samples {
		if s.Family != "" {
			c.families[s.Family] = s.FamilyInfo
		}
		key := seriesKey(s.Name, s.Labels)
		sr := c.series[key]
		if sr == nil {
			if len(c.series) >= maxSeries {
				continue
			}
			sr = &results.Series{Name: s.Name, Labels: s.Labels, Points: [][2]float64{}}
			c.series[key] = sr
			c.order = append(c.order, key)
		}
		if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			continue // no value at this scrape (a summary with no observations yet): JSON has no NaN
		}
		sr.Points = append(sr.Points, [2]float64{float64(t), s.Value})
	}
}

func seriesKey(name string, labels map[string]string) string {
	keys := slices.Sorted(maps.Keys(labels))
	var b strings.Builder
	b.WriteString(name)
	for _, k := range keys {
		b.WriteString("\x00" + k + "=" + labels[k])
	}
	return b.String()
}

func load1() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, errors.New("empty /proc/loadavg")
	}
	return strconv.ParseFloat(f[0], 64)
}

// Snapshot returns what was scraped so far, series in first-seen order.
func (c *Collector) Snapshot() results.Metrics {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := results.Metrics{URL: c.url, StartUnixNs: c.start.UnixNano(), IntervalNs: int64(c.interval), Scrapes: c.scrapes,
		Errors: c.errors, LastError: c.lastErr, Series: []results.Series{}}
	for _, k := range c.order {
		s := *c.series[k]
		s.Points = slices.Clone(s.Points)
		m.Series = append(m.Series, s)
	}
	sort.SliceStable(m.Series, func(i, j int) bool { return m.Series[i].Name < m.Series[j].Name })
	m.Derived = Derive(m, time.Time{}, time.Time{})
	if len(c.families) > 0 {
		m.Families = maps.Clone(c.families)
	}
	return m
}

// Stop ends the scraping, closes the collector's connections to the
// endpoint (idle ones, and any still being dialled for a cancelled scrape,
// which would otherwise hold up the target's HTTP server when it shuts
// down) and returns everything scraped. Stop the collector before the
// target; a second Stop returns the same.
func (c *Collector) Stop() results.Metrics {
	c.stop()
	<-c.done
	c.transport.CloseIdleConnections()
	return c.Snapshot()
}
