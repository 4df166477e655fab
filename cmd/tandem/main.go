// Command tandem is a side-by-side benchmark and QA harness for network
// services. main only wires signals and exit codes; cli.go holds the
// commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(mainWithSignals(os.Args[1:], os.Stdout, os.Stderr))
}

// mainWithSignals runs the command line with Ctrl-C wired: the first
// SIGINT or SIGTERM cancels the run, which stops the targets and writes
// partial results; a second exits at once with status 130.
func mainWithSignals(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		fmt.Fprintln(stderr, "\ntandem: interrupted: stopping targets and writing partial results (press Ctrl-C again to exit at once)")
		cancel()
		if _, ok := <-sigs; ok {
			fmt.Fprintln(stderr, "tandem: interrupted twice: exiting now")
			os.Exit(exitInterrupted)
		}
	}()
	return run(ctx, args, stdout, stderr)
}
