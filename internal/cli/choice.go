package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"
	"github.com/tandem-bench/tandem/internal/human"
)

// choice is a string flag that takes one of a few words: any other is
// refused as the flags are parsed (bad input, exit 2, with the command's
// help named).
type choice struct {
	p     *string
	words []string
}

func (c choice) String() string {
	if c.p == nil {
		return ""
	}
	return *c.p
}

func (c choice) Set(s string) error {
	if !slices.Contains(c.words, s) {
		return fmt.Errorf("want %s", human.Or(c.words))
	}
	*c.p = s
	return nil
}

func (c choice) Type() string { return "string" }

// ChoiceVar defines a flag that takes one of words, def by default.
func ChoiceVar(f *pflag.FlagSet, p *string, name, def, usage string, words ...string) {
	*p = def
	f.Var(choice{p, words}, name, usage)
}
