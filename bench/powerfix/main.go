// Command powerfix is the fixture bench/power.sh measures: an HTTP/1.1
// server on a loopback address whose every answer costs a fixed amount of
// busy work (--work rounds of SHA-256 over 32 bytes), so that a planted
// slowdown is a known share of extra work per request. Two processes with
// the same --work are the same build.
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	work := flag.Int("work", 2000, "rounds of SHA-256 per request")
	flag.Parse()
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || !(host == "localhost" || strings.HasPrefix(host, "127.")) {
		log.Fatalf("powerfix: --addr %q: want a loopback address", *addr)
	}
	if *work < 0 {
		log.Fatalf("powerfix: --work %d: want 0 or more", *work)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintln(os.Stderr, "powerfix: listening on", ln.Addr())
	n := *work
	log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		sum := sha256.Sum256([]byte("tandem power fixture, one request"))
		for range n {
			sum = sha256.Sum256(sum[:])
		}
		fmt.Fprintf(w, "%x\n", sum[:4])
	})))
}
