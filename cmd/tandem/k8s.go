package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// jobOptions are tandem k8s job's flags.
type jobOptions struct {
	workers, backoffPerIndex       int
	name, namespace, image, nats   string
	fleet, cpu, memory, pullPolicy string
	deadline, ttl, wait            time.Duration
}

// k8sCmd is tandem k8s: manifests that place workers on Kubernetes.
func k8sCmd(stdout io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "k8s",
		Short: "Print Kubernetes manifests that place tandem workers",
	}
	var o jobOptions
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
			m, err := o.manifest()
			if err != nil {
				return badInput(err)
			}
			enc := yaml.NewEncoder(stdout)
			enc.SetIndent(2)
			if err := enc.Encode(m); err != nil {
				return err
			}
			return enc.Close()
		},
	}
	f := job.Flags()
	f.IntVar(&o.workers, "workers", 3, "pods, one worker each")
	f.StringVar(&o.image, "image", "", "a container image with tandem as its entrypoint's first word (required)")
	f.StringVar(&o.nats, "nats", "", "the NATS server the fleet meets on, as the pods reach it (required)")
	f.StringVar(&o.fleet, "fleet", "tandem", "the fleet's name (tandem load --fleet)")
	f.StringVar(&o.name, "name", "tandem-workers", "the Job's name")
	f.StringVar(&o.namespace, "namespace", "", "the Job's namespace (default: kubectl's)")
	f.StringVar(&o.cpu, "cpu", "1", "CPU each worker requests and is limited to")
	f.StringVar(&o.memory, "memory", "512Mi", "memory each worker requests and is limited to")
	f.StringVar(&o.pullPolicy, "pull-policy", "IfNotPresent", "the image pull policy")
	f.IntVar(&o.backoffPerIndex, "backoff-per-index", 1, "retries of a pod that failed before its run (backoffLimitPerIndex)")
	f.DurationVar(&o.deadline, "deadline", time.Hour, "the Job's whole life (activeDeadlineSeconds)")
	f.DurationVar(&o.ttl, "ttl", time.Hour, "how long the finished Job is kept (ttlSecondsAfterFinished)")
	f.DurationVar(&o.wait, "wait", 10*time.Minute, "how long each worker waits for a coordinator")
	c.AddCommand(job)
	return c
}

// manifest is the Job as YAML-ready maps, in the field names of the
// Kubernetes API (batch/v1 Job).
func (o jobOptions) manifest() (map[string]any, error) {
	var errs []error
	if o.workers < 1 {
		errs = append(errs, fmt.Errorf("--workers %d: want 1 or more", o.workers))
	}
	if o.image == "" {
		errs = append(errs, errors.New("--image: the container image with tandem in it"))
	}
	if o.nats == "" {
		errs = append(errs, errors.New("--nats: the NATS server the fleet meets on, as the pods reach it"))
	}
	if !validFleetName(o.fleet) {
		errs = append(errs, fmt.Errorf("--fleet %q: want letters, digits, - and _", o.fleet))
	}
	if o.deadline < time.Second || o.ttl < 0 || o.wait <= 0 || o.backoffPerIndex < 0 {
		errs = append(errs, errors.New("--deadline, --ttl, --wait, --backoff-per-index: want positive values (a deadline of at least 1s)"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	labels := map[string]any{"app.kubernetes.io/name": "tandem", "app.kubernetes.io/component": "worker", "tandem/fleet": o.fleet}
	meta := map[string]any{"name": o.name, "labels": labels}
	if o.namespace != "" {
		meta["namespace"] = o.namespace
	}
	resources := map[string]any{"cpu": o.cpu, "memory": o.memory}
	return map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   meta,
		"spec": map[string]any{
			"completionMode":       "Indexed",
			"completions":          o.workers,
			"parallelism":          o.workers,
			"backoffLimitPerIndex": o.backoffPerIndex,
			// a worker that ran and was stopped or lost its coordinator
			// (exit 1) is not retried: the run went on without it
			"podFailurePolicy": map[string]any{"rules": []any{map[string]any{
				"action":      "FailIndex",
				"onExitCodes": map[string]any{"containerName": "worker", "operator": "In", "values": []any{1}},
			}}},
			"activeDeadlineSeconds":   int64(o.deadline.Seconds()),
			"ttlSecondsAfterFinished": int64(o.ttl.Seconds()),
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"restartPolicy": "Never",
					"containers": []any{map[string]any{
						"name":            "worker",
						"image":           o.image,
						"imagePullPolicy": o.pullPolicy,
						"args": []any{"worker", "--nats", o.nats, "--fleet", o.fleet,
							"--wait", o.wait.String()},
						// named by its index (worker-N); its host is its node
						"env":       []any{map[string]any{"name": "TANDEM_WORKER_HOST", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "spec.nodeName"}}}},
						"resources": map[string]any{"requests": resources, "limits": resources},
					}},
				},
			},
		},
	}, nil
}
