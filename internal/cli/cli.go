// Package cli is what tandem's commands share beside the library: the
// exit codes and the errors that carry them, usage errors that name the
// command's help and what the mistyped word is near, at every level of a
// cobra tree, and Ctrl-C wired to a context whose cause names the signal.
package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tandem-bench/tandem/internal/human"
)

// Exit codes (README.md).
const (
	ExitOK          = 0
	ExitCheckFailed = 1
	ExitBadInput    = 2
	ExitTarget      = 3
	ExitInterrupted = 130
)

// ExitError carries an exit code with its error.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// BadInput is err as bad input or usage: exit 2.
func BadInput(err error) error { return &ExitError{ExitBadInput, err} }

// Failed is err as a check that failed: exit 1.
func Failed(err error) error { return &ExitError{ExitCheckFailed, err} }

// ArgsAreInput makes a wrong count of arguments to each command bad input
// (exit 2) that names the command and its help, at every level; a command
// that only groups others says an unknown subcommand is one, with the
// names it is near, rather than print its help and exit 0.
func ArgsAreInput(cmds []*cobra.Command) {
	for _, c := range cmds {
		ArgsAreInput(c.Commands())
		c.SuggestionsMinimumDistance = 2
		if c.HasSubCommands() && !c.Runnable() {
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(cmd *cobra.Command, a []string) error {
				if len(a) == 0 {
					return cmd.Help()
				}
				return BadInput(fmt.Errorf("unknown command %q for %q%s (see %s --help)", a[0], cmd.CommandPath(),
					DidYouMean(cmd.SuggestionsFor(a[0])), cmd.CommandPath()))
			}
		}
		if c.Args == nil {
			c.Args = cobra.NoArgs
		}
		args := c.Args
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				hint := ""
				if cmd.HasSubCommands() && len(a) > 0 {
					hint = DidYouMean(cmd.SuggestionsFor(a[0]))
				}
				return BadInput(fmt.Errorf("%s: %w%s (see %s --help)", cmd.CommandPath(), err, hint, cmd.CommandPath()))
			}
			return nil
		}
	}
}

// FlagError is a flag's parse error as bad input, with the flags an
// unknown one is near and the command's help named (cobra's
// SetFlagErrorFunc).
func FlagError(c *cobra.Command, err error) error {
	return BadInput(fmt.Errorf("%w%s (see %s --help)", err, flagSuggestion(c, err), c.CommandPath()))
}

// DidYouMean is "; did you mean A or B?" for the names given, or nothing.
func DidYouMean(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "; did you mean " + human.Or(names) + "?"
}

// flagSuggestion is DidYouMean for an unknown flag: the command's flags
// (its own and inherited) within two edits of it, or that it starts.
func flagSuggestion(c *cobra.Command, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	var near []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && (levenshtein.ComputeDistance(name, f.Name) <= 2 || (len(name) >= 3 && strings.HasPrefix(f.Name, name))) {
			near = append(near, "--"+f.Name)
		}
	})
	return DidYouMean(near)
}

// CPUProfile writes a CPU profile of this process (pprof) to path until
// stop.
func CPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
