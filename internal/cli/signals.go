package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// WithSignals is ctx with Ctrl-C wired: the first SIGINT or SIGTERM
// cancels it, with an Interruption as its cause, and says so on notices
// (the command stops its targets and writes partial results); a second
// says so on urgent (written at once) and exits with status 130. stop
// undoes it.
func WithSignals(ctx context.Context, notices, urgent io.Writer) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig, ok := <-sigs
		if !ok {
			return
		}
		fmt.Fprintln(notices, "\ntandem: interrupted: stopping targets and writing partial results (press Ctrl-C again to exit at once)")
		cancel(Interruption{sig})
		if _, ok := <-sigs; ok {
			fmt.Fprintln(urgent, "\ntandem: interrupted twice: exiting now")
			os.Exit(ExitInterrupted)
		}
	}()
	return ctx, func() { signal.Stop(sigs); cancel(nil) }
}

// Interruption is the cause of a context cancelled by a signal.
type Interruption struct{ Sig os.Signal }

func (i Interruption) Error() string { return "interrupted by " + SignalName(i.Sig) }

// Code is the exit status after the signal, as a shell reports a process
// the signal ended: 128 plus its number, so 130 after SIGINT and 143 after
// SIGTERM.
func (i Interruption) Code() int {
	if s, ok := i.Sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return ExitInterrupted
}

// SignalName is the conventional name of sig: SIGINT, SIGTERM.
func SignalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// InterruptedCode is the exit status of a command whose ctx was cancelled:
// the signal's (Interruption.Code), else 130.
func InterruptedCode(ctx context.Context) int {
	var in Interruption
	if errors.As(context.Cause(ctx), &in) {
		return in.Code()
	}
	return ExitInterrupted
}

// StoppedBy says what cancelled ctx: "SIGINT", or "cancellation" without a
// signal.
func StoppedBy(ctx context.Context) string {
	var in Interruption
	if errors.As(context.Cause(ctx), &in) {
		return SignalName(in.Sig)
	}
	return "cancellation"
}

// InterruptedExit gives err the exit status of the signal that stopped
// ctx (InterruptedCode), and a run cut short without an error an error
// that says so. Without an interruption it returns err as it is.
func InterruptedExit(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	if err == nil {
		return &ExitError{InterruptedCode(ctx), fmt.Errorf("stopped by %s: the results are what was measured before", StoppedBy(ctx))}
	}
	return &ExitError{InterruptedCode(ctx), fmt.Errorf("stopped by %s: %w", StoppedBy(ctx), err)}
}
