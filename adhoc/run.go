package adhoc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/fleet"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/results"
)

// Run is one run of tandem load: a target, the options and where the load
// runs (this machine, or the fleet Fleet names).
type Run struct {
	Target  string
	Options Options
	// Given says whether the flag of that name was given (nil: none
	// were); a mix refuses the flags that describe a request.
	Given func(flag string) bool
	// Fleet, when Active, spreads the load over its workers.
	Fleet fleet.Options
	// Version is the coordinator's tandem version (a fleet's workers are
	// held to it).
	Version string
	// Notes hears what opening the load found (a feeder read once) and
	// what the fleet waits for (nil: nobody).
	Notes io.Writer
	// Follow, if not nil, follows a load on this machine as it runs,
	// until the stop it returns is called.
	Follow func(live *load.Live, duration time.Duration, requests int64) (stop func())
	// Profile, if not nil, starts measuring a load on this machine once
	// it is warm (a CPU profile), until the stop it returns is called.
	Profile func() (stop func(), err error)
}

// Outcome is what a run measured: its sample, the parts of a mix, what is
// said of the generator, and why the figures miss a share of the load
// (a fleet's worker lost or failing), if they do.
type Outcome struct {
	Sample          results.Sample
	Parts, Warnings []string
	Short           error
}

// Do checks the run and runs it: an AMQP target's broker load, else the
// load the options' shape names, on this machine (reached and warmed
// first) or on the fleet. Every error is one of the input or of reaching
// the target; a run ctx stopped returns what it measured before with no
// error.
func (r Run) Do(ctx context.Context) (Outcome, error) {
	if _, err := driver.TargetURL(r.Target); err != nil {
		return Outcome{}, err
	}
	if err := Check(r.Options); err != nil {
		return Outcome{}, err
	}
	if b, ok := Broker(r.Target, r.Options); ok {
		if r.Fleet.Active() {
			return Outcome{}, errors.New("--workers, --local-workers: an AMQP load runs on one machine")
		}
		s, err := RunBroker(ctx, b, r.Options)
		if ctx.Err() != nil {
			err = nil
		}
		return Outcome{Sample: s}, err
	}
	if r.Notes == nil {
		r.Notes = io.Discard
	}
	if err := r.mixAlone(); err != nil {
		return Outcome{}, err
	}
	if r.Fleet.Active() {
		if err := OneMachine(r.Options); err != nil {
			return Outcome{}, err
		}
	}
	l, err := Open(ctx, r.Options, r.Notes)
	if err != nil {
		return Outcome{}, err
	}
	defer l.Close()
	if r.Fleet.Active() {
		fr, err := l.RunFleet(ctx, r.Target, r.Fleet, r.Version, func(s string) { fmt.Fprintf(r.Notes, "tandem: fleet: %s\n", s) })
		return Outcome{Sample: fr.Sample, Warnings: fr.Warnings, Short: fr.Short}, err
	}
	return r.here(ctx, l)
}

// here runs the opened load l on this machine.
func (r Run) here(ctx context.Context, l *Load) (Outcome, error) {
	d, err := l.Dial(ctx, r.Target)
	if err != nil {
		return Outcome{}, err
	}
	if c, ok := d.(io.Closer); ok { // a mix's values
		defer c.Close()
	}
	if err := l.Warm(ctx, d); err != nil {
		return Outcome{}, err
	}
	if r.Profile != nil {
		stop, err := r.Profile()
		if err != nil {
			return Outcome{}, err
		}
		defer stop()
	}
	var live *load.Live
	stop := func() {}
	if r.Follow != nil {
		live = &load.Live{}
		stop = r.Follow(live, l.Options().Duration, l.Options().Requests)
	}
	s, warnings, err := l.Run(ctx, d, live)
	stop()
	return Outcome{Sample: s, Parts: l.Parts(), Warnings: warnings}, err
}

// mixAlone refuses, beside a mix, the flags that describe a request: the
// mix file's calls carry theirs.
func (r Run) mixAlone() error {
	if r.Options.MixFile == "" || r.Given == nil {
		return nil
	}
	for _, f := range []string{"data", "jsonrpc", "params", "values", "header", "proto", "import-path", "http2", "insecure", "unit"} {
		if r.Given(f) {
			return fmt.Errorf("--mix and --%s: the mix file's calls carry their requests (docs/study-format.md, Calls)", f)
		}
	}
	return nil
}
