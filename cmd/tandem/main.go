// Command tandem is a side-by-side benchmark and QA harness for network
// services. main only wires signals and exit codes; cli.go holds the
// commands.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		fmt.Fprintln(os.Stderr, "\ntandem: interrupted: stopping targets and writing partial results (press Ctrl-C again to exit at once)")
		cancel()
		<-sigs
		os.Exit(130)
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}
