package load_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
)

// ctxDialer speaks HTTP/1.1 to addr, one TCP connection per Conn, and holds
// every request to the earlier of its deadline and its context's, as
// drivers built on context deadlines (gRPC, WebSocket) do: a deadline
// already past fails at once with a timeout, even while the context's own
// timer has not yet fired.
type ctxDialer struct{ addr string }

func (d ctxDialer) Dial(ctx context.Context) (load.Conn, error) {
	c := &ctxConn{addr: d.addr}
	if err := c.dial(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

type ctxConn struct {
	addr string
	nc   net.Conn
	br   *bufio.Reader
}

func (c *ctxConn) dial(ctx context.Context) error {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return fmt.Errorf("dial %s: %w", c.addr, err)
	}
	c.nc, c.br = nc, bufio.NewReader(nc)
	return nil
}

func (c *ctxConn) Do(ctx context.Context, _ uint64, deadline time.Time) load.Result {
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	if c.nc == nil {
		if err := c.dial(ctx); err != nil {
			return load.Result{Status: load.TransportStatus(err)}
		}
	}
	res := c.ask(deadline)
	if res.Status != "" {
		c.Close() // a request cut midway leaves the connection unusable
	}
	return res
}

func (c *ctxConn) ask(deadline time.Time) load.Result {
	if err := c.nc.SetDeadline(deadline); err != nil {
		return load.Result{Status: load.TransportStatus(err)}
	}
	if _, err := io.WriteString(c.nc, "GET / HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		return load.Result{Status: load.TransportStatus(err)}
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return load.Result{Status: load.TransportStatus(err)}
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return load.Result{Status: load.TransportStatus(err)}
	}
	if resp.StatusCode != http.StatusOK {
		return load.Result{Status: fmt.Sprintf("http:%d", resp.StatusCode)}
	}
	return load.Result{Units: 1}
}

func (c *ctxConn) Close() error {
	if c.nc == nil {
		return nil
	}
	err := c.nc.Close()
	c.nc = nil
	return err
}

// delayServer starts a real HTTP server on 127.0.0.1:0 that answers every
// request after delay, and returns its address.
func delayServer(t *testing.T, delay time.Duration) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
	}))
	t.Cleanup(ts.Close)
	return strings.TrimPrefix(ts.URL, "http://")
}

// The end of a time-bound run is not a failure: requests in flight when it
// comes, or sent as it passes, are not counted at all, whether the driver
// fails them at the run's deadline (the context's) or carries on. Before,
// a driver that holds a request to its context's deadline turned the
// run's end into "timeout" errors of a few µs each.
func TestRunEndIsNoTimeout(t *testing.T) {
	tooltest.Long(t)
	addr := delayServer(t, 2*time.Millisecond)
	fast, err := httpdrv.New(httpdrv.Options{URL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		name string
		d    load.Dialer
	}{{"context deadline", ctxDialer{addr}}, {"httpdrv", fast}} {
		for round := range 5 {
			start := time.Now()
			s, err := load.Closed{Concurrency: 4, Duration: 300 * time.Millisecond}.Run(context.Background(), d.d)
			if err != nil {
				t.Fatalf("%s: %v", d.name, err)
			}
			// a machine busy enough can let a 300 ms run finish no
			// request: what the end cut is unfinished, never failed
			if s.Errors["timeout"] != 0 || len(s.Errors) != 0 || s.Requests != s.OK || s.OK+s.Unfinished == 0 {
				t.Errorf("%s, round %d: %d requests, %d ok, %d unfinished, errors %v; want every request ok: the run's end is no failure",
					d.name, round+1, s.Requests, s.OK, s.Unfinished, s.Errors)
			}
			if lat := time.Duration(s.LatencyNs.Min); s.OK > 0 && lat < 2*time.Millisecond {
				t.Errorf("%s, round %d: latency min %v against a 2 ms server: a request cut by the run's end was recorded", d.name, round+1, lat)
			}
			if el := time.Since(start); el > 6*time.Second { // a hang guard (300 ms by design)
				t.Errorf("%s, round %d: the 300 ms run took %v", d.name, round+1, el)
			}
			var issued int64
			for _, sec := range s.Series {
				issued += sec.Issued
			}
			if issued != s.Requests {
				t.Errorf("%s, round %d: the series issued %d, the sample counts %d requests", d.name, round+1, issued, s.Requests)
			}
		}
	}
}

// The open loop holds its requests to the run's hard end too: a driver
// that honours the context does not turn it into timeouts.
func TestRunEndIsNoTimeoutOpen(t *testing.T) {
	tooltest.Long(t)
	addr := delayServer(t, 5*time.Millisecond)
	for round := range 3 {
		// 1,000 arrivals a second over one connection answered in 5 ms:
		// the queue grows until the hard end (the schedule's end plus the
		// timeout, 700 ms in) cuts it, about 60 arrivals short; what it
		// cuts is cut (in flight) or dropped (waiting), not failed (a real timeout would take one
		// request 500 ms)
		s, err := load.Open{Schedule: load.Constant{Rate: 1000}, Connections: 1, Duration: 200 * time.Millisecond,
			Timeout: 500 * time.Millisecond}.Run(context.Background(), ctxDialer{addr})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Errors) != 0 || s.Requests != s.OK || s.Requests+s.Unfinished+s.Dropped != 200 || s.Dropped == 0 {
			t.Errorf("open, round %d: %d requests, %d ok, %d dropped, errors %v; want the 200 arrivals sent ok or dropped, none failed",
				round+1, s.Requests, s.OK, s.Dropped, s.Errors)
		}
	}
}

// A request that outlives its own timeout before the run's end still
// fails as a timeout, on either engine and whether the driver holds it to
// its deadline or to its context's.
func TestTimeoutStillCounts(t *testing.T) {
	tooltest.Long(t)
	addr := delayServer(t, 300*time.Millisecond)
	fast, err := httpdrv.New(httpdrv.Options{URL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		run  func() (results.Sample, error)
	}{
		{"context deadline", func() (results.Sample, error) {
			return load.Closed{Concurrency: 2, Duration: 500 * time.Millisecond, Timeout: 50 * time.Millisecond}.Run(context.Background(), ctxDialer{addr})
		}},
		{"httpdrv", func() (results.Sample, error) {
			return load.Closed{Concurrency: 2, Duration: 500 * time.Millisecond, Timeout: 50 * time.Millisecond}.Run(context.Background(), fast)
		}},
		{"event loop", func() (results.Sample, error) {
			return load.Closed{Concurrency: 2, Duration: 500 * time.Millisecond, Timeout: 50 * time.Millisecond, Engine: "loop"}.Run(context.Background(), fast)
		}},
		{"by count", func() (results.Sample, error) {
			return load.Closed{Concurrency: 2, Requests: 4, Timeout: 50 * time.Millisecond}.Run(context.Background(), ctxDialer{addr})
		}},
	} {
		s, err := c.run()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// each worker times out every 50 ms or so (more under load):
		// at least one each, and never an answer
		if s.Errors["timeout"] < 2 || s.OK != 0 || s.Requests != s.Errors["timeout"] {
			t.Errorf("%s: %d requests, %d ok, errors %v; want every request a timeout", c.name, s.Requests, s.OK, s.Errors)
		}
		// a failure is counted, never timed into the latency
		if s.LatencyNs != (results.Distribution{}) || s.ServiceTimeNs != (results.Distribution{}) {
			t.Errorf("%s: latency %+v, service time %+v of failures; want none", c.name, s.LatencyNs, s.ServiceTimeNs)
		}
		// and each takes the 50 ms timeout: 2 workers fit at most 2 × 10 + 2
		// into 500 ms, and 4 by count take at least 100 ms
		if s.Requests > 22 || (s.Requests == 4 && time.Duration(s.DurationNs) < 100*time.Millisecond) {
			t.Errorf("%s: %d timeouts in %v; each takes the 50 ms timeout", c.name, s.Requests, time.Duration(s.DurationNs))
		}
	}
}
