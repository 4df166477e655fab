package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tandem-bench/tandem/fleet"
	"github.com/tandem-bench/tandem/internal/cli"
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

// fleetNote says on stderr what the fleet waits for.
func fleetNote(stderr io.Writer) func(string) {
	return func(s string) { fmt.Fprintf(stderr, "tandem: fleet: %s\n", s) }
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
				return cli.BadInput(err)
			}
			return cli.Failed(err)
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
