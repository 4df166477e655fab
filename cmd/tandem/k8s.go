package main

import (
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/internal/k8sjob"
)

// k8sCmd is tandem k8s: manifests that place workers on Kubernetes.
func k8sCmd(stdout io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "k8s",
		Short: "Print Kubernetes manifests that place tandem workers",
	}
	var o k8sjob.Options
	job := &cobra.Command{
		Use:   "job",
		Short: "Print an Indexed Job of tandem workers for tandem load --workers N --nats URL",
		Long: `job prints a batch/v1 Job of --workers pods, each running tandem worker
against --nats. It is an Indexed Job (completionMode: Indexed): Kubernetes
gives each pod JOB_COMPLETION_INDEX, which names the worker (worker-0, …);
backoffLimitPerIndex retries a pod that failed before it joined, and a
podFailurePolicy fails the index of a worker that exited 1 (stopped, or
lost its coordinator: it is not taken back mid-run); activeDeadlineSeconds bounds the
whole Job; ttlSecondsAfterFinished removes it after.

  tandem k8s job --workers 50 --image registry.example/tandem:v1 --nats nats://nats.load:4222 | kubectl apply -f -
  tandem load http://svc.prod:8080/ --workers 50 --nats nats://nats.load:4222 --rate 500000 --connections 1000 --duration 5m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := k8sjob.Manifest(o); err != nil {
				return cli.BadInput(err)
			}
			return k8sjob.Write(stdout, o)
		},
	}
	f := job.Flags()
	f.IntVar(&o.Workers, "workers", 3, "pods, one worker each")
	f.StringVar(&o.Image, "image", "", "a container image with tandem as its entrypoint's first word (required)")
	f.StringVar(&o.NATS, "nats", "", "the NATS server the fleet meets on, as the pods reach it (required)")
	f.StringVar(&o.Fleet, "fleet", "tandem", "the fleet's name (tandem load --fleet)")
	f.StringVar(&o.Name, "name", "tandem-workers", "the Job's name")
	f.StringVar(&o.Namespace, "namespace", "", "the Job's namespace (default: kubectl's)")
	f.StringVar(&o.CPU, "cpu", "1", "CPU each worker requests and is limited to")
	f.StringVar(&o.Memory, "memory", "512Mi", "memory each worker requests and is limited to")
	f.StringVar(&o.PullPolicy, "pull-policy", "IfNotPresent", "the image pull policy")
	f.IntVar(&o.BackoffPerIndex, "backoff-per-index", 1, "retries of a pod that failed before its run (backoffLimitPerIndex)")
	f.DurationVar(&o.Deadline, "deadline", time.Hour, "the Job's whole life (activeDeadlineSeconds)")
	f.DurationVar(&o.TTL, "ttl", time.Hour, "how long the finished Job is kept (ttlSecondsAfterFinished)")
	f.DurationVar(&o.Wait, "wait", 10*time.Minute, "how long each worker waits for a coordinator")
	f.StringVar(&o.CredsSecret, "nats-creds-secret", "", "a Secret whose key nats.creds is the NATS credentials file the workers authenticate with (mounted read-only; never in the args)")
	c.AddCommand(job)
	return c
}
