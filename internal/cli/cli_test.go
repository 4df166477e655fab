package cli

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
)

func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"init"}, "; did you mean init?"},
		{[]string{"ack", "add"}, "; did you mean ack or add?"},
		{[]string{"a", "b", "c"}, "; did you mean a, b or c?"},
	} {
		if got := DidYouMean(c.names); got != c.want {
			t.Errorf("DidYouMean(%q) = %q; want %q", c.names, got, c.want)
		}
	}
}

// A word outside a choice is refused as the flags are parsed, as bad input
// that names the words, the flag and the command's help; a word inside it
// is taken.
func TestChoice(t *testing.T) {
	run := func(args ...string) (string, error) {
		var got string
		c := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }, SilenceErrors: true, SilenceUsage: true}
		ChoiceVar(c.Flags(), &got, "mode", "warn", "warn or fail", "warn", "fail")
		c.SetFlagErrorFunc(FlagError)
		ArgsAreInput([]*cobra.Command{c})
		c.SetArgs(args)
		return got, c.Execute()
	}
	if got, err := run(); err != nil || got != "warn" {
		t.Errorf("default: %q, %v; want warn", got, err)
	}
	if got, err := run("--mode", "fail"); err != nil || got != "fail" {
		t.Errorf("--mode fail: %q, %v", got, err)
	}
	_, err := run("--mode", "maybe")
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitBadInput || !strings.Contains(err.Error(), `"--mode" flag: want warn or fail (see x --help)`) {
		t.Errorf("--mode maybe: %v; want bad input naming the words and the help", err)
	}
	if _, err := run("--mdoe", "fail"); err == nil || !strings.Contains(err.Error(), "did you mean --mode?") {
		t.Errorf("--mdoe: %v; want the flag it is near", err)
	}
	if _, err := run("extra"); !errors.As(err, &ee) || ee.Code != ExitBadInput || !strings.Contains(err.Error(), "x: unknown command") {
		t.Errorf("an argument to a command that takes none: %v", err)
	}
}

// A run a signal stopped exits with the signal's status and says which;
// one cancelled otherwise with 130; one not stopped keeps its error.
func TestInterruptedExit(t *testing.T) {
	plain := errors.New("boom")
	if err := InterruptedExit(context.Background(), plain); err != plain {
		t.Errorf("not stopped: %v; want the error as it was", err)
	}
	for _, c := range []struct {
		cause error
		code  int
		by    string
	}{
		{Interruption{syscall.SIGINT}, 130, "SIGINT"},
		{Interruption{syscall.SIGTERM}, 143, "SIGTERM"},
		{nil, ExitInterrupted, "cancellation"},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(c.cause)
		for _, in := range []error{nil, plain} {
			var ee *ExitError
			err := InterruptedExit(ctx, in)
			if !errors.As(err, &ee) || ee.Code != c.code || !strings.Contains(err.Error(), "stopped by "+c.by) {
				t.Errorf("cause %v, error %v: %v; want exit %d, stopped by %s", c.cause, in, err, c.code, c.by)
			}
			if in != nil && !errors.Is(err, plain) {
				t.Errorf("cause %v: %v does not wrap the run's error", c.cause, err)
			}
		}
		if got := StoppedBy(ctx); got != c.by {
			t.Errorf("StoppedBy = %q; want %q", got, c.by)
		}
	}
}
