package cost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Source is what Collect counts: Go benchmark output (Bench, a file, or
// "-" for Stdin), else Command under valgrind.
type Source struct {
	Bench string
	Stdin io.Reader
	// Command has {ops} in its arguments, replaced by 1, Ops, 2·Ops and
	// 4·Ops; Name names its cost (default: the command); Toggle and Env
	// are Valgrind's.
	Command []string
	Ops     int
	Name    string
	Toggle  string
	Env     []string
}

// Collect makes the report of src's costs, its gates not yet checked
// (Check). A command's cost must have an entry in base, if given: that is
// checked before it is counted, which takes minutes.
func Collect(ctx context.Context, src Source, base *Baseline) (*Report, error) {
	rep := &Report{Schema: Schema, Costs: []Cost{}}
	switch {
	case src.Bench != "":
		if len(src.Command) > 0 {
			return nil, errors.New("--bench reads benchmark output; give no command")
		}
		costs, err := readBench(src.Bench, src.Stdin)
		if err != nil {
			return nil, err
		}
		rep.Costs = costs
		return rep, nil
	case len(src.Command) == 0:
		return nil, errors.New("no command: tandem cost -- CMD ARGS… (with {ops} in ARGS), or --bench FILE")
	case src.Ops < 1:
		return nil, fmt.Errorf("--ops %d: want at least 1", src.Ops)
	}
	if _, err := Argv(src.Command, src.Ops); err != nil {
		return nil, err
	}
	name := cmp.Or(src.Name, strings.Join(src.Command, " "))
	if base != nil {
		if err := base.Holds(name, "valgrind", src.Ops); err != nil {
			return nil, fmt.Errorf("%w (--name names the cost)", err)
		}
	}
	v, err := FindValgrind()
	if err != nil {
		return nil, err
	}
	v.Toggle, v.Env = src.Toggle, src.Env
	c, err := v.Measure(ctx, name, src.Command, src.Ops)
	if err != nil {
		return nil, err
	}
	rep.Costs, rep.Valgrind, rep.Flags = []Cost{c}, v.Version, v.Flags()
	return rep, nil
}

// readBench is FromBench of the file at path, or of stdin when path is
// "-".
func readBench(path string, stdin io.Reader) ([]Cost, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return FromBench(path, r)
}
