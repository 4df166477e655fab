// Command tandem is a side-by-side benchmark and QA harness for network
// services. main only wires signals and exit codes; cli.go holds the
// commands.
package main

import (
	"context"
	"fmt"
	"github.com/tandem-bench/tandem/progress"
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
// partial results; a second exits at once with status 130. The run's
// context carries the signal as its cause (an interruption), so a command
// can exit with the signal's own status.
func mainWithSignals(args []string, stdout, stderr io.Writer) int {
	if f, ok := stderr.(*os.File); ok {
		stderr = progress.NewConsole(f) // so a live status area can take the notices below
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		sig, ok := <-sigs
		if !ok {
			return
		}
		fmt.Fprintln(stderr, "\ntandem: interrupted: stopping targets and writing partial results (press Ctrl-C again to exit at once)")
		cancel(interruption{sig})
		if _, ok := <-sigs; ok {
			out := stderr
			if f, ok := progress.FileOf(stderr); ok {
				out = f // now, not at the status area's next redraw
			}
			fmt.Fprintln(out, "\ntandem: interrupted twice: exiting now")
			os.Exit(exitInterrupted)
		}
	}()
	return run(ctx, args, stdout, stderr)
}

// interruption is the cause of a run's context cancelled by a signal.
type interruption struct{ sig os.Signal }

func (i interruption) Error() string { return "interrupted by " + signalName(i.sig) }

// code is the exit status after the signal, as a shell reports a process
// the signal ended: 128 plus its number, so 130 after SIGINT and 143 after
// SIGTERM.
func (i interruption) code() int {
	if s, ok := i.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitInterrupted
}

// signalName is the conventional name of sig: SIGINT, SIGTERM.
func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}
