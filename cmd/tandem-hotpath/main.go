// Command tandem-hotpath sends N requests through tandem's HTTP request hot
// path (driver/httpdrv's Conn.Do, as the load loops call it) to a loopback
// server, in process, so that `tandem cost` can count what one request
// costs the generator. It is the generator's regression guard
// (docs/performance.md).
//
//	tandem-hotpath --requests N                  (a server in process)
//	tandem-hotpath --url http://127.0.0.1:PORT/ --requests N
//	tandem-hotpath --serve 127.0.0.1:PORT        (only the server)
//	tandem-hotpath --serve-h2 127.0.0.1:PORT [--tls]
//	tandem-hotpath --serve-grpc 127.0.0.1:PORT [--messages N] [--tls]
//	tandem-hotpath --floor --requests N
//	tandem-hotpath --open-floor 127.0.0.1:PORT --rate R --connections C --duration D
//
// --floor measures the physical ceiling of a loopback request on this
// machine: one thread writes a request into one end of a loopback TCP
// connection, reads it at the other, writes the answer back and reads it,
// N times. Nobody waits or wakes anybody, so the time per request is
// what the kernel's loopback path costs both ends on one core, the least
// any generator and server pair can spend.
//
// --open-floor measures the floor under an open loop that times every
// arrival on its own: one thread sleeps until each arrival of a constant
// rate, reads what answers came on the connection it will use and writes
// the request, with raw system calls and nothing else (no timing, no
// histogram). The CPU it uses per request, measured outside, is the least
// any generator of that precision spends here (bench/compare.sh open).
//
// --serve runs the minimal HTTP/1.1 server alone, for bench/compare.sh to
// measure generators against a server cheaper than they are. --serve-h2
// runs the minimal HTTP/2 server instead (prior-knowledge h2c), answering
// every stream with "pong"; --serve-grpc runs it as a gRPC server whose
// every answer is N empty messages (default 1) and status OK, which any
// unary (N 1) or server-streaming method accepts. With --tls either speaks
// h2 over TLS with a self-signed certificate for 127.0.0.1 made at start
// (clients must skip verification). Every address must be a loopback one.
//
// With no --url it serves on 127.0.0.1:0 itself: with one P the client
// parks on every read and the server answers, the same path every time, so
// the count per request is steady enough to gate on.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/internal/pong"
)

func main() {
	url := flag.String("url", "", "a loopback HTTP server's URL; default: one in this process")
	n := flag.Int("requests", 1000, "requests to send")
	serve := flag.String("serve", "", "only serve the minimal HTTP/1.1 server on this loopback address")
	serveH2 := flag.String("serve-h2", "", "only serve the minimal HTTP/2 server (h2c) on this loopback address")
	serveGRPC := flag.String("serve-grpc", "", "only serve the minimal gRPC server (h2c) on this loopback address")
	messages := flag.Int("messages", 1, "with --serve-grpc: empty messages in every answer")
	useTLS := flag.Bool("tls", false, "with --serve-h2 or --serve-grpc: h2 over TLS, a self-signed certificate")
	floorRun := flag.Bool("floor", false, "measure the loopback request's floor: both ends on one thread, --requests round trips")
	openFloorAddr := flag.String("open-floor", "", "measure the open loop's floor against the HTTP/1.1 server at this loopback address")
	rate := flag.Int("rate", 10000, "with --open-floor: arrivals per second")
	conns := flag.Int("connections", 32, "with --open-floor: connections")
	dur := flag.Duration("duration", 5*time.Second, "with --open-floor: how long")
	flag.Parse()
	if *openFloorAddr != "" {
		if host, _, err := net.SplitHostPort(*openFloorAddr); err != nil || !net.ParseIP(host).IsLoopback() {
			usage(fmt.Sprintf("--open-floor %q: want a loopback address, 127.0.0.1:PORT", *openFloorAddr))
		}
		sent, answered, lag, err := openFloor(*openFloorAddr, *rate, *conns, *dur)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tandem-hotpath:", err)
			os.Exit(1)
		}
		fmt.Printf("open floor: %d sent at %d/s over %d connections, %d answered, schedule lag p50 %v\n", sent, *rate, *conns, answered, lag)
		return
	}
	if *floorRun {
		per, err := floor(*n)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tandem-hotpath:", err)
			os.Exit(1)
		}
		fmt.Printf("floor: %d round trips, %v per request (both ends, one thread, no wake-ups)\n", *n, per)
		return
	}
	servers := 0
	for _, a := range []string{*serve, *serveH2, *serveGRPC} {
		if a != "" {
			servers++
		}
	}
	switch {
	case servers > 1:
		usage("--serve, --serve-h2 and --serve-grpc: one at a time")
	case *useTLS && *serveH2 == "" && *serveGRPC == "":
		usage("--tls: only with --serve-h2 or --serve-grpc")
	case *messages < 1:
		usage(fmt.Sprintf("--messages %d: want 1 or more", *messages))
	case *messages != 1 && *serveGRPC == "":
		usage("--messages: only with --serve-grpc")
	}
	if *serve != "" {
		pong.Serve(listen("--serve", *serve))
		return
	}
	if *serveH2 != "" || *serveGRPC != "" {
		flagName, addr, o := "--serve-h2", *serveH2, pong.H2Options{}
		if *serveGRPC != "" {
			flagName, addr, o = "--serve-grpc", *serveGRPC, pong.H2Options{GRPC: true, Messages: *messages}
		}
		ln := listen(flagName, addr)
		if *useTLS {
			cfg, err := pong.H2TLSConfig()
			if err != nil {
				fmt.Fprintln(os.Stderr, "tandem-hotpath:", err)
				os.Exit(1)
			}
			ln = tls.NewListener(ln, cfg)
		}
		pong.ServeH2(ln, o)
		return
	}
	if *url == "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "tandem-hotpath:", err)
			os.Exit(1)
		}
		go pong.Serve(ln)
		*url = "http://" + ln.Addr().String() + "/"
	}
	if err := run(*url, *n); err != nil {
		fmt.Fprintln(os.Stderr, "tandem-hotpath:", err)
		os.Exit(1)
	}
}

func usage(msg string) {
	fmt.Fprintln(os.Stderr, "tandem-hotpath:", msg)
	os.Exit(2)
}

// listen listens on addr, given with flagName, which must be a loopback
// address.
func listen(flagName, addr string) net.Listener {
	if host, _, err := net.SplitHostPort(addr); err != nil || !net.ParseIP(host).IsLoopback() {
		usage(fmt.Sprintf("%s %q: want a loopback address, 127.0.0.1:PORT", flagName, addr))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tandem-hotpath:", err)
		os.Exit(1)
	}
	return ln
}

// floor sends n requests through a loopback TCP connection and answers
// them, all on the calling goroutine, and returns the time per request.
func floor(n int) (time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, err
	}
	defer client.Close()
	server, ok := <-accepted
	if !ok {
		return 0, fmt.Errorf("accept failed")
	}
	defer server.Close()
	req := []byte("GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Type: text/plain\r\n\r\npong")
	buf := make([]byte, 4096)
	start := time.Now()
	for range n {
		for _, leg := range [2]struct {
			from, to net.Conn
			b        []byte
		}{{client, server, req}, {server, client, resp}} {
			if _, err := leg.from.Write(leg.b); err != nil {
				return 0, err
			}
			if _, err := io.ReadFull(leg.to, buf[:len(leg.b)]); err != nil {
				return 0, err
			}
		}
	}
	return time.Since(start) / time.Duration(max(n, 1)), nil
}

func run(url string, n int) error {
	c, err := httpdrv.New(httpdrv.Options{URL: url})
	if err != nil {
		return err
	}
	ctx := context.Background()
	cn, err := c.DialConn(ctx)
	if err != nil {
		return err
	}
	defer cn.Close()
	for i := range n {
		if res := cn.Do(ctx, 0, time.Now().Add(10*time.Second)); res.Status != "" {
			return fmt.Errorf("request %d: %s", i+1, res.Status)
		}
	}
	return nil
}
