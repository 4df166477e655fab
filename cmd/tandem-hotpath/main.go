// Command tandem-hotpath sends N requests through tandem's HTTP request hot
// path (driver/httpdrv's Conn.Do, as the load loops call it) to a loopback
// server, in process, so that `tandem cost` can count what one request
// costs the generator. It is the generator's regression guard
// (docs/performance.md).
//
//	tandem-hotpath --requests N                  (a server in process)
//	tandem-hotpath --url http://127.0.0.1:PORT/ --requests N
//	tandem-hotpath --serve 127.0.0.1:PORT        (only the server)
//
// --serve runs the minimal server alone, for bench/compare.sh to measure
// generators against a server cheaper than they are.
//
// With no --url it serves on 127.0.0.1:0 itself: with one P the client
// parks on every read and the server answers, the same path every time, so
// the count per request is steady enough to gate on.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/internal/pong"
)

func main() {
	url := flag.String("url", "", "a loopback HTTP server's URL; default: one in this process")
	n := flag.Int("requests", 1000, "requests to send")
	serve := flag.String("serve", "", "only serve the minimal server on this loopback address")
	flag.Parse()
	if *serve != "" {
		if host, _, err := net.SplitHostPort(*serve); err != nil || !net.ParseIP(host).IsLoopback() {
			fmt.Fprintf(os.Stderr, "tandem-hotpath: --serve %q: want a loopback address, 127.0.0.1:PORT\n", *serve)
			os.Exit(2)
		}
		ln, err := net.Listen("tcp", *serve)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tandem-hotpath:", err)
			os.Exit(1)
		}
		pong.Serve(ln)
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
		if res := cn.Do(ctx, time.Now().Add(10*time.Second)); res.Status != "" {
			return fmt.Errorf("request %d: %s", i+1, res.Status)
		}
	}
	return nil
}
