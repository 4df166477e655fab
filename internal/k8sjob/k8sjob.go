// Package k8sjob writes the Kubernetes Job that places tandem workers: an
// Indexed Job whose pods each run tandem worker against one NATS server.
// Its manifest is checked against the Kubernetes API's own types by the
// module in apicheck (kept apart: k8s.io/api is large to build).
package k8sjob

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"

	"go.yaml.in/yaml/v3"
)

// Options are tandem k8s job's flags.
type Options struct {
	Workers, BackoffPerIndex       int
	Name, Namespace, Image, NATS   string
	Fleet, CPU, Memory, PullPolicy string
	Deadline, TTL, Wait            time.Duration
}

// ValidName matches a fleet or worker name: letters, digits, - and _ (a
// NATS subject token and a Kubernetes label value).
var ValidName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Write writes the Job's manifest as YAML.
func Write(w io.Writer, o Options) error {
	m, err := Manifest(o)
	if err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("k8s job: %w", err)
	}
	return enc.Close()
}

// Manifest is the Job as YAML-ready maps, in the field names of the
// Kubernetes API (batch/v1 Job); bad options are an error naming the flag.
func Manifest(o Options) (map[string]any, error) {
	var errs []error
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("--workers %d: want 1 or more", o.Workers))
	}
	if o.Image == "" {
		errs = append(errs, errors.New("--image: the container image with tandem in it"))
	}
	if o.NATS == "" {
		errs = append(errs, errors.New("--nats: the NATS server the fleet meets on, as the pods reach it"))
	}
	if !ValidName.MatchString(o.Fleet) {
		errs = append(errs, fmt.Errorf("--fleet %q: want letters, digits, - and _", o.Fleet))
	}
	if o.Deadline < time.Second || o.TTL < 0 || o.Wait <= 0 || o.BackoffPerIndex < 0 {
		errs = append(errs, errors.New("--deadline, --ttl, --wait, --backoff-per-index: want positive values (a deadline of at least 1s)"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	labels := map[string]any{"app.kubernetes.io/name": "tandem", "app.kubernetes.io/component": "worker", "tandem/fleet": o.Fleet}
	meta := map[string]any{"name": o.Name, "labels": labels}
	if o.Namespace != "" {
		meta["namespace"] = o.Namespace
	}
	resources := map[string]any{"cpu": o.CPU, "memory": o.Memory}
	return map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   meta,
		"spec": map[string]any{
			"completionMode":       "Indexed",
			"completions":          o.Workers,
			"parallelism":          o.Workers,
			"backoffLimitPerIndex": o.BackoffPerIndex,
			// a worker that ran and was stopped or lost its coordinator
			// (exit 1) is not retried: the run went on without it
			"podFailurePolicy": map[string]any{"rules": []any{map[string]any{
				"action":      "FailIndex",
				"onExitCodes": map[string]any{"containerName": "worker", "operator": "In", "values": []any{1}},
			}}},
			"activeDeadlineSeconds":   int64(o.Deadline.Seconds()),
			"ttlSecondsAfterFinished": int64(o.TTL.Seconds()),
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"restartPolicy": "Never",
					"containers": []any{map[string]any{
						"name":            "worker",
						"image":           o.Image,
						"imagePullPolicy": o.PullPolicy,
						"args": []any{"worker", "--nats", o.NATS, "--fleet", o.Fleet,
							"--wait", o.Wait.String()},
						// named by its index (worker-N); its host is its node
						"env":       []any{map[string]any{"name": "TANDEM_WORKER_HOST", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "spec.nodeName"}}}},
						"resources": map[string]any{"requests": resources, "limits": resources},
					}},
				},
			},
		},
	}, nil
}
