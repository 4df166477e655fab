package metrics

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// connCounter counts a server's open connections through its ConnState
// hook: from accepted to closed, whether or not a request came on them.
type connCounter struct{ open atomic.Int64 }

func (c *connCounter) hook(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		c.open.Add(1)
	case http.StateClosed, http.StateHijacked:
		c.open.Add(-1)
	}
}

// settle waits (at most 10 s, for a busy machine) for the server to see
// every connection closed, and returns how many are still open.
func (c *connCounter) settle() int64 {
	for deadline := time.Now().Add(10 * time.Second); c.open.Load() != 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	return c.open.Load()
}

// shutdownBound bounds a target's Shutdown once no connection is open: it
// returns at once then, so this is a hang guard for a busy machine, kept
// under the 5 s that Shutdown waits for a connection on which no request
// came (the connection these tests are about).
const shutdownBound = 4 * time.Second

// exposition serves one gauge in the text format and counts the scrapes.
func exposition(scrapes *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "cometbft_consensus_height %d\n", scrapes.Add(1))
	})
}

// A target's metrics server shuts down at once after the collector stops:
// the collector's keep-alive connection, idle between scrapes, is closed
// by Stop, not left to the target's Shutdown (which CometBFT had to be
// killed over).
func TestStopLeavesNoConnection(t *testing.T) {
	var conns connCounter
	var scrapes atomic.Int64
	srv := &http.Server{Handler: exposition(&scrapes), ConnState: conns.hook}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer srv.Close()
	c := Start("http://"+ln.Addr().String()+"/metrics", []string{"cometbft_consensus_height"}, 50*time.Millisecond)
	for deadline := time.Now().Add(10 * time.Second); scrapes.Load() < 3 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	m := c.Stop()
	if m.Scrapes < 3 || m.Errors != 0 {
		t.Fatalf("scrapes %d, errors %d (%s)", m.Scrapes, m.Errors, m.LastError)
	}
	if n := conns.settle(); n != 0 {
		t.Errorf("%d connections from the collector still open after Stop", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownBound)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("the target's Shutdown after the collector stopped: %v", err)
	}
	if err := <-served; err != http.ErrServerClosed {
		t.Errorf("Serve: %v", err)
	}
}

// A scrape cancelled while its connection is still being set up (here the
// server holds the TLS handshake, as a busy target may hold its accept)
// must not leave that connection behind: net/http finishes such a dial
// and keeps the connection for a later request, which, never used, is the
// kind of connection Go's Shutdown waits on for 5 s. Stop closes it.
func TestStopClosesAConnectionNeverUsed(t *testing.T) {
	var conns connCounter
	var scrapes atomic.Int64
	var hold atomic.Bool
	held := make(chan struct{})
	release := make(chan struct{})
	var heldOnce sync.Once
	srv := httptest.NewUnstartedServer(exposition(&scrapes))
	srv.Config.ConnState = conns.hook
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes cut short
	srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		if hold.Load() {
			heldOnce.Do(func() { close(held) })
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
		return nil, nil
	}}
	srv.StartTLS()
	defer srv.Close()
	// The collector trusts what the system trusts: make that the server's
	// certificate (read once per process, at the first verification).
	certFile := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", certFile)
	url := srv.URL + "/metrics"
	check := &http.Transport{}
	if _, err := Scrape(context.Background(), &http.Client{Transport: check, Timeout: 5 * time.Second}, url, nil); err != nil {
		t.Fatalf("the system roots were read before this test set them: %v", err)
	}
	check.CloseIdleConnections()
	if n := conns.settle(); n != 0 {
		t.Fatalf("%d connections open before the collector started", n)
	}

	served := scrapes.Load()
	hold.Store(true)
	c := Start(url, []string{"cometbft_consensus_height"}, 200*time.Millisecond)
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the collector did not connect within 10 s")
	}
	m := c.Stop() // the scrape is cancelled mid-handshake
	close(release)
	if m.Scrapes == 0 || scrapes.Load() != served {
		t.Errorf("%d scrapes, %d served; want scrapes cancelled before any was served", m.Scrapes, scrapes.Load()-served)
	}
	if n := conns.settle(); n != 0 {
		t.Errorf("%d connections from the collector still open after Stop", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownBound)
	defer cancel()
	start := time.Now()
	if err := srv.Config.Shutdown(ctx); err != nil {
		t.Errorf("the target's Shutdown after the collector stopped: %v after %v", err, time.Since(start).Round(time.Millisecond))
	}
}

// QueryRange closes its connections to the Prometheus server when it
// returns, instead of leaving them idle in a pool shared by the process.
func TestQueryRangeLeavesNoConnection(t *testing.T) {
	var conns connCounter
	var queries atomic.Int64
	var metadata atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/metadata") { // what the exposition said of the family: nothing here
			metadata.Add(1)
			fmt.Fprint(w, `{"status":"success","data":{}}`)
			return
		}
		queries.Add(1)
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"cometbft_consensus_height","job":"a"},"values":[[1700000000,"1"],[1700000060,"3"]]}]}}`)
	}))
	srv.Config.ConnState = conns.hook
	srv.Start()
	defer srv.Close()
	start := time.Unix(1700000000, 0)
	m := QueryRange(context.Background(), srv.URL, []string{"cometbft_consensus_height", "cometbft_mempool_size"}, map[string]string{"job": "a"}, start, start.Add(time.Minute), time.Second)
	if m.Errors != 0 || len(m.Series) != 2 || queries.Load() != 2 || metadata.Load() != 1 || m.Families != nil {
		t.Fatalf("%d queries, %d metadata, %d errors (%s), series %+v, families %v", queries.Load(), metadata.Load(), m.Errors, m.LastError, m.Series, m.Families)
	}
	if n := conns.settle(); n != 0 {
		t.Errorf("%d connections to the Prometheus server still open after QueryRange returned", n)
	}
}
