// Package sample is the built-in sample service that `tandem demo` and the
// tests measure: a small deterministic ledger served over gRPC and JSON-RPC
// with Prometheus metrics, in two builds. Build a follows the conventions;
// build b is a second, honest implementation with the kinds of divergence
// real indexers show. docs/sample.md lists every planted difference.
package sample

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"
)

// Build names one of the sample service's two implementations.
type Build string

// The two builds.
const (
	BuildA Build = "a"
	BuildB Build = "b"
)

// Options configures a sample server. Zero fields take the documented defaults.
type Options struct {
	Build    Build  // "a" or "b"; required
	DataDir  string // where the index is written; required
	GRPCAddr string // gRPC listen address; default 127.0.0.1:0
	HTTPAddr string // JSON-RPC and /metrics listen address; default 127.0.0.1:0
	Seed     uint64 // chain seed; default 1
	Blocks   int    // chain length; default 2000
	// Addresses is the size of the address space; default 300.
	Addresses int
	// Work is the number of hash rounds that verify each block while the
	// index builds; default 6000.
	Work int
	// NoReflection leaves gRPC reflection out: a client needs the
	// service's .proto files, as with many real services.
	NoReflection bool
}

func (o *Options) setDefaults() error {
	if o.Build != BuildA && o.Build != BuildB {
		return fmt.Errorf("build %q: want a or b", o.Build)
	}
	if o.DataDir == "" {
		return errors.New("no data dir")
	}
	if o.GRPCAddr == "" {
		o.GRPCAddr = "127.0.0.1:0"
	}
	if o.HTTPAddr == "" {
		o.HTTPAddr = "127.0.0.1:0"
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Blocks <= 0 {
		o.Blocks = 2000
	}
	if o.Addresses <= 0 {
		o.Addresses = 300
	}
	if o.Work <= 0 {
		o.Work = 6000
	}
	return nil
}

// Server is a running sample service.
type Server struct {
	opts    Options
	store   atomic.Pointer[storeRef]
	indexed atomic.Bool
	metrics *metrics
	mempool *mempool

	grpcLn, httpLn net.Listener
	grpc           *grpc.Server
	http           *http.Server

	cancel context.CancelFunc
	wg     sync.WaitGroup
	errMu  sync.Mutex
	err    error
}

type storeRef struct{ store }

// Start builds or begins building the index and starts serving. Build a
// indexes before it listens, so its first answer is a fast one; build b
// listens at once and answers from a slow path until its index is built.
// Cancelling ctx while build a indexes aborts the start.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, metrics: newMetrics(opts.Build), mempool: newMempool()}
	bg, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	if opts.Build == BuildA {
		ix, err := buildIndex(ctx, opts)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("build index: %w", err)
		}
		s.setIndex(ix)
	} else {
		s.store.Store(&storeRef{scan{seed: opts.Seed, blocks: opts.Blocks, addresses: opts.Addresses}})
	}
	if err := s.listen(); err != nil {
		cancel()
		return nil, err
	}
	if opts.Build == BuildB {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			ix, err := buildIndex(bg, opts)
			if errors.Is(err, context.Canceled) {
				return // closed while indexing
			}
			if err != nil {
				s.fail(fmt.Errorf("build index: %w", err))
				return
			}
			s.setIndex(ix)
		}()
	}
	return s, nil
}

func (s *Server) setIndex(ix *index) {
	s.store.Store(&storeRef{ix})
	s.indexed.Store(true)
	s.metrics.indexed.Set(1)
	s.metrics.height.Set(float64(len(ix.blocks)))
}

func (s *Server) fail(err error) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

func (s *Server) listen() error {
	var err error
	if s.grpcLn, err = net.Listen("tcp", s.opts.GRPCAddr); err != nil {
		return fmt.Errorf("listen grpc: %w", err)
	}
	if s.httpLn, err = net.Listen("tcp", s.opts.HTTPAddr); err != nil {
		s.grpcLn.Close()
		return fmt.Errorf("listen http: %w", err)
	}
	grpcLn, httpLn := s.grpcLn, s.httpLn
	if s.opts.Build == BuildB {
		grpcLn, httpLn = nagleListener{grpcLn}, nagleListener{httpLn}
	}
	s.grpc = grpc.NewServer(
		grpc.ChainUnaryInterceptor(s.metrics.unary),
		grpc.ChainStreamInterceptor(s.metrics.stream),
	)
	ledgerpb.RegisterLedgerServer(s.grpc, &ledgerService{s: s})
	if !s.opts.NoReflection {
		reflection.Register(s.grpc)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /", &jsonrpcHandler{s: s})
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(pong)
	})
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, Protocols: new(http.Protocols)}
	s.http.Protocols.SetHTTP1(true)
	s.http.Protocols.SetUnencryptedHTTP2(true) // h2c, for HTTP/2 clients
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		if err := s.grpc.Serve(grpcLn); err != nil {
			s.fail(fmt.Errorf("serve grpc: %w", err))
		}
	}()
	go func() {
		defer s.wg.Done()
		if err := s.http.Serve(httpLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.fail(fmt.Errorf("serve http: %w", err))
		}
	}()
	return nil
}

var pong = []byte("pong\n")

// GRPCAddr is the address the gRPC API listens on.
func (s *Server) GRPCAddr() string { return s.grpcLn.Addr().String() }

// HTTPAddr is the address JSON-RPC (POST /) and /metrics listen on.
func (s *Server) HTTPAddr() string { return s.httpLn.Addr().String() }

// Indexed reports whether the index is built and in use.
func (s *Server) Indexed() bool { return s.indexed.Load() }

// Err returns the first failure of a background part of the server, if any.
func (s *Server) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Close stops serving, aborts an index build in progress and waits for
// everything the server started to end.
func (s *Server) Close() error {
	s.cancel()
	s.grpc.Stop()
	s.http.Close()
	s.wg.Wait()
	return s.Err()
}

func (s *Server) current() store { return s.store.Load().store }

// nagleListener is build b's listener: it leaves TCP_NODELAY off on
// accepted connections and writes every response in two writes, the pattern
// that meets the client's delayed ACK and stalls for ~40 ms.
type nagleListener struct{ net.Listener }

func (l nagleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		if err := tc.SetNoDelay(false); err != nil {
			c.Close()
			return nil, err
		}
	}
	return splitConn{c}, nil
}

type splitConn struct{ net.Conn }

func (c splitConn) Write(p []byte) (int, error) {
	if len(p) < 2 {
		return c.Conn.Write(p)
	}
	half := len(p) / 2
	n, err := c.Conn.Write(p[:half])
	if err != nil {
		return n, err
	}
	m, err := c.Conn.Write(p[half:])
	return n + m, err
}

type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	indexed  prometheus.Gauge
	height   prometheus.Gauge
}

func newMetrics(build Build) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sample_requests_total", Help: "Requests answered, by API, method and status code.",
		}, []string{"api", "method", "code"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sample_request_duration_seconds", Help: "Time to answer a request.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"api", "method"}),
		indexed: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sample_indexed", Help: "1 once the index is built."}),
		height:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "sample_index_height", Help: "Blocks in the index."}),
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "sample_build_info", Help: "The build that serves.", ConstLabels: prometheus.Labels{"build": string(build)},
	})
	info.Set(1)
	m.reg.MustRegister(m.requests, m.seconds, m.indexed, m.height, info,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(api, method, code string, start time.Time) {
	m.requests.WithLabelValues(api, method, code).Inc()
	m.seconds.WithLabelValues(api, method).Observe(time.Since(start).Seconds())
}
