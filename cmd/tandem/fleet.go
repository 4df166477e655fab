package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tandem-bench/tandem/adhoc"
	"github.com/tandem-bench/tandem/fleet"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/runner"
)

// fleetOptions are the flags that spread a load or a study over workers.
type fleetOptions = fleet.Options

func fleetFlags(f *pflag.FlagSet, o *fleetOptions) {
	f.IntVar(&o.Workers, "workers", 0, "spread the load over this many workers that join by themselves (tandem worker --nats URL, or a Kubernetes Job: tandem k8s job)")
	f.IntVar(&o.LocalWorkers, "local-workers", 0, "spread the load over this many worker processes started on this machine")
	f.StringVar(&o.NATS, "nats", "", "with --workers or --local-workers: the NATS server the fleet meets on (default: one embedded in this process, on loopback)")
	f.StringVar(&o.Name, "fleet", "tandem", "with --workers or --local-workers: the fleet's name; workers of another name are not taken")
	f.StringVar(&o.OnLoss, "on-worker-loss", "fail", "with --workers or --local-workers: fail (stop the run) or continue (run to the end without it) when a worker is lost (silent for 10 s); either way tandem load exits 1, its figures missing the lost share")
	f.DurationVar(&o.JoinWait, "join-wait", 2*time.Minute, "with --workers: how long to wait for the workers to join")
	natsAuthFlags(f, &o.Auth)
}

func natsAuthFlags(f *pflag.FlagSet, a *fleet.Auth) {
	f.StringVar(&a.Creds, "nats-creds", "", "with --nats: a NATS credentials file (user JWT and NKey seed)")
	f.StringVar(&a.NKey, "nats-nkey", "", "with --nats: a file holding an NKey seed to authenticate with")
	f.StringVar(&a.CA, "nats-ca", "", "with --nats: the CA certificate(s) to check the server's TLS certificate against (PEM)")
	f.StringVar(&a.Cert, "nats-cert", "", "with --nats: a client certificate for TLS (PEM; with --nats-key)")
	f.StringVar(&a.Key, "nats-key", "", "with --nats: the client certificate's private key (PEM)")
}

// runFleet coordinates a distributed tandem load: it starts (or joins) a
// NATS server, starts the local workers, runs the coordinator and prints
// the tallies added up as tandem load prints one machine's run.
func runFleet(cmd *cobra.Command, target string, l *adhoc.Load, o loadOptions, stdout, stderr io.Writer) error {
	ctx := cmd.Context()
	fo := o.fleet
	if err := fo.Check(); err != nil {
		return badInput(err)
	}
	if o.cpuprofile != "" {
		return badInput(errors.New("--cpuprofile profiles this process: run it on one worker's load instead"))
	}
	n := fo.Count()
	part, err := l.FleetPart(target)
	if err != nil {
		return badInput(err)
	}
	for i := range n { // refuse a split that leaves a worker nothing, before anything starts
		if _, _, err := part.Spec.Split(i, n); err != nil {
			return badInput(fmt.Errorf("%s: %w", o.ShareFlag(), err))
		}
	}
	spec, err := json.Marshal(part)
	if err != nil {
		return err
	}
	m, err := meet(fo, stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	co := m.Coordinator(version)
	co.Spec = spec
	out, runErr := co.Run(ctx)
	if out == nil {
		return badInput(m.Explain(runErr))
	}
	s, warnings := out.Sample(m.Where, fo.OnLoss)
	if err := finish(ctx, stdout, o.format, report.SampleRun{Sample: s, Warnings: warnings}); err != nil {
		return err
	}
	if runErr != nil {
		return &exitError{exitCheckFailed, runErr}
	}
	// with --on-worker-loss continue too: the run went on, but what it
	// measured is not the load asked for (docs/distributed.md, Failures)
	if why := out.Failed(); why != "" && ctx.Err() == nil {
		return &exitError{exitCheckFailed, fmt.Errorf("the run is not whole: %s", why)}
	}
	return nil
}

// meet starts the fleet (fleet.Meet), saying on stderr what it waits for.
func meet(fo fleetOptions, stderr io.Writer) (*fleet.Meeting, error) {
	m, err := fleet.Meet(fo, func(s string) { fmt.Fprintf(stderr, "tandem: fleet: %s\n", s) })
	if errors.As(err, new(*fleet.ServerError)) {
		return nil, badInput(err)
	}
	return m, err
}

// openStudyFleet starts the fleet of tandem run --workers and waits for
// its workers; stop ends it.
func openStudyFleet(ctx context.Context, fo fleetOptions, stderr io.Writer) (*runner.FleetSession, func(), error) {
	if err := fo.Check(); err != nil {
		return nil, nil, badInput(err)
	}
	m, err := meet(fo, stderr)
	if err != nil {
		return nil, nil, err
	}
	sess, err := m.Coordinator(version).Open(ctx)
	if err != nil {
		m.Close()
		return nil, nil, badInput(m.Explain(err))
	}
	stop := func() { sess.Close(); m.Close() }
	return &runner.FleetSession{Session: sess, Where: m.Where, OnLoss: fo.OnLoss}, stop, nil
}

// workerCmd is tandem worker: it joins a fleet and runs its part of the
// next distributed load.
func workerCmd(stderr io.Writer) *cobra.Command {
	var o fleet.JoinOptions
	c := &cobra.Command{
		Use:   "worker",
		Short: "Join a fleet and run a share of a distributed tandem load",
		Long: `worker connects to NATS, joins the coordinator of its fleet (tandem load
--workers N, or --local-workers N), runs its share of the load and streams
what it measures. It serves one run and exits: 0 when its part ran to its
end, 1 when the coordinator stopped it or it lost the coordinator (it stops
its load by itself within 4 s of silence), 2 when it could not join.

Its id defaults to worker-$JOB_COMPLETION_INDEX in a Kubernetes Indexed Job
(tandem k8s job prints one), else HOST-PID.`,
		Example: "  tandem worker --nats nats://10.0.0.5:4222\n  tandem worker --nats nats://nats.load:4222 --fleet nightly --id gen-3",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runtime.GOMAXPROCS(0) < 2 {
				runtime.GOMAXPROCS(2) // a P for an open loop's waits, or the event loop's, beside the rest (see load.Open)
			}
			err := fleet.Join(cmd.Context(), o, version, runner.FleetJob, func(id, s string) { fmt.Fprintf(stderr, "tandem: worker %s: %s\n", id, s) })
			switch {
			case err == nil:
				return nil
			case errors.As(err, new(*fleet.JoinError)) || errors.Is(err, fleet.ErrRefused):
				return badInput(err)
			}
			return &exitError{exitCheckFailed, err}
		},
	}
	f := c.Flags()
	f.StringVar(&o.NATS, "nats", "", "the NATS server the fleet meets on (required)")
	f.StringVar(&o.Name, "fleet", "tandem", "the fleet to join")
	f.StringVar(&o.ID, "id", "", "this worker's name, unique in the run (default worker-$JOB_COMPLETION_INDEX, else HOST-PID)")
	f.DurationVar(&o.Wait, "wait", 10*time.Minute, "how long to wait for a coordinator to take this worker")
	natsAuthFlags(f, &o.Auth)
	return c
}
